/* parallel.c — parallel regions: team sizes and thread numbers, if(),
 * proc_bind, omp_in_parallel, nesting (serialized by default, active after
 * omp_set_max_active_levels / OMP_MAX_ACTIVE_LEVELS), threadprivate, __thread
 * and copyin persistence, and the thread-number -> OS-thread mapping.
 *
 * Environment (set by run.sh):
 *   EXPECT_THREADS=n           omp_get_max_threads() must be n (and a plain region has n threads)
 *   EXPECT_MAX_ACTIVE_LEVELS=m the program runs with OMP_MAX_ACTIVE_LEVELS=m
 * Without EXPECT_MAX_ACTIVE_LEVELS (and with OMP_NESTED / OMP_MAX_ACTIVE_LEVELS
 * unset) the default ICVs must serialize a nested region (OpenMP 5.0 made the
 * default max-active-levels implementation defined; libgomp and libomp both
 * default to 1 when OMP_NUM_THREADS has a single value, and herd must too).
 */
#include "check.h"
#include <sys/syscall.h>

#define MAXT 64

static pid_t my_gettid(void) { return (pid_t)syscall(SYS_gettid); }

static int tp_var;
#pragma omp threadprivate(tp_var)
static __thread int tls_var;
static int copyin_var;
#pragma omp threadprivate(copyin_var)

/* Team of num_threads(k): every thread sees omp_get_num_threads()==k and the
 * thread numbers 0..k-1 each occur exactly once. */
static void team_size_checks(void) {
    for (int k = 1; k <= 5; k++) {
        int seen[MAXT] = {0};
        int wrong_size = 0, bad_num = 0, in_par = -1, bad_level = 0;
#pragma omp parallel num_threads(k)
        {
            int me = omp_get_thread_num();
            if (omp_get_num_threads() != k) __atomic_store_n(&wrong_size, omp_get_num_threads(), __ATOMIC_RELAXED);
            if (me < 0 || me >= MAXT)
                __atomic_store_n(&bad_num, 1, __ATOMIC_RELAXED);
            else
                __atomic_fetch_add(&seen[me], 1, __ATOMIC_RELAXED);
            if (omp_get_level() != 1) __atomic_store_n(&bad_level, 1, __ATOMIC_RELAXED);
            if (me == 0) in_par = omp_in_parallel();
        }
        char name[64];
        snprintf(name, sizeof name, "num_threads(%d).size", k);
        CHECK(name, wrong_size == 0, "a thread saw omp_get_num_threads()=%d", wrong_size);
        snprintf(name, sizeof name, "num_threads(%d).thread_nums", k);
        int ok = !bad_num;
        for (int i = 0; i < MAXT; i++) ok &= seen[i] == (i < k);
        CHECK(name, ok, "thread numbers not exactly 0..%d once each (bad=%d seen0=%d seen1=%d)", k - 1,
              bad_num, seen[0], seen[1]);
        snprintf(name, sizeof name, "num_threads(%d).level", k);
        CHECK(name, !bad_level, "omp_get_level()!=1 inside");
        /* A team of one thread is an inactive region: omp_in_parallel() is
         * true only inside an active region. */
        snprintf(name, sizeof name, "num_threads(%d).in_parallel", k);
        CHECK(name, in_par == (k > 1), "omp_in_parallel()=%d", in_par);
    }

    /* Larger teams than there are cores, repeatedly. */
    for (int rep = 0; rep < 20; rep++) {
        int n = 0, sz = 0;
#pragma omp parallel num_threads(8)
        {
#pragma omp atomic
            n++;
            if (omp_get_thread_num() == 0) sz = omp_get_num_threads();
        }
        if (n != 8 || sz != 8) {
            CHECK("num_threads(8).repeated", 0, "rep %d: %d threads ran, size %d", rep, n, sz);
            break;
        }
        if (rep == 19) CHECK("num_threads(8).repeated", 1, "%s", "");
    }

    /* Plain region: omp_get_max_threads() threads (dynamic is off). */
    long expect = env_long("EXPECT_THREADS", -1);
    int maxt = omp_get_max_threads();
    if (expect > 0) CHECK_EQ("max_threads.env", maxt, expect);
    int n = 0, sz = -1;
#pragma omp parallel
    {
#pragma omp atomic
        n++;
#pragma omp master
        sz = omp_get_num_threads();
    }
    CHECK("default_team.size", n == maxt && sz == maxt, "%d threads ran, size %d, max_threads %d", n, sz,
          maxt);
}

static void if_checks(void) {
    int n = 0, sz = -1, inpar = -1, lvl = -1, alvl = -1;
#pragma omp parallel if (0) num_threads(4)
    {
#pragma omp atomic
        n++;
        sz = omp_get_num_threads();
        inpar = omp_in_parallel();
        lvl = omp_get_level();
        alvl = omp_get_active_level();
    }
    CHECK("if(0).serialized", n == 1 && sz == 1, "%d threads ran, size %d", n, sz);
    CHECK("if(0).inactive", inpar == 0 && lvl == 1 && alvl == 0,
          "omp_in_parallel=%d level=%d active_level=%d (want 0,1,0)", inpar, lvl, alvl);

    volatile int one = 1, zero = 0;
    n = 0;
    sz = -1;
#pragma omp parallel if (one) num_threads(3)
    {
#pragma omp atomic
        n++;
#pragma omp master
        {
            sz = omp_get_num_threads();
            inpar = omp_in_parallel();
            alvl = omp_get_active_level();
        }
    }
    CHECK("if(1).team", n == 3 && sz == 3 && inpar == 1 && alvl == 1,
          "%d ran, size %d, in_parallel %d, active_level %d", n, sz, inpar, alvl);
    n = 0;
#pragma omp parallel if (zero) num_threads(3)
    {
#pragma omp atomic
        n++;
    }
    CHECK_EQ("if(runtime 0).team", n, 1);
}

static void proc_bind_checks(void) {
    int n1 = 0, n2 = 0, n3 = 0, n4 = 0;
#pragma omp parallel num_threads(3) proc_bind(close)
    {
#pragma omp atomic
        n1++;
    }
#pragma omp parallel num_threads(3) proc_bind(spread)
    {
#pragma omp atomic
        n2++;
    }
#pragma omp parallel num_threads(3) proc_bind(master)
    {
#pragma omp atomic
        n3++;
    }
#pragma omp parallel num_threads(5) proc_bind(spread)
    {
#pragma omp atomic
        n4++;
    }
    CHECK_EQ("proc_bind(close).team", n1, 3);
    CHECK_EQ("proc_bind(spread).team", n2, 3);
    CHECK_EQ("proc_bind(master).team", n3, 3);
    CHECK_EQ("proc_bind(spread).5threads", n4, 5);
}

/* Outside any region. */
static void outside_checks(void) {
    CHECK("outside.in_parallel", omp_in_parallel() == 0, "omp_in_parallel()=%d", omp_in_parallel());
    CHECK("outside.thread_num", omp_get_thread_num() == 0 && omp_get_num_threads() == 1,
          "thread_num=%d num_threads=%d", omp_get_thread_num(), omp_get_num_threads());
    CHECK("outside.levels", omp_get_level() == 0 && omp_get_active_level() == 0, "level=%d active=%d",
          omp_get_level(), omp_get_active_level());
}

/* Nested region with the inner one serialized (max-active-levels 1). */
static void nested_serialized(const char *name) {
    int bad = 0, inner_runs = 0;
#pragma omp parallel num_threads(3)
    {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(3)
        {
#pragma omp atomic
            inner_runs++;
            if (omp_get_num_threads() != 1 || omp_get_thread_num() != 0 || omp_get_level() != 2 ||
                omp_get_active_level() != 1 || omp_get_ancestor_thread_num(1) != outer ||
                omp_get_team_size(1) != 3 || omp_get_team_size(2) != 1 || omp_in_parallel() != 1)
                __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
        }
    }
    CHECK(name, !bad && inner_runs == 3, "inner region not serialized as expected (bad=%d runs=%d)", bad,
          inner_runs);
}

/* Nested region with both levels active: 2 outer x 3 inner threads. */
static void nested_active(const char *name) {
    int seen[2][3] = {{0}};
    int bad = 0, badinfo = 0;
#pragma omp parallel num_threads(2)
    {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(3)
        {
            int inner = omp_get_thread_num();
            int sz = omp_get_num_threads();
            if (sz != 3 || inner < 0 || inner >= 3)
                __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
            else
                __atomic_fetch_add(&seen[outer][inner], 1, __ATOMIC_RELAXED);
            if (omp_get_level() != 2 || omp_get_active_level() != 2)
                __atomic_store_n(&badinfo, 1, __ATOMIC_RELAXED);
            if (omp_get_ancestor_thread_num(0) != 0 || omp_get_ancestor_thread_num(1) != outer ||
                omp_get_ancestor_thread_num(2) != inner || omp_get_ancestor_thread_num(3) != -1 ||
                omp_get_ancestor_thread_num(-1) != -1)
                __atomic_store_n(&badinfo, 2, __ATOMIC_RELAXED);
            if (omp_get_team_size(0) != 1 || omp_get_team_size(1) != 2 || omp_get_team_size(2) != 3 ||
                omp_get_team_size(3) != -1)
                __atomic_store_n(&badinfo, 3, __ATOMIC_RELAXED);
            if (!omp_in_parallel()) __atomic_store_n(&badinfo, 4, __ATOMIC_RELAXED);
        }
    }
    int ok = !bad;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) ok &= seen[i][j] == 1;
    char n2[80];
    snprintf(n2, sizeof n2, "%s.teams", name);
    CHECK(n2, ok, "inner teams wrong (bad=%d, seen[0]={%d,%d,%d} seen[1]={%d,%d,%d})", bad, seen[0][0],
          seen[0][1], seen[0][2], seen[1][0], seen[1][1], seen[1][2]);
    snprintf(n2, sizeof n2, "%s.queries", name);
    CHECK(n2, badinfo == 0,
          "level/ancestor/team_size queries wrong (code %d: 1 level, 2 ancestor, 3 team_size, 4 in_parallel)",
          badinfo);
}

static void nesting_checks(void) {
    long expect_mal = env_long("EXPECT_MAX_ACTIVE_LEVELS", -1);
    if (expect_mal > 0) {
        CHECK_EQ("max_active_levels.env", omp_get_max_active_levels(), expect_mal);
        if (expect_mal >= 2)
            nested_active("nested.env_active");
        else
            nested_serialized("nested.env_serialized");
    } else if (!getenv("OMP_NESTED") && !getenv("OMP_MAX_ACTIVE_LEVELS")) {
        nested_serialized("nested.default_serialized");
    }
    int save = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
    CHECK_EQ("max_active_levels.set", omp_get_max_active_levels(), 2);
    nested_active("nested.set_active");
    /* Three levels with max-active-levels 2: the third level is serialized. */
    int bad = 0, runs = 0;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    {
#pragma omp atomic
        runs++;
        if (omp_get_level() != 3 || omp_get_active_level() != 2 || omp_get_num_threads() != 1)
            __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
    }
    CHECK("nested.third_level_serialized", !bad && runs == 4, "bad=%d runs=%d (want 4)", bad, runs);
    omp_set_max_active_levels(1);
    nested_serialized("nested.set_serialized");
    omp_set_max_active_levels(save);
}

/* threadprivate / __thread persistence and the thread -> OS thread mapping.
 * Guaranteed when neither region is nested, both have the same number of
 * threads, and dyn-var is false. */
static void persistence_checks(int k) {
    pid_t tids[MAXT];
    int bad_tp = 0, bad_tls = 0, bad_tid = 0;
    pid_t main_tid = my_gettid();
    pid_t master_tid = 0;
#pragma omp parallel num_threads(k)
    {
        int me = omp_get_thread_num();
        tp_var = 1000 + me;
        tls_var = 2000 + me;
        tids[me] = my_gettid();
        if (me == 0) master_tid = my_gettid();
    }
    char name[80];
    snprintf(name, sizeof name, "persist(%d).master_is_initial_thread", k);
    CHECK(name, master_tid == main_tid, "thread 0 ran on OS thread %d, initial thread is %d", (int)master_tid,
          (int)main_tid);
    /* Unrelated serial work between the regions. */
    volatile double x = 0;
    for (int i = 0; i < 1000; i++) x += i;
    for (int round = 0; round < 5; round++) {
#pragma omp parallel num_threads(k)
        {
            int me = omp_get_thread_num();
            if (tp_var != 1000 + me + round) __atomic_store_n(&bad_tp, 1, __ATOMIC_RELAXED);
            if (tls_var != 2000 + me + round) __atomic_store_n(&bad_tls, 1, __ATOMIC_RELAXED);
            if (tids[me] != my_gettid()) __atomic_store_n(&bad_tid, 1, __ATOMIC_RELAXED);
            tp_var++;
            tls_var++;
        }
    }
    snprintf(name, sizeof name, "persist(%d).threadprivate", k);
    CHECK(name, !bad_tp, "threadprivate value not kept across regions of the same size");
    snprintf(name, sizeof name, "persist(%d).__thread", k);
    CHECK(name, !bad_tls, "__thread value not kept across regions of the same size");
    snprintf(name, sizeof name, "persist(%d).os_thread", k);
    CHECK(name, !bad_tid, "thread number -> OS thread mapping changed between regions");
}

static void copyin_checks(void) {
    int bad = 0;
    for (int round = 0; round < 3; round++) {
        copyin_var = 77 + round;
#pragma omp parallel num_threads(4) copyin(copyin_var)
        {
            if (copyin_var != 77 + round) __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
            copyin_var = -1 - omp_get_thread_num(); /* thread 0's copy is the original */
        }
    }
    CHECK("copyin", !bad, "a thread did not receive the master's threadprivate value");
    CHECK_EQ("copyin.master_copy", copyin_var, -1);
}

static void firstprivate_checks(void) {
    int v = 42, bad = 0;
    double d = 2.5;
#pragma omp parallel num_threads(4) firstprivate(v, d)
    {
        if (v != 42 || d != 2.5) __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
        v = omp_get_thread_num();
        d = -1;
    }
    CHECK("parallel.firstprivate", !bad && v == 42 && d == 2.5, "bad=%d v=%d d=%g", bad, v, d);
    int s = 0;
#pragma omp parallel num_threads(5) reduction(+ : s)
    s += omp_get_thread_num() + 1;
    CHECK_EQ("parallel.reduction", s, 15);
}

int main(void) {
    check_begin("parallel");
    outside_checks();
    team_size_checks();
    if_checks();
    proc_bind_checks();
    persistence_checks(4);
    persistence_checks(3);
    persistence_checks(omp_get_max_threads());
    copyin_checks();
    firstprivate_checks();
    nesting_checks();
    outside_checks();
    return check_done();
}
