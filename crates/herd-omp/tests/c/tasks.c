/* tasks.c — explicit tasks: fib with task + taskwait (exact task counts),
 * taskwait (children complete; grandchildren are NOT checked, a runtime may
 * legally finish them early or late), taskgroup (all descendants), if(0)
 * (undeferred: done when the construct completes, and done without waiting
 * for the deferred children it created), final (omp_in_final() in
 * the final task and its included descendants, which run immediately),
 * mergeable, untied, priority, firstprivate capture (creation-time values, a
 * large over-aligned struct), depend chains / diamonds / readers-writer /
 * array elements / pipelines, depend + if(0), taskyield, tasks completed by
 * barriers, tasks created by every thread, and taskloop (default, grainsize,
 * num_tasks, nogroup, lastprivate, collapse, long and unsigned long long).
 */
#include "check.h"
#include <stdint.h>
#include <unistd.h>

#define MAXT 64
typedef unsigned long long ull;

/* ---- fib ---------------------------------------------------------------- */

static int created, ran;

static long fib(int n) {
    if (n < 2) return n;
    long a, b;
#pragma omp task shared(a)
    {
        __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
        a = fib(n - 1);
    }
#pragma omp task shared(b)
    {
        __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
        b = fib(n - 2);
    }
    __atomic_fetch_add(&created, 2, __ATOMIC_RELAXED);
#pragma omp taskwait
    return a + b;
}

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }
static long tasks_expected(int n) { return n < 2 ? 0 : 2 + tasks_expected(n - 1) + tasks_expected(n - 2); }

static void fib_checks(void) {
    const int n = 18;
    long r = -1;
    created = ran = 0;
#pragma omp parallel
#pragma omp single
    r = fib(n);
    CHECK("fib.parallel_single.value", r == fib_seq(n), "fib(%d)=%ld want %ld", n, r, fib_seq(n));
    CHECK("fib.parallel_single.tasks", created == tasks_expected(n) && ran == created, "created %d ran %d want %ld",
          created, ran, tasks_expected(n));
    created = ran = 0;
    r = fib(15); /* outside any parallel region: a team of one */
    CHECK("fib.serial.value", r == fib_seq(15) && ran == tasks_expected(15), "fib(15)=%ld ran %d", r, ran);
    /* Every thread computes its own fib with tasks. */
    int bad = 0;
    created = ran = 0;
    int nt = 1;
#pragma omp parallel
    {
#pragma omp single
        nt = omp_get_num_threads();
        if (fib(12) != fib_seq(12)) __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
    }
    CHECK("fib.every_thread", !bad && ran == nt * tasks_expected(12), "bad %d ran %d want %ld", bad, ran,
          nt * tasks_expected(12));
}

/* ---- taskwait / taskgroup ------------------------------------------------ */

static void taskwait_checks(void) {
    enum { NC = 24 };
    int child_done[NC], gc_done[NC];
    int bad = 0, gc_bad = 0;
    memset(child_done, 0, sizeof child_done);
    memset(gc_done, 0, sizeof gc_done);
#pragma omp parallel
#pragma omp single
    {
        for (int i = 0; i < NC; i++) {
#pragma omp task firstprivate(i) shared(child_done, gc_done)
            {
#pragma omp task firstprivate(i) shared(gc_done)
                {
                    check_spin(20000);
                    __atomic_store_n(&gc_done[i], 1, __ATOMIC_RELEASE);
                }
                check_spin(i % 3 == 0 ? 30000 : 100);
                __atomic_store_n(&child_done[i], 1, __ATOMIC_RELEASE);
            }
        }
#pragma omp taskwait
        /* Children are complete. Grandchildren may or may not be: not checked. */
        for (int i = 0; i < NC; i++)
            if (!__atomic_load_n(&child_done[i], __ATOMIC_ACQUIRE)) bad = 1;
    }
    /* The end of the parallel region completes every task. */
    for (int i = 0; i < NC; i++)
        if (!gc_done[i]) gc_bad = 1;
    CHECK("taskwait.children_complete", !bad, "a child task was not complete after taskwait");
    CHECK("taskwait.region_end_completes_grandchildren", !gc_bad, "a grandchild was not complete at region end");
}

static int tg_count;

static void tg_spawn(int depth) {
    __atomic_fetch_add(&tg_count, 1, __ATOMIC_RELAXED);
    if (depth == 0) {
        check_spin(3000);
        return;
    }
    for (int k = 0; k < 3; k++) {
#pragma omp task
        tg_spawn(depth - 1);
    }
    /* no taskwait: descendants outlive their parents */
}

static void taskgroup_checks(void) {
    int bad = 0, nested_bad = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int rep = 0; rep < 5; rep++) {
            __atomic_store_n(&tg_count, 0, __ATOMIC_RELAXED);
#pragma omp taskgroup
            {
                for (int k = 0; k < 3; k++) {
#pragma omp task
                    tg_spawn(3);
                }
            }
            /* 3 roots x (1 + 3 + 9 + 27) */
            if (__atomic_load_n(&tg_count, __ATOMIC_RELAXED) != 3 * 40) bad = rep + 1;
        }
        /* Nested taskgroups inside a task. */
        int outer = 0, inner = 0;
#pragma omp taskgroup
        {
#pragma omp task shared(outer, inner, nested_bad)
            {
#pragma omp taskgroup
                {
                    for (int k = 0; k < 10; k++) {
#pragma omp task shared(inner)
                        {
#pragma omp task shared(inner)
                            {
                                check_spin(2000);
                                __atomic_fetch_add(&inner, 1, __ATOMIC_RELAXED);
                            }
                        }
                    }
                }
                if (__atomic_load_n(&inner, __ATOMIC_RELAXED) != 10) nested_bad = 1;
                for (int k = 0; k < 5; k++) {
#pragma omp task shared(outer)
                    __atomic_fetch_add(&outer, 1, __ATOMIC_RELAXED);
                }
            }
        }
        if (__atomic_load_n(&outer, __ATOMIC_RELAXED) != 5) nested_bad = 2;
    }
    CHECK("taskgroup.all_descendants", bad == 0, "rep %d: descendants incomplete after taskgroup", bad - 1);
    CHECK("taskgroup.nested", nested_bad == 0, "code %d", nested_bad);
}

/* ---- if(0), final, mergeable, untied, priority ---------------------------- */

static void undeferred_final_checks(void) {
    int ok_if0 = 1, fin_self = -1, fin_child = -1, fin_gchild = -1, child_imm = -1, nonfinal = -1, merged = 0;
    int final_expr_child = -1;
#pragma omp parallel
#pragma omp single
    {
        for (int k = 0; k < 20; k++) {
            int flag = 0;
#pragma omp task if (0) shared(flag)
            {
                check_spin(2000);
                flag = 1;
            }
            if (flag != 1) ok_if0 = 0;
        }
        volatile int zero = 0;
#pragma omp task if (zero) shared(ok_if0)
        {
            int inner = 0;
            /* a deferred child of an undeferred task */
#pragma omp task shared(inner)
            inner = 1;
#pragma omp taskwait
            if (inner != 1) ok_if0 = 0;
        }

#pragma omp task final(1) shared(fin_self, fin_child, fin_gchild, child_imm)
        {
            fin_self = omp_in_final();
            int done = 0;
#pragma omp task shared(fin_child, done, fin_gchild)
            {
                fin_child = omp_in_final();
#pragma omp task shared(fin_gchild)
                fin_gchild = omp_in_final();
                done = 1;
            }
            /* an included task has run to completion here */
            child_imm = done;
        }
        volatile int one = 1;
#pragma omp task final(one) shared(final_expr_child)
        {
#pragma omp task shared(final_expr_child)
            final_expr_child = omp_in_final();
        }
#pragma omp task final(0) shared(nonfinal)
        nonfinal = omp_in_final();

        for (int k = 0; k < 10; k++) {
#pragma omp task mergeable shared(merged)
            {
                __atomic_fetch_add(&merged, 1, __ATOMIC_RELAXED);
            }
#pragma omp task mergeable if (0) shared(merged)
            {
                __atomic_fetch_add(&merged, 1, __ATOMIC_RELAXED);
            }
        }
#pragma omp taskwait
    }
    CHECK("task.if(0).complete_on_return", ok_if0, "an undeferred task had not completed when the construct returned");
    CHECK("task.final.self", fin_self == 1, "omp_in_final()=%d in a final(1) task", fin_self);
    CHECK("task.final.descendants", fin_child == 1 && fin_gchild == 1 && final_expr_child == 1,
          "omp_in_final() child %d grandchild %d (final(expr) child %d), want 1", fin_child, fin_gchild,
          final_expr_child);
    CHECK("task.final.included_runs_immediately", child_imm == 1, "child of a final task had not run (%d)",
          child_imm);
    CHECK("task.final(0)", nonfinal == 0, "omp_in_final()=%d in a final(0) task", nonfinal);
    CHECK_EQ("task.mergeable", merged, 20);
    CHECK("task.in_final_outside", omp_in_final() == 0, "omp_in_final()=%d outside tasks", omp_in_final());

    /* untied tasks with task scheduling points inside. */
    long sum = 0;
    int yields = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int t = 0; t < 16; t++) {
#pragma omp task untied shared(sum, yields) firstprivate(t)
            {
                long part = 0;
                for (int k = 0; k < 4; k++) {
#pragma omp task shared(part) firstprivate(k)
                    {
#pragma omp atomic
                        part += k + t;
                    }
#pragma omp taskyield
                    __atomic_fetch_add(&yields, 1, __ATOMIC_RELAXED);
                }
#pragma omp taskwait
#pragma omp atomic
                sum += part;
            }
        }
    }
    /* sum over t of (0+1+2+3 + 4t) */
    CHECK("task.untied+taskyield", sum == 16 * 6 + 4 * 120 && yields == 64, "sum %ld want %d yields %d", sum,
          16 * 6 + 4 * 120, yields);

    int pr = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int k = 0; k < 60; k++) {
#pragma omp task priority(k % 5) shared(pr)
            __atomic_fetch_add(&pr, 1, __ATOMIC_RELAXED);
        }
    }
    CHECK_EQ("task.priority.all_ran", pr, 60);
    CHECK("task.max_task_priority", omp_get_max_task_priority() >= 0, "omp_get_max_task_priority()=%d",
          omp_get_max_task_priority());
}

/* ---- data capture ------------------------------------------------------ */

struct bigarg {
    long head;
    char pad[8000];
    double al __attribute__((aligned(128)));
    long tail;
};

static void capture_checks(void) {
    int res = -1, out[100], bad_big = 0, bad_align = 0;
    memset(out, -1, sizeof out);
#pragma omp parallel
#pragma omp single
    {
        int v = 5;
#pragma omp task firstprivate(v) shared(res)
        {
            check_spin(20000);
            res = v;
        }
        v = 6;
        for (int i = 0; i < 100; i++) {
#pragma omp task shared(out) /* i is firstprivate by default */
            out[i] = i * i;
        }
        static struct bigarg b;
        for (int rep = 0; rep < 8; rep++) {
            b.head = rep;
            for (int k = 0; k < 8000; k++) b.pad[k] = (char)(k * 7 + rep);
            b.al = rep * 0.25;
            b.tail = -rep;
#pragma omp task firstprivate(b, rep) shared(bad_big, bad_align)
            {
                if ((uintptr_t)&b.al % 128 != 0) __atomic_store_n(&bad_align, 1, __ATOMIC_RELAXED);
                int ok = b.head == rep && b.al == rep * 0.25 && b.tail == -rep;
                for (int k = 0; k < 8000; k++) ok &= b.pad[k] == (char)(k * 7 + rep);
                if (!ok) __atomic_store_n(&bad_big, 1, __ATOMIC_RELAXED);
            }
            /* change the original right after creation */
            memset(&b, 0xEE, sizeof b);
        }
#pragma omp taskwait
    }
    CHECK_EQ("task.firstprivate_creation_value", res, 5);
    int bad = 0;
    for (int i = 0; i < 100; i++) bad |= out[i] != i * i;
    CHECK("task.implicit_firstprivate_loop_var", !bad, "a task saw the wrong loop index");
    CHECK("task.large_firstprivate_struct", !bad_big, "a task saw a modified/corrupted copy of an 8 KiB struct");
    CHECK("task.firstprivate_alignment", !bad_align, "the task's copy of an aligned(128) member is misaligned");
}

/* ---- depend --------------------------------------------------------------- */

static void depend_checks(void) {
    int chain_bad = 0, x = 0;
    int dia_bad = 0;
    int rw_bad = 0;
    int arr_bad = 0, pipe_bad = 0;
    int if0_bad = 0;
    enum { NA = 16, STEPS = 6, NP = 40 };
    int a[NA], p[NP];
    memset(a, 0, sizeof a);
    memset(p, 0, sizeof p);
#pragma omp parallel
#pragma omp single
    {
        /* chain: each task sees the previous one's write */
        for (int k = 0; k < 40; k++) {
#pragma omp task depend(inout : x) shared(x, chain_bad) firstprivate(k)
            {
                if (x != k) chain_bad = 1;
                if (k % 4 == 0) check_spin(5000);
                x = k + 1;
            }
        }
        /* diamond A -> {B, C} -> D, repeated */
        for (int rep = 0; rep < 20; rep++) {
            int da = 0, db = 0, dc = 0, dd = 0;
#pragma omp task depend(out : da) shared(da)
            {
                check_spin(3000);
                da = 1;
            }
#pragma omp task depend(in : da) depend(out : db) shared(da, db, dia_bad)
            {
                if (da != 1) __atomic_store_n(&dia_bad, 1, __ATOMIC_RELAXED);
                check_spin(2000);
                db = da + 1;
            }
#pragma omp task depend(in : da) depend(out : dc) shared(da, dc, dia_bad)
            {
                if (da != 1) __atomic_store_n(&dia_bad, 1, __ATOMIC_RELAXED);
                dc = da + 2;
            }
#pragma omp task depend(in : db, dc) shared(db, dc, dd)
            dd = db + dc;
#pragma omp taskwait
            if (dd != 5) dia_bad = 2;
        }
        /* one writer, many readers, one writer */
        for (int rep = 0; rep < 10; rep++) {
            int y = 0, readers = 0;
#pragma omp task depend(out : y) shared(y)
            {
                check_spin(5000);
                y = 1;
            }
            for (int r = 0; r < 12; r++) {
#pragma omp task depend(in : y) shared(y, readers, rw_bad)
                {
                    if (y != 1) __atomic_store_n(&rw_bad, 1, __ATOMIC_RELAXED);
                    check_spin(1000);
                    __atomic_fetch_add(&readers, 1, __ATOMIC_RELAXED);
                }
            }
#pragma omp task depend(out : y) shared(y, readers, rw_bad)
            {
                if (__atomic_load_n(&readers, __ATOMIC_RELAXED) != 12) __atomic_store_n(&rw_bad, 2, __ATOMIC_RELAXED);
                y = 2;
            }
#pragma omp task depend(in : y) shared(y, rw_bad)
            {
                if (y != 2) __atomic_store_n(&rw_bad, 3, __ATOMIC_RELAXED);
            }
#pragma omp taskwait
        }
        /* independent chains on array elements */
        for (int s = 0; s < STEPS; s++)
            for (int i = 0; i < NA; i++) {
#pragma omp task depend(inout : a[i]) shared(a, arr_bad) firstprivate(i, s)
                {
                    if (a[i] != s) __atomic_store_n(&arr_bad, 1, __ATOMIC_RELAXED);
                    if ((i + s) % 5 == 0) check_spin(2000);
                    a[i] = s + 1;
                }
            }
        /* pipeline: task i reads p[i-1] and writes p[i] */
        for (int i = 0; i < NP; i++) {
            if (i == 0) {
#pragma omp task depend(out : p[0]) shared(p)
                {
                    check_spin(5000);
                    p[0] = 1;
                }
            } else {
#pragma omp task depend(in : p[i - 1]) depend(out : p[i]) shared(p, pipe_bad) firstprivate(i)
                {
                    if (p[i - 1] != i) __atomic_store_n(&pipe_bad, 1, __ATOMIC_RELAXED);
                    p[i] = i + 1;
                }
            }
        }
        /* depend + if(0): the undeferred task waits for its predecessors
         * (the last repetition long enough that a waiting thread goes to
         * sleep and must be woken by the predecessor's completion) */
        for (int rep = 0; rep < 10; rep++) {
            int z = 0, seen = -1;
#pragma omp task depend(out : z) shared(z)
            {
                check_spin(20000);
                if (rep == 9) usleep(5000);
                z = rep + 1;
            }
#pragma omp task if (0) depend(in : z) shared(z, seen)
            seen = z;
            if (seen != rep + 1) if0_bad = 1;
        }
#pragma omp taskwait
    }
    CHECK("depend.chain", !chain_bad && x == 40, "bad %d final %d (want 40)", chain_bad, x);
    CHECK("depend.diamond", !dia_bad, "code %d", dia_bad);
    CHECK("depend.readers_writer", !rw_bad, "code %d (1 reader before writer, 2 writer before readers, 3 reader "
                                             "before 2nd writer)",
          rw_bad);
    int arr_final = 1;
    for (int i = 0; i < NA; i++) arr_final &= a[i] == STEPS;
    CHECK("depend.array_elements", !arr_bad && arr_final, "bad %d final ok %d", arr_bad, arr_final);
    CHECK("depend.pipeline", !pipe_bad && p[NP - 1] == NP, "bad %d last %d", pipe_bad, p[NP - 1]);
    CHECK("depend.if(0)_waits", !if0_bad, "an undeferred task with depend(in) ran before its predecessor");

    /* depend between tasks created by different threads is NOT defined (only
     * sibling tasks), so each thread builds its own chain. */
    int per_thread_bad = 0;
#pragma omp parallel
    {
        int c = 0;
        for (int k = 0; k < 20; k++) {
#pragma omp task depend(inout : c) shared(c, per_thread_bad) firstprivate(k)
            {
                if (c != k) __atomic_store_n(&per_thread_bad, 1, __ATOMIC_RELAXED);
                c = k + 1;
            }
        }
#pragma omp taskwait
        if (c != 20) __atomic_store_n(&per_thread_bad, 2, __ATOMIC_RELAXED);
    }
    CHECK("depend.chain_per_thread", !per_thread_bad, "code %d", per_thread_bad);
}

/* ---- completion by barriers, tasks from all threads ---------------------- */

static void barrier_completion_checks(void) {
    enum { NT = 200 };
    static int done1[NT], done2[NT], from_all[MAXT][50];
    int bad1 = 0, bad2 = 0, bad3 = 0, nt = 1;
#pragma omp parallel
    {
#pragma omp single nowait
        for (int i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
            {
                if (i % 17 == 0) check_spin(10000);
                __atomic_store_n(&done1[i], 1, __ATOMIC_RELAXED);
            }
        }
#pragma omp barrier
        for (int i = 0; i < NT; i++)
            if (!__atomic_load_n(&done1[i], __ATOMIC_RELAXED)) __atomic_store_n(&bad1, 1, __ATOMIC_RELAXED);
        /* single with its implicit barrier */
#pragma omp single
        for (int i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
            {
                if (i % 13 == 0) check_spin(10000);
                __atomic_store_n(&done2[i], 1, __ATOMIC_RELAXED);
            }
        }
        for (int i = 0; i < NT; i++)
            if (!__atomic_load_n(&done2[i], __ATOMIC_RELAXED)) __atomic_store_n(&bad2, 1, __ATOMIC_RELAXED);
        /* every thread creates tasks */
        int me = omp_get_thread_num();
#pragma omp single nowait
        nt = omp_get_num_threads();
        for (int k = 0; k < 50; k++) {
#pragma omp task firstprivate(me, k)
            __atomic_fetch_add(&from_all[me][k], 1, __ATOMIC_RELAXED);
        }
#pragma omp barrier
        for (int t = 0; t < omp_get_num_threads(); t++)
            for (int k = 0; k < 50; k++)
                if (__atomic_load_n(&from_all[t][k], __ATOMIC_RELAXED) != 1) __atomic_store_n(&bad3, 1, __ATOMIC_RELAXED);
    }
    CHECK("task.completed_by_explicit_barrier", !bad1, "a task from a single nowait was incomplete after the barrier");
    CHECK("task.completed_by_single_barrier", !bad2, "a task was incomplete after single's implicit barrier");
    CHECK("task.created_by_all_threads", !bad3, "with %d threads a task ran != 1 times", nt);
}

/* ---- taskloop --------------------------------------------------------------- */

static int tl_cnt[4096], tl_first[4096];

static void tl_reset(void) {
    memset(tl_cnt, 0, sizeof tl_cnt);
    for (int i = 0; i < 4096; i++) tl_first[i] = -2;
}

static inline void tl_rec(long idx, int first) {
    if (idx < 0 || idx >= 4096) return;
    __atomic_fetch_add(&tl_cnt[idx], 1, __ATOMIC_RELAXED);
    __atomic_store_n(&tl_first[idx], first, __ATOMIC_RELAXED);
}

/* Checks exactly-once and the task partition: tasks are contiguous runs
 * identified by their first iteration.  Returns the number of tasks and the
 * smallest/largest task size. */
static int tl_verify(const char *name, int n, int *ntasks, int *minsz, int *maxsz) {
    int ok = 1, bad_i = -1;
    *ntasks = 0;
    *minsz = 1 << 30;
    *maxsz = 0;
    for (int i = 0; i < n && ok; i++)
        if (tl_cnt[i] != 1) ok = 0, bad_i = i;
    if (!ok) return CHECK(name, 0, "iteration %d ran %d times", bad_i, tl_cnt[bad_i]);
    int start = 0;
    for (int i = 1; i <= n; i++)
        if (i == n || tl_first[i] != tl_first[start]) {
            if (tl_first[start] != start) ok = 0, bad_i = start;
            int sz = i - start;
            (*ntasks)++;
            if (sz < *minsz) *minsz = sz;
            if (sz > *maxsz) *maxsz = sz;
            start = i;
        }
    return CHECK(name, ok, "task starting at %d is not contiguous from its first iteration", bad_i);
}

static const ull U0 = 0xFFFFF00000000000ULL;
static const ull US = 0x100000001ULL;

static void taskloop_checks(void) {
    int ntasks, mn, mx;
    char nm[120];
    volatile int vz = 0;
    int z = vz;

    tl_reset();
#pragma omp parallel
#pragma omp single
    {
        int first = -1;
#pragma omp taskloop firstprivate(first)
        for (int i = z; i < 1000 + z; i++) {
            if (first < 0) first = i;
            tl_rec(i, first);
        }
    }
    tl_verify("taskloop.default", 1000, &ntasks, &mn, &mx);

    static const int grains[] = {1, 7, 10, 64, 1000, 5000};
    for (unsigned g = 0; g < sizeof grains / sizeof grains[0]; g++) {
        int gs = grains[g];
        tl_reset();
#pragma omp parallel
#pragma omp single
        {
            int first = -1;
#pragma omp taskloop grainsize(gs) firstprivate(first)
            for (int i = z; i < 1000 + z; i++) {
                if (first < 0) first = i;
                tl_rec(i, first);
            }
        }
        snprintf(nm, sizeof nm, "taskloop.grainsize(%d)", gs);
        if (tl_verify(nm, 1000, &ntasks, &mn, &mx)) {
            int lo = gs < 1000 ? gs : 1000;
            snprintf(nm, sizeof nm, "taskloop.grainsize(%d).task_sizes", gs);
            CHECK(nm, mn >= lo && mx < 2 * gs, "%d tasks, sizes %d..%d, want [%d, %d)", ntasks, mn, mx, lo, 2 * gs);
        }
    }

    static const int nts[] = {1, 3, 7, 64, 2000};
    for (unsigned t = 0; t < sizeof nts / sizeof nts[0]; t++) {
        int nt = nts[t];
        tl_reset();
#pragma omp parallel
#pragma omp single
        {
            int first = -1;
#pragma omp taskloop num_tasks(nt) firstprivate(first)
            for (int i = z; i < 1000 + z; i++) {
                if (first < 0) first = i;
                tl_rec(i, first);
            }
        }
        snprintf(nm, sizeof nm, "taskloop.num_tasks(%d)", nt);
        if (tl_verify(nm, 1000, &ntasks, &mn, &mx)) {
            int want = nt < 1000 ? nt : 1000;
            snprintf(nm, sizeof nm, "taskloop.num_tasks(%d).count", nt);
            CHECK(nm, ntasks == want, "%d tasks, want %d", ntasks, want);
        }
    }

    /* nogroup + taskwait, nogroup inside a taskgroup */
    int nog_bad = 0, tg_bad = 0;
    tl_reset();
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop nogroup grainsize(5)
        for (int i = z; i < 500 + z; i++) {
            if (i % 50 == 0) check_spin(5000);
            tl_rec(i, 0);
        }
#pragma omp taskwait
        for (int i = 0; i < 500; i++)
            if (__atomic_load_n(&tl_cnt[i], __ATOMIC_RELAXED) != 1) nog_bad = 1;
#pragma omp taskgroup
        {
#pragma omp taskloop nogroup num_tasks(9)
            for (int i = 500 + z; i < 1000 + z; i++) {
                if (i % 50 == 0) check_spin(5000);
                tl_rec(i, 0);
            }
        }
        for (int i = 500; i < 1000; i++)
            if (__atomic_load_n(&tl_cnt[i], __ATOMIC_RELAXED) != 1) tg_bad = 1;
    }
    CHECK("taskloop.nogroup+taskwait", !nog_bad, "an iteration was not done after taskwait");
    CHECK("taskloop.nogroup+taskgroup", !tg_bad, "an iteration was not done after taskgroup");

    /* unsigned long long (GOMP_taskloop_ull), up and down */
    tl_reset();
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(8)
        for (ull u = U0 + (ull)z; u < U0 + 600 * US + (ull)z; u += US) tl_rec((long)((u - U0) / US), 0);
#pragma omp taskloop num_tasks(5)
        for (ull u = U0 + 1200 * US + (ull)z; u > U0 + 600 * US + (ull)z; u -= US)
            tl_rec(600 + (long)((U0 + 1200 * US - u) / US), 0);
    }
    {
        int ok = 1;
        for (int i = 0; i < 1200; i++) ok &= tl_cnt[i] == 1;
        CHECK("taskloop.ull", ok, "an unsigned long long taskloop iteration ran != 1 times");
    }

    /* Negative steps.  LLVM libomp 14's GOMP_taskloop mishandles them (it runs
     * iterations past the end, or aborts on an internal assertion), so under
     * libomp they are not run at all and reported as xfail. */
    if (check_is_libomp()) {
        check_known("taskloop.long_negative_step", 0, 1, "not run under libomp (GOMP_taskloop with a negative step)");
        check_known("taskloop.int_negative_step", 0, 1, "not run under libomp (GOMP_taskloop with a negative step)");
    } else {
        int oob = 0;
        tl_reset();
#pragma omp parallel
#pragma omp single
        {
#pragma omp taskloop grainsize(13) shared(oob)
            for (long i = 6000000000L + z; i > 6000000000L - 1000 + z; i -= 2) {
                long k = (6000000000L - i) / 2;
                if (k < 0 || k >= 500)
                    __atomic_fetch_add(&oob, 1, __ATOMIC_RELAXED);
                else
                    tl_rec(k, 0);
            }
#pragma omp taskloop num_tasks(7) shared(oob)
            for (int i = 1000 + z; i > z; i -= 3) {
                int k = (1000 - i) / 3;
                if (k < 0 || k >= 334)
                    __atomic_fetch_add(&oob, 1, __ATOMIC_RELAXED);
                else
                    tl_rec(1000 + k, 0);
            }
        }
        int ok = 1, bad_i = -1;
        for (int i = 0; i < 500; i++)
            if (tl_cnt[i] != 1) ok = 0, bad_i = i;
        CHECK("taskloop.long_negative_step", ok && !oob, "logical iteration %d ran %d times, %d out of range", bad_i,
              bad_i >= 0 ? tl_cnt[bad_i] : 0, oob);
        ok = 1;
        for (int i = 1000; i < 1334; i++)
            if (tl_cnt[i] != 1) ok = 0, bad_i = i;
        CHECK("taskloop.int_negative_step", ok && !oob, "logical iteration %d ran %d times, %d out of range",
              bad_i - 1000, bad_i >= 0 ? tl_cnt[bad_i] : 0, oob);
    }

    /* step 3, collapse(2), lastprivate, outside parallel */
    tl_reset();
    int lp = -1;
    long lv = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(13)
        for (long i = 6000000000L + z; i < 6000000000L + 1500 + z; i += 3) tl_rec((i - 6000000000L) / 3, 0);
#pragma omp taskloop collapse(2) num_tasks(6)
        for (int i = z; i < 20 + z; i++)
            for (int j = z; j < 30 + z; j++) tl_rec(500 + i * 30 + j, 0);
#pragma omp taskloop lastprivate(lp, lv) grainsize(7)
        for (long i = z; i < 333 + z; i++) {
            lp = (int)i * 3;
            lv = i;
        }
    }
    {
        int ok = 1, bad_i = -1;
        for (int i = 0; i < 500; i++)
            if (tl_cnt[i] != 1) ok = 0, bad_i = i;
        CHECK("taskloop.long_step3", ok, "logical iteration %d ran %d times", bad_i, bad_i >= 0 ? tl_cnt[bad_i] : 0);
        ok = 1;
        for (int i = 500; i < 1100; i++)
            if (tl_cnt[i] != 1) ok = 0, bad_i = i;
        CHECK("taskloop.collapse(2)", ok, "iteration %d ran %d times", bad_i, bad_i >= 0 ? tl_cnt[bad_i] : 0);
        CHECK("taskloop.lastprivate", lp == 332 * 3 && lv == 332, "lp %d lv %ld", lp, lv);
    }
    tl_reset();
#pragma omp taskloop num_tasks(4)
    for (int i = z; i < 100 + z; i++) tl_rec(i, 0);
    {
        int ok = 1;
        for (int i = 0; i < 100; i++) ok &= tl_cnt[i] == 1;
        CHECK("taskloop.outside_parallel", ok, "an iteration ran != 1 times");
    }
    /* taskloops created by every thread at once */
    tl_reset();
#pragma omp parallel
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads();
        if (me < 8) {
#pragma omp taskloop grainsize(3)
            for (int i = z; i < 100 + z; i++) tl_rec(me * 100 + i, 0);
        }
        (void)n;
    }
    {
        int ok = 1, n = omp_get_max_threads() < 8 ? omp_get_max_threads() : 8;
        for (int i = 0; i < 100 * n; i++) ok &= tl_cnt[i] == 1;
        CHECK("taskloop.from_every_thread", ok, "an iteration ran != 1 times");
    }
}

/* ---- taskyield -------------------------------------------------------------- */

static void taskyield_checks(void) {
    int done = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int t = 0; t < 20; t++) {
#pragma omp task shared(done)
            {
                for (int k = 0; k < 20; k++) {
#pragma omp taskyield
                }
                __atomic_fetch_add(&done, 1, __ATOMIC_RELAXED);
            }
        }
#pragma omp taskyield
    }
    CHECK_EQ("taskyield", done, 20);
}

/* An undeferred task completes when its body has: a deferred child it
 * created may still be running. The child here waits (bounded, 5 s) for a
 * flag that its creator's parent sets only after the if(0) task has
 * returned; a runtime whose included tasks wait for their children at
 * their end never gets there (herd before 2026-11-28; libgomp passes). With
 * one thread the child runs when it is created (nothing else could run it),
 * so the check needs two. */
static int included_flag;

static void included_end_checks(void) {
    int threads = 0, released = -1;
#pragma omp parallel
#pragma omp single
    {
        threads = omp_get_num_threads();
        if (threads >= 2) {
            __atomic_store_n(&included_flag, 0, __ATOMIC_RELAXED);
            released = 0;
#pragma omp task if (0) shared(released)
            {
#pragma omp task shared(released)
                {
                    double t0 = omp_get_wtime();
                    while (!__atomic_load_n(&included_flag, __ATOMIC_ACQUIRE) && omp_get_wtime() - t0 < 5.0)
                        ;
                    released = __atomic_load_n(&included_flag, __ATOMIC_ACQUIRE);
                }
            }
            __atomic_store_n(&included_flag, 1, __ATOMIC_RELEASE);
#pragma omp taskwait
        }
    }
    if (threads >= 2)
        CHECK("if0_ends_before_its_deferred_child", released == 1,
              "the deferred child of an if(0) task never saw the flag set after that task returned");
}

int main(void) {
    check_begin("tasks");
    fib_checks();
    taskwait_checks();
    taskgroup_checks();
    undeferred_final_checks();
    included_end_checks();
    capture_checks();
    depend_checks();
    barrier_completion_checks();
    taskloop_checks();
    taskyield_checks();
    return check_done();
}
