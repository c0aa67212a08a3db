/* taskwait_depend.c — OpenMP 5.0 `taskwait depend(...)`: the encountering
 * task waits for exactly the predecessor tasks its dependences name (earlier
 * sibling tasks with conflicting dependences), not for other children. A
 * task that never finishes until released by the encountering task after
 * the taskwait proves the taskwait did not wait for it.
 */
#include "check.h"
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void waits_for_named_only(int nthreads) {
    int a = 0, b = 0, c = 0, release = 0, unrelated_done = 0;
    int a_seen = -1, b_seen = -1, timed_out = 0, in_seen = -1;
#pragma omp parallel shared(a, b, c, release, unrelated_done, a_seen, b_seen, timed_out, in_seen)
#pragma omp single
    {
        /* Unrelated: spins until released after the taskwait when another
         * thread runs it (the waiting thread may run it while it waits: then
         * it just finishes). */
        int creator = omp_get_thread_num();
#pragma omp task shared(release, unrelated_done, timed_out) firstprivate(creator)
        {
            if (nthreads > 1 && omp_get_thread_num() != creator) {
                double t0 = now();
                while (!__atomic_load_n(&release, __ATOMIC_SEQ_CST))
                    if (now() - t0 > 5.0) {
                        __atomic_store_n(&timed_out, 1, __ATOMIC_SEQ_CST);
                        break;
                    }
            }
            __atomic_store_n(&unrelated_done, 1, __ATOMIC_SEQ_CST);
        }
#pragma omp task depend(out : a) shared(a)
        {
            check_spin(2000);
            __atomic_store_n(&a, 1, __ATOMIC_SEQ_CST);
        }
#pragma omp task depend(out : b) shared(b)
        {
            check_spin(1000);
            __atomic_store_n(&b, 1, __ATOMIC_SEQ_CST);
        }
#pragma omp task depend(in : c) shared(c)
        {
            check_spin(1000);
            __atomic_store_n(&c, 1, __ATOMIC_SEQ_CST);
        }
#pragma omp taskwait depend(in : a) depend(inout : b)
        a_seen = __atomic_load_n(&a, __ATOMIC_SEQ_CST);
        b_seen = __atomic_load_n(&b, __ATOMIC_SEQ_CST);
        /* out on c must wait for the reader of c. */
#pragma omp taskwait depend(out : c)
        in_seen = __atomic_load_n(&c, __ATOMIC_SEQ_CST);
        __atomic_store_n(&release, 1, __ATOMIC_SEQ_CST);
#pragma omp taskwait
    }
    CHECK_EQ("taskwait depend(in: a): the writer of a finished", a_seen, 1);
    CHECK_EQ("taskwait depend(inout: b): the writer of b finished", b_seen, 1);
    CHECK_EQ("taskwait depend(out: c): the reader of c finished", in_seen, 1);
    CHECK_EQ("taskwait depend: unrelated task not waited for", timed_out, 0);
    CHECK_EQ("taskwait: everything finished", unrelated_done, 1);
}

/* A chain of dependent tasks, with taskwait depend at each step from a
 * task (not only an implicit one): sees every step done. */
static void chain_in_task(void) {
    int bad = 0;
#pragma omp parallel shared(bad)
#pragma omp single
#pragma omp task shared(bad)
    {
        long x = 0;
        for (int i = 1; i <= 50; i++) {
#pragma omp task depend(inout : x) shared(x) firstprivate(i)
            {
                check_spin(50);
                x += i;
            }
            if (i % 10 == 0) {
#pragma omp taskwait depend(in : x)
                if (x != (long)i * (i + 1) / 2) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
            }
        }
    }
    CHECK_EQ("taskwait depend in a task: chain steps done", bad, 0);
}

int main(void) {
    check_begin("taskwait_depend");
    int n = 0;
#pragma omp parallel
#pragma omp single
    n = omp_get_num_threads();
    waits_for_named_only(n);
    chain_in_task();
    return check_done();
}
