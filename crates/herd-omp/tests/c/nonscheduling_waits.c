/* nonscheduling_waits.c — a thread waiting where OpenMP has no task
 * scheduling point runs no task (OpenMP 5.2 §12.9: the scheduling points are
 * task creation and completion, taskwait, taskyield, barriers, the end of a
 * taskgroup, and a few target ones). A task started inside such a wait would
 * run in the middle of the waiting code — e.g. inside an iteration of an
 * ordered loop, before its ordered region.
 *
 * Member 0 runs iteration 0 of a schedule(static, 1) loop: it creates tasks,
 * then keeps busy (user code: no scheduling point) for a while, so that the
 * other members are waiting meanwhile
 *  1. for their `ordered` turn (iteration i waits for i - 1's turn), or
 *  2. in `ordered depend(sink: i - 1)` of a doacross loop.
 * Each member marks itself as waiting just before the construct and unmarks
 * itself just after it; each task records whether its thread was marked.
 * No task may run on a marked thread; every task must still run (at the
 * loop's implicit barrier at the latest).
 */
#include "check.h"
#include <time.h>

#define ROUNDS 10
#define TASKS 64
#define MAXT 64

static int waiting[MAXT];
static long violations, ran;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Busy for `s` seconds without any OpenMP call. */
static void busy(double s) {
    double end = now() + s;
    while (now() < end) {
    }
}

static void spawn_tasks(void) {
    for (int k = 0; k < TASKS; k++) {
#pragma omp task
        {
            int t = omp_get_thread_num();
            if (__atomic_load_n(&waiting[t & (MAXT - 1)], __ATOMIC_SEQ_CST))
                __atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
        }
    }
}

static void mark(int me, int v) { __atomic_store_n(&waiting[me & (MAXT - 1)], v, __ATOMIC_SEQ_CST); }

static void ordered_turns(void) {
    violations = ran = 0;
    long expected = 0;
    for (int round = 0; round < ROUNDS; round++) {
#pragma omp parallel shared(expected)
        {
            int n = omp_get_num_threads();
#pragma omp for ordered schedule(static, 1)
            for (int i = 0; i < n; i++) {
                int me = omp_get_thread_num();
                if (i == 0) {
                    spawn_tasks();
                    __atomic_fetch_add(&expected, TASKS, __ATOMIC_RELAXED);
                    busy(0.02);
                }
                mark(me, 1);
#pragma omp ordered
                { mark(me, 0); }
            }
        }
    }
    CHECK_EQ("ordered: every task ran", ran, expected);
    CHECK("ordered: no task ran on a thread waiting for its turn", violations == 0,
          "%ld of %ld tasks ran on a thread waiting in ordered", violations, expected);
}

static void doacross_sinks(void) {
    violations = ran = 0;
    long expected = 0;
    for (int round = 0; round < ROUNDS; round++) {
#pragma omp parallel shared(expected)
        {
            int n = omp_get_num_threads();
#pragma omp for ordered(1) schedule(static, 1)
            for (int i = 0; i < n; i++) {
                int me = omp_get_thread_num();
                if (i == 0) {
                    spawn_tasks();
                    __atomic_fetch_add(&expected, TASKS, __ATOMIC_RELAXED);
                    busy(0.02);
                }
                mark(me, 1);
#pragma omp ordered depend(sink: i - 1)
                mark(me, 0);
#pragma omp ordered depend(source)
            }
        }
    }
    CHECK_EQ("doacross: every task ran", ran, expected);
    CHECK("doacross: no task ran on a thread waiting in depend(sink)", violations == 0,
          "%ld of %ld tasks ran on a thread waiting for a sink", violations, expected);
}

int main(void) {
    check_begin("nonscheduling_waits");
    ordered_turns();
    doacross_sinks();
    return check_done();
}
