/* task_constraint.c — the task scheduling constraint (OpenMP 5.2 §13.10):
 * while a tied task is suspended in taskwait or at the end of a taskgroup,
 * its thread may start only descendants of that task. Every task still runs
 * (threads at a barrier may run any task of the team).
 *
 *  1. taskgroup: every member fills its own taskgroup with tasks; a thread
 *     still inside its taskgroup never starts another member's task.
 *  2. taskwait: explicit tasks, each with children, each waiting for them; a
 *     thread suspended in task A's taskwait starts only A's children.
 *  3. a lock held across a taskwait: parents take one lock, create children
 *     and wait for them before releasing it. Starting another parent inside
 *     the taskwait would take the lock the suspended task holds — a
 *     deadlock; the lock is tried with a deadline so that such a runtime
 *     fails this check instead of hanging.
 *  4. orphans: tasks that end before their descendants (no taskwait), three
 *     levels deep, inside each member's taskgroup, whose end admits them
 *     through ancestors that have already finished (the ancestry test must
 *     not read freed tasks); innermost tasks wait for a child of their own.
 */
#include "check.h"
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void work(int n) {
    volatile double x = 0;
    for (int i = 0; i < n; i++) x += i * 0.5;
}

/* 1 while the member of that number is inside its taskgroup. */
static int in_group[64];

static void taskgroups(void) {
    long violations = 0, ran = 0, expected = 0;
    for (int round = 0; round < 50; round++) {
#pragma omp parallel shared(violations, ran, expected)
        {
            int me = omp_get_thread_num();
            __atomic_store_n(&in_group[me & 63], 1, __ATOMIC_SEQ_CST);
#pragma omp taskgroup
            for (int k = 0; k < 16; k++) {
                __atomic_fetch_add(&expected, 1, __ATOMIC_RELAXED);
#pragma omp task firstprivate(me) shared(violations, ran)
                {
                    int t = omp_get_thread_num();
                    if (t != me && __atomic_load_n(&in_group[t & 63], __ATOMIC_SEQ_CST))
                        __atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED);
                    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
                    work(20000 + 5000 * (me & 3));
                }
            }
            __atomic_store_n(&in_group[me & 63], 0, __ATOMIC_SEQ_CST);
        }
    }
    CHECK("taskgroup: no other member's task started inside a taskgroup", violations == 0,
          "%ld tasks started by a thread inside its own taskgroup", violations);
    CHECK_EQ("taskgroup: every task ran", ran, expected);
}

/* The parent whose taskwait the thread is suspended in (-1: none). */
static int waiting_in = -1;
#pragma omp threadprivate(waiting_in)

#define PARENTS 64
#define CHILDREN 8

static void taskwaits(void) {
    long violations = 0, ran = 0;
#pragma omp parallel shared(violations, ran)
#pragma omp single
    for (int p = 0; p < PARENTS; p++) {
#pragma omp task firstprivate(p) shared(violations, ran)
        {
            if (waiting_in != -1) __atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED);
            for (int c = 0; c < CHILDREN; c++) {
#pragma omp task firstprivate(p) shared(violations, ran)
                {
                    if (waiting_in != -1 && waiting_in != p) __atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED);
                    work(30000);
                    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
                }
            }
            int saved = waiting_in;
            waiting_in = p;
#pragma omp taskwait
            waiting_in = saved;
            __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
        }
    }
    CHECK("taskwait: only the waiting task's children started inside it", violations == 0,
          "%ld foreign tasks started inside a taskwait", violations);
    CHECK_EQ("taskwait: every task ran", ran, (long)PARENTS * (CHILDREN + 1));
}

static void lock_across_taskwait(void) {
    omp_lock_t lock;
    omp_init_lock(&lock);
    long stuck = 0, ran = 0;
#pragma omp parallel shared(stuck, ran, lock)
#pragma omp single
    for (int p = 0; p < 16; p++) {
#pragma omp task shared(stuck, ran, lock)
        {
            int got = 0;
            double t0 = now();
            while (!(got = omp_test_lock(&lock)) && now() - t0 < 2.0) {
#pragma omp taskyield
            }
            if (!got) __atomic_fetch_add(&stuck, 1, __ATOMIC_RELAXED);
            for (int c = 0; c < 4; c++) {
#pragma omp task shared(ran)
                {
                    work(20000);
                    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
                }
            }
#pragma omp taskwait
            if (got) omp_unset_lock(&lock);
        }
    }
    omp_destroy_lock(&lock);
    CHECK("lock held across taskwait: no task waited 2 s for it", stuck == 0,
          "%ld tasks found the lock held by a task suspended on their own thread", stuck);
    CHECK_EQ("lock held across taskwait: every child ran", ran, 64L);
}

static void orphans(void) {
    long ran = 0, expected = 0;
    for (int round = 0; round < 20; round++) {
#pragma omp parallel shared(ran, expected)
        {
            __atomic_fetch_add(&expected, 8 * (1 + 4 * (1 + 2 * 2)), __ATOMIC_RELAXED);
#pragma omp taskgroup
            for (int a = 0; a < 8; a++) {
#pragma omp task shared(ran)
                {
                    for (int b = 0; b < 4; b++) {
#pragma omp task shared(ran)
                        {
                            for (int c = 0; c < 2; c++) {
#pragma omp task shared(ran)
                                {
                                    work(2000);
#pragma omp task shared(ran)
                                    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
#pragma omp taskwait
                                    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
                                }
                            }
                            __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
                        }
                    }
                    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
                }
            }
        }
    }
    CHECK_EQ("orphans: every task ran once", ran, expected);
}

int main(void) {
    check_begin("task_constraint");
    taskgroups();
    taskwaits();
    lock_across_taskwait();
    orphans();
    return check_done();
}
