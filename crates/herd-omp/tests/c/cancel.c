/* cancel.c — cancellation (OMP_CANCELLATION): cancel parallel (members leave
 * at cancellation points and cancellable barriers, mixed; the canceller skips
 * the rest; the next region works), cancel for (static and dynamic; not all
 * iterations run; the team goes on; later loops are not cancelled), cancel
 * sections, cancel taskgroup (tasks created after it do not run, running ones
 * see cancellation points, queued ones are discarded, nested groups), and
 * omp_get_cancellation.  With OMP_CANCELLATION unset every cancel is a no-op
 * and everything runs.
 */
#include "check.h"
#include <stdbool.h>
#include <time.h>

/* libgomp's ABI, called directly as a probe from code that gcc does not
 * treat as a cancellation region (8: taskgroup). */
extern bool GOMP_cancellation_point(int which);

static int on;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void wait_for(int *flag, int want, double secs) {
    double end = now() + secs;
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < want && now() < end) {
    }
}

static void check_next_region(const char *name) {
    int nt = 0, sum = 0, bar = 0;
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp single
        nt = omp_get_num_threads();
#pragma omp for schedule(dynamic, 3)
        for (int i = 0; i < 1000; i++) sum += 1;
        __atomic_fetch_add(&bar, 1, __ATOMIC_RELAXED);
#pragma omp barrier
        if (__atomic_load_n(&bar, __ATOMIC_RELAXED) != nt) __atomic_fetch_add(&bar, 1000, __ATOMIC_RELAXED);
    }
    CHECK(name, sum == 1000 && bar == nt && nt == env_long("OMP_NUM_THREADS", nt), "sum %d bar %d threads %d",
          sum, bar, nt);
}

static void cancel_parallel(void) {
    for (int rep = 0; rep < 20; rep++) {
        int after_cancel = 0, past = 0, nt = 0, reached_end = 0;
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            if (t == 0) nt = omp_get_num_threads();
            if (t == 0) {
                if (rep % 4 == 0) usleep(2000);
#pragma omp cancel parallel
                __atomic_fetch_add(&after_cancel, 1, __ATOMIC_RELAXED);
            } else if (t % 2 == 0) {
                double end = now() + (on ? 5.0 : 0.0);
                while (now() < end) {
#pragma omp cancellation point parallel
                    check_spin(100);
                }
                if (on) __atomic_fetch_add(&reached_end, 1, __ATOMIC_RELAXED);
            }
#pragma omp barrier
            __atomic_fetch_add(&past, 1, __ATOMIC_RELAXED);
        }
        if (on) {
            CHECK("parallel.canceller_skips", after_cancel == 0, "rep %d: %d", rep, after_cancel);
            CHECK("parallel.members_leave", past == 0 && reached_end == 0, "rep %d: past %d reached_end %d", rep,
                  past, reached_end);
        } else {
            CHECK("parallel.noop", after_cancel == 1 && past == nt, "rep %d: after %d past %d of %d", rep,
                  after_cancel, past, nt);
        }
        check_next_region("parallel.next_region");
    }
}

#define N 20000
static int ran[N];

static void cancel_for(void) {
    for (int rep = 0; rep < 12; rep++) {
        int count = 0, count2 = 0, after = 0, nt = 0;
        memset(ran, 0, sizeof ran);
#pragma omp parallel
        {
#pragma omp single
            nt = omp_get_num_threads();
            if (rep % 2 == 0) {
#pragma omp for schedule(dynamic, 2)
                for (int i = 0; i < N; i++) {
                    if (i == 10) {
#pragma omp cancel for
                    }
#pragma omp cancellation point for
                    ran[i] = 1;
                    __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
                    check_spin(200);
                }
            } else {
#pragma omp for schedule(static)
                for (int i = 0; i < N; i++) {
                    if (i % (N / 4) == 5) {
#pragma omp cancel for
                    }
#pragma omp cancellation point for
                    ran[i] = 1;
                    __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
                    check_spin(200);
                }
            }
            __atomic_fetch_add(&after, 1, __ATOMIC_RELAXED);
            /* Later loops (the ring's entries reused) are not cancelled. */
            for (int k = 0; k < 10; k++) {
#pragma omp for schedule(dynamic, 7)
                for (int i = 0; i < 1000; i++) {
#pragma omp cancellation point for
                    __atomic_fetch_add(&count2, 1, __ATOMIC_RELAXED);
                }
            }
        }
        CHECK_EQ("for.team_goes_on", after, nt);
        CHECK_EQ("for.later_loops_complete", count2, 10 * 1000);
        if (on)
            CHECK("for.cancelled", count < N && ran[rep % 2 == 0 ? 10 : 5] == 0, "rep %d: %d of %d ran", rep, count, N);
        else
            CHECK_EQ("for.noop", count, N);
    }
}

static void cancel_sections(void) {
    for (int rep = 0; rep < 10; rep++) {
        int after = 0, done = 0, here = 0;
#pragma omp parallel
#pragma omp sections
        {
#pragma omp section
            {
                __atomic_store_n(&here, 1, __ATOMIC_RELEASE);
#pragma omp cancel sections
                __atomic_fetch_add(&after, 1, __ATOMIC_RELAXED);
            }
#pragma omp section
            {
                if (omp_get_num_threads() > 1) wait_for(&here, 1, 2.0);
                usleep(2000);
#pragma omp cancellation point sections
                __atomic_fetch_add(&done, 1, __ATOMIC_RELAXED);
            }
#pragma omp section
            {
                if (omp_get_num_threads() > 1) wait_for(&here, 1, 2.0);
                usleep(2000);
#pragma omp cancellation point sections
                __atomic_fetch_add(&done, 1, __ATOMIC_RELAXED);
            }
#pragma omp section
            {
                if (omp_get_num_threads() > 1) wait_for(&here, 1, 2.0);
                usleep(2000);
#pragma omp cancellation point sections
                __atomic_fetch_add(&done, 1, __ATOMIC_RELAXED);
            }
        }
        if (on)
            CHECK("sections.cancelled", after == 0 && done == 0, "rep %d: after %d done %d", rep, after, done);
        else
            CHECK("sections.noop", after == 1 && done == 3, "rep %d: after %d done %d", rep, after, done);
    }
    check_next_region("sections.next_region");
}

static void cancel_taskgroup(void) {
    /* Tasks created after the cancellation do not run. */
    int late = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
    {
#pragma omp task
        {
#pragma omp cancel taskgroup
        }
#pragma omp taskwait
        for (int i = 0; i < 50; i++) {
#pragma omp task
            __atomic_fetch_add(&late, 1, __ATOMIC_RELAXED);
        }
    }
    CHECK_EQ("taskgroup.late_tasks", late, on ? 0 : 50);

    /* A running task sees its cancellation points true. */
    int started = 0, reached_end = 0, cancelled_it = 0, nt = 1;
#pragma omp parallel
#pragma omp single
    {
        nt = omp_get_num_threads();
        if (nt > 1) {
#pragma omp taskgroup
            {
#pragma omp task
                {
                    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
                    double end = now() + (on ? 5.0 : 0.0);
                    while (now() < end) {
#pragma omp cancellation point taskgroup
                        check_spin(100);
                    }
                    if (on) __atomic_store_n(&reached_end, 1, __ATOMIC_RELAXED);
                }
#pragma omp task
                {
                    wait_for(&started, 1, 3.0);
                    cancelled_it = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
#pragma omp cancel taskgroup
                }
            }
        }
    }
    if (nt > 1 && on && cancelled_it) CHECK_EQ("taskgroup.running_task_leaves", reached_end, 0);

    /* Queued tasks that had not started when the group was cancelled are
     * discarded: few start after it (a task that started just before can
     * see the cancellation at its first statement, at most one a thread). */
    int created = 0, hint = 0, ran = 0, saw = 0;
#pragma omp parallel
#pragma omp single
    {
        nt = omp_get_num_threads();
#pragma omp taskgroup
        {
#pragma omp task
            {
                if (omp_get_num_threads() > 1) wait_for(&created, 20, 2.0);
                __atomic_store_n(&hint, 1, __ATOMIC_RELEASE);
#pragma omp cancel taskgroup
            }
            for (int i = 0; i < 20; i++) {
#pragma omp task
                {
                    if (GOMP_cancellation_point(8)) __atomic_fetch_add(&saw, 1, __ATOMIC_RELAXED);
                    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
                }
                __atomic_fetch_add(&created, 1, __ATOMIC_RELEASE);
            }
            if (nt > 1) {
                wait_for(&hint, 1, 2.0);
                usleep(5000);
            }
        }
    }
    if (on)
        CHECK("taskgroup.discards_queued", saw <= nt, "%d tasks started after the cancellation (%d ran)", saw, ran);
    else
        CHECK("taskgroup.noop", ran == 20 && saw == 0, "ran %d saw %d", ran, saw);

    /* Nested: cancelling the inner group leaves the outer one alone. */
    int inner_late = 0, outer_ok = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
    {
#pragma omp task
        {
#pragma omp taskgroup
            {
#pragma omp task
                {
#pragma omp cancel taskgroup
                }
#pragma omp taskwait
#pragma omp task
                __atomic_fetch_add(&inner_late, 1, __ATOMIC_RELAXED);
            }
#pragma omp task
            __atomic_fetch_add(&outer_ok, 1, __ATOMIC_RELAXED);
        }
    }
    CHECK("taskgroup.nested", inner_late == (on ? 0 : 1) && outer_ok == 1, "inner_late %d outer_ok %d", inner_late,
          outer_ok);

    /* Inside a worksharing construct with reduction(task, ...), whose
     * implicit taskgroup is not a taskgroup construct, `cancel taskgroup`
     * cancels the enclosing taskgroup: tasks created after the loop in it do
     * not run (libgomp's cancel-taskgroup-3). */
    int a = 0, after = 0;
#pragma omp parallel shared(a, after)
#pragma omp taskgroup
    {
#pragma omp for reduction(task, + : a)
        for (int i = 0; i < 16; i++) {
            a++;
#pragma omp task in_reduction(+ : a)
            {
                a += 0;
#pragma omp cancel taskgroup
            }
        }
#pragma omp task
        __atomic_fetch_add(&after, 1, __ATOMIC_RELAXED);
    }
    CHECK("taskgroup.cancel_in_reduction_loop", a == 16 && (on ? after == 0 : after > 0), "a %d after %d", a, after);
    check_next_region("taskgroup.next_region");
}

int main(void) {
    check_begin("cancel");
    const char *e = getenv("OMP_CANCELLATION");
    int want = e && (!strcasecmp(e, "true") || !strcmp(e, "1"));
    on = omp_get_cancellation();
    CHECK_EQ("omp_get_cancellation", on, want);
    cancel_parallel();
    cancel_for();
    cancel_sections();
    cancel_taskgroup();
    return check_done();
}
