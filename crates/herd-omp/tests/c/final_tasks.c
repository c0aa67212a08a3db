/* final_tasks.c — final(expr) tasks (OpenMP 4.0 §2.13.1): a final task is a
 * task like any other (deferrable, so a loop of final tasks spreads over the
 * team), omp_in_final() is true inside it, and every task it creates (at any
 * depth) is included: run at once by the same thread, finished before the
 * creating construct returns. final(0) changes nothing.
 */
#include "check.h"
#include <time.h>

#define NT 64

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Final tasks created by one thread run on several threads at once: each
 * task announces itself and waits until two are running at once (bounded by
 * a timeout, so a runtime running final tasks serially fails instead of
 * hanging). */
static void final_tasks_spread(int nthreads) {
    int running = 0, met = 0, in_final = 0, timeouts = 0;
    int threads_used = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < NT; i++) {
#pragma omp task final(1) shared(running, met, in_final, timeouts, threads_used)
        {
            if (omp_in_final()) __atomic_fetch_add(&in_final, 1, __ATOMIC_RELAXED);
            __atomic_fetch_or(&threads_used, 1 << (omp_get_thread_num() & 15), __ATOMIC_RELAXED);
            __atomic_fetch_add(&running, 1, __ATOMIC_SEQ_CST);
            /* Wait until two are running at once (then nobody waits any
             * more), or give up after a timeout (then nobody waits either). */
            double t0 = now();
            while (!__atomic_load_n(&met, __ATOMIC_SEQ_CST) && !__atomic_load_n(&timeouts, __ATOMIC_SEQ_CST)) {
                if (__atomic_load_n(&running, __ATOMIC_SEQ_CST) >= 2)
                    __atomic_store_n(&met, 1, __ATOMIC_SEQ_CST);
                else if (now() - t0 > 2.0)
                    __atomic_store_n(&timeouts, 1, __ATOMIC_SEQ_CST);
            }
            check_spin(100);
            __atomic_fetch_sub(&running, 1, __ATOMIC_SEQ_CST);
        }
    }
    CHECK_EQ("final tasks: omp_in_final() inside", in_final, NT);
    if (nthreads > 1) {
        CHECK("final tasks run concurrently", met == 1 && timeouts == 0, "met %d, timed out %d", met, timeouts);
        CHECK("final tasks spread over the team", __builtin_popcount(threads_used) > 1, "threads mask %#x",
              threads_used);
    }
}

/* Descendants of a final task are included: same thread, done before the
 * task construct returns, omp_in_final() true at every depth; a taskwait in
 * them has nothing to wait for. */
static void descendants_included(void) {
    int bad_thread = 0, not_final = 0, not_done = 0, ran = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < 16; i++) {
#pragma omp task final(i % 2 == 0) shared(bad_thread, not_final, not_done, ran)
        {
            int me = omp_get_thread_num();
            int fin = omp_in_final();
            if (fin != (i % 2 == 0)) __atomic_fetch_add(&not_final, 1, __ATOMIC_RELAXED);
            if (fin) {
                for (int j = 0; j < 4; j++) {
                    int done = 0;
#pragma omp task shared(done, bad_thread, not_final, ran)
                    {
                        if (omp_get_thread_num() != me) __atomic_fetch_add(&bad_thread, 1, __ATOMIC_RELAXED);
                        if (!omp_in_final()) __atomic_fetch_add(&not_final, 1, __ATOMIC_RELAXED);
                        int inner = 0;
#pragma omp task shared(inner) /* grandchild: included too */
                        {
                            if (omp_get_thread_num() != me) __atomic_fetch_add(&bad_thread, 1, __ATOMIC_RELAXED);
                            if (!omp_in_final()) __atomic_fetch_add(&not_final, 1, __ATOMIC_RELAXED);
                            check_spin(50);
                            inner = 1;
                        }
                        if (!inner) __atomic_fetch_add(&not_done, 1, __ATOMIC_RELAXED);
                        __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
                        done = 1;
                    }
                    /* Included: finished when the construct returns. */
                    if (!done) __atomic_fetch_add(&not_done, 1, __ATOMIC_RELAXED);
                }
            }
        }
    }
    CHECK_EQ("final descendants: same thread", bad_thread, 0);
    CHECK_EQ("final descendants: omp_in_final() / final(expr)", not_final, 0);
    CHECK_EQ("final descendants: done at the construct", not_done, 0);
    CHECK_EQ("final descendants: all ran", ran, 8 * 4);
}

/* A recursive task tree whose deeper levels are final (a cut-off): the
 * result is right and the final subtrees run included. */
static long fib(int n, int depth) {
    if (n < 2) return n;
    long a = 0, b = 0;
#pragma omp task shared(a) final(depth >= 3)
    a = fib(n - 1, depth + 1);
#pragma omp task shared(b) final(depth >= 3)
    b = fib(n - 2, depth + 1);
#pragma omp taskwait
    return a + b;
}

static void final_cutoff(void) {
    long r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(20, 0);
    CHECK_EQ("final cut-off: fib(20)", r, 6765);
}

int main(void) {
    check_begin("final_tasks");
    int n = 0;
#pragma omp parallel
#pragma omp single
    n = omp_get_num_threads();
    final_tasks_spread(n);
    descendants_included();
    final_cutoff();
    return check_done();
}
