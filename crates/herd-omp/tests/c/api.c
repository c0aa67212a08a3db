/* api.c — the omp_* query/setter routines and their ICVs.
 *
 * Environment (set by run.sh; every check whose variable is unset is skipped
 * or reduced to what the spec guarantees for any value):
 *   EXPECT_THREADS=n       OMP_NUM_THREADS=n was set: omp_get_max_threads()==n
 *   EXPECT_THREAD_LIMIT=n  OMP_THREAD_LIMIT=n was set
 *   EXPECT_PROC_BIND=close|spread|master|true|false   OMP_PROC_BIND was set
 *   EXPECT_PLACES=threads|cores  OMP_PLACES was set: places are checked against
 *                          sched_getaffinity and every thread of a region must run
 *                          on a CPU of its place
 *   EXPECT_NUM_PLACES=n    omp_get_num_places()==n (OMP_PLACES naming CPUs the
 *                          process cannot use: libgomp drops them and places
 *                          left empty)
 * Defaults the spec leaves to the implementation are checked only where both
 * libgomp and libomp agree and herd must too (dyn-var false, cancel-var false);
 * each such check says so.
 */
#include "check.h"
#include <sched.h>
#include <time.h>

#define MAXT 64

static void basics(void) {
    long expect = env_long("EXPECT_THREADS", -1);
    int maxt = omp_get_max_threads();
    if (expect > 0)
        CHECK_EQ("max_threads.equals_OMP_NUM_THREADS", maxt, expect);
    else
        CHECK("max_threads.positive", maxt >= 1, "omp_get_max_threads()=%d", maxt);
    CHECK("num_procs.positive", omp_get_num_procs() >= 1, "omp_get_num_procs()=%d", omp_get_num_procs());
    cpu_set_t set;
    /* Both libgomp and libomp report the CPUs available to the process.  With
     * OMP_PROC_BIND/OMP_PLACES the runtime may already have bound this thread
     * (narrowing its mask) before main, so compare only without binding. */
    if (!getenv("OMP_PROC_BIND") && !getenv("OMP_PLACES") && sched_getaffinity(0, sizeof set, &set) == 0) {
        CHECK("num_procs.equals_affinity_mask", omp_get_num_procs() == CPU_COUNT(&set),
              "omp_get_num_procs()=%d, sched_getaffinity has %d CPUs", omp_get_num_procs(), CPU_COUNT(&set));
    }
    CHECK("outside.num_threads", omp_get_num_threads() == 1 && omp_get_thread_num() == 0,
          "num_threads %d thread_num %d", omp_get_num_threads(), omp_get_thread_num());
    CHECK("outside.levels", omp_get_level() == 0 && omp_get_active_level() == 0, "level %d active %d",
          omp_get_level(), omp_get_active_level());
    CHECK("outside.ancestor_and_team_size", omp_get_ancestor_thread_num(0) == 0 && omp_get_team_size(0) == 1 &&
                                                omp_get_ancestor_thread_num(1) == -1 && omp_get_team_size(1) == -1,
          "ancestor(0)=%d team_size(0)=%d ancestor(1)=%d team_size(1)=%d", omp_get_ancestor_thread_num(0),
          omp_get_team_size(0), omp_get_ancestor_thread_num(1), omp_get_team_size(1));
    CHECK("outside.in_parallel", !omp_in_parallel(), "omp_in_parallel()=%d", omp_in_parallel());
    CHECK("outside.in_final", !omp_in_final(), "omp_in_final()=%d", omp_in_final());
    if (!getenv("OMP_CANCELLATION"))
        /* cancel-var defaults to false (spec: the initial value is false). */
        CHECK("cancellation.default_false", omp_get_cancellation() == 0, "omp_get_cancellation()=%d",
              omp_get_cancellation());
    CHECK("teams.host_defaults", omp_get_num_teams() == 1 && omp_get_team_num() == 0, "num_teams %d team_num %d",
          omp_get_num_teams(), omp_get_team_num());
    CHECK("max_task_priority", omp_get_max_task_priority() >= 0, "%d", omp_get_max_task_priority());
}

static void set_num_threads(void) {
    int save = omp_get_max_threads();
    int limit = omp_get_thread_limit();
    for (int k = 1; k <= 5; k += 2) {
        omp_set_num_threads(k);
        int n = 0, sz = 0;
#pragma omp parallel
        {
#pragma omp atomic
            n++;
#pragma omp master
            sz = omp_get_num_threads();
        }
        char nm[64];
        snprintf(nm, sizeof nm, "set_num_threads(%d)", k);
        int want = k < limit ? k : limit; /* the thread limit caps the team */
        CHECK(nm, omp_get_max_threads() == k && n == want && sz == want,
              "max_threads %d, region ran %d threads (size %d), want %d", omp_get_max_threads(), n, sz, want);
    }
    /* num_threads clause overrides but does not change the ICV */
    omp_set_num_threads(2);
    int n = 0;
#pragma omp parallel num_threads(3)
    {
#pragma omp atomic
        n++;
    }
    CHECK("num_threads_clause_overrides_icv", n == (limit < 3 ? limit : 3) && omp_get_max_threads() == 2,
          "ran %d, max_threads %d", n, omp_get_max_threads());
    /* The ICV is per task: setting it inside a region affects nested regions only. */
    omp_set_num_threads(4);
    int inner_max = -1;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == omp_get_num_threads() - 1) {
            omp_set_num_threads(3);
            inner_max = omp_get_max_threads();
        }
    }
    CHECK("set_num_threads_is_per_task", inner_max == 3 && omp_get_max_threads() == 4,
          "inside %d (want 3), outside afterwards %d (want 4)", inner_max, omp_get_max_threads());
    omp_set_num_threads(save);
    CHECK_EQ("set_num_threads.restore", omp_get_max_threads(), save);
}

static void dynamic_and_limits(void) {
    if (!getenv("OMP_DYNAMIC"))
        /* dyn-var's initial value is implementation defined; libgomp and libomp
         * both start with false, and herd must (threadprivate persistence and
         * exact team sizes depend on it). */
        CHECK("dynamic.default_false", omp_get_dynamic() == 0, "omp_get_dynamic()=%d", omp_get_dynamic());
    int save = omp_get_dynamic();
    omp_set_dynamic(1);
    int d1 = omp_get_dynamic();
    int in_region_ok = 1;
    /* With dynamic on the team may be smaller, never larger. */
#pragma omp parallel num_threads(3)
    {
        if (omp_get_num_threads() > 3 || omp_get_num_threads() < 1) __atomic_store_n(&in_region_ok, 0, __ATOMIC_RELAXED);
    }
    omp_set_dynamic(0);
    int d0 = omp_get_dynamic();
    /* Implementations may ignore omp_set_dynamic(1) (no dynamic adjustment
     * supported): then omp_get_dynamic() stays 0.  Only 0 after set(0) is required. */
    CHECK("dynamic.set_get", (d1 == 1 || d1 == 0) && d0 == 0 && in_region_ok, "after set(1): %d, after set(0): %d",
          d1, d0);
    omp_set_dynamic(save);

    int tl = omp_get_thread_limit();
    CHECK("thread_limit.positive", tl >= 1, "omp_get_thread_limit()=%d", tl);
    long expect_tl = env_long("EXPECT_THREAD_LIMIT", -1);
    if (expect_tl > 0) {
        CHECK_EQ("thread_limit.equals_OMP_THREAD_LIMIT", tl, expect_tl);
        int n = 0;
#pragma omp parallel num_threads(8)
        {
#pragma omp atomic
            n++;
        }
        CHECK("thread_limit.caps_team", n >= 1 && n <= expect_tl, "num_threads(8) ran %d threads with limit %ld", n,
              expect_tl);
    }

    /* omp_get_supported_active_levels is OMP_5.0.1 in libgomp; LLVM libomp 14
     * exports it without that version node, so a direct call would stop the
     * program from loading under libomp.  Look the versioned symbol up. */
    typedef int (*int_fn)(void);
    int_fn gsal = (int_fn)dlvsym(RTLD_DEFAULT, "omp_get_supported_active_levels", "OMP_5.0.1");
    check_known("supported_active_levels.versioned_symbol", gsal != NULL, check_is_libomp(),
                "omp_get_supported_active_levels@OMP_5.0.1 is not exported");
    if (!gsal) gsal = (int_fn)dlsym(RTLD_DEFAULT, "omp_get_supported_active_levels");
    int sup = gsal ? gsal() : 1;
    CHECK("supported_active_levels", sup >= 1, "%d", sup);
    int save_mal = omp_get_max_active_levels();
    CHECK("max_active_levels.range", save_mal >= 0 && save_mal <= sup, "max %d supported %d", save_mal, sup);
    if (sup >= 3) {
        omp_set_max_active_levels(3);
        CHECK_EQ("max_active_levels.set3", omp_get_max_active_levels(), 3);
    }
    omp_set_max_active_levels(1);
    CHECK_EQ("max_active_levels.set1", omp_get_max_active_levels(), 1);
    omp_set_max_active_levels(save_mal);
    CHECK_EQ("max_active_levels.restore", omp_get_max_active_levels(), save_mal);
}

static void wtime(void) {
    double prev = omp_get_wtime(), start = prev;
    int mono = 1;
    for (int k = 0; k < 100000; k++) {
        double t = omp_get_wtime();
        if (t < prev) mono = 0;
        prev = t;
    }
    CHECK("wtime.monotonic", mono, "omp_get_wtime went backwards");
    struct timespec ts = {0, 20 * 1000 * 1000};
    double a = omp_get_wtime();
    nanosleep(&ts, NULL);
    double b = omp_get_wtime();
    CHECK("wtime.measures_seconds", b - a >= 0.019 && b - a < 2.0, "a 20 ms sleep measured %.6f s", b - a);
    double tick = omp_get_wtick();
    CHECK("wtick", tick > 0 && tick < 0.01, "omp_get_wtick()=%g", tick);
    (void)start;
    /* wtime is comparable across threads of the process (same clock) */
    double tt[MAXT];
    int nt = 1;
    double before = omp_get_wtime();
#pragma omp parallel num_threads(4)
    {
        tt[omp_get_thread_num()] = omp_get_wtime();
#pragma omp master
        nt = omp_get_num_threads();
    }
    double after = omp_get_wtime();
    int cross = 1;
    for (int i = 0; i < nt; i++) cross &= tt[i] >= before && tt[i] <= after;
    CHECK("wtime.same_clock_in_threads", cross, "a thread's omp_get_wtime was outside the region's interval");
}

static void schedule_roundtrip(void) {
    omp_sched_t k0;
    int c0;
    omp_get_schedule(&k0, &c0);
    static const struct {
        omp_sched_t k;
        int c;
    } cases[] = {{omp_sched_static, 3}, {omp_sched_dynamic, 5}, {omp_sched_guided, 7}, {omp_sched_dynamic, 1},
                 {omp_sched_static, 100}};
    int ok = 1;
    char why[200] = "";
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        omp_set_schedule(cases[i].k, cases[i].c);
        omp_sched_t k;
        int c;
        omp_get_schedule(&k, &c);
        if (((int)k & ~(int)omp_sched_monotonic) != (int)cases[i].k || c != cases[i].c) {
            ok = 0;
            snprintf(why, sizeof why, "set (%d,%d) got (%d,%d)", cases[i].k, cases[i].c, k, c);
        }
    }
    omp_set_schedule(omp_sched_auto, 0);
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    if (((int)k & ~(int)omp_sched_monotonic) != (int)omp_sched_auto) {
        ok = 0;
        snprintf(why, sizeof why, "set auto got kind %d", k);
    }
    CHECK("schedule.set_get_roundtrip", ok, "%s", why);
    /* with the monotonic modifier (OpenMP 5.0) */
    omp_set_schedule((omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 4);
    omp_get_schedule(&k, &c);
    CHECK("schedule.monotonic_modifier", ((int)k & ~(int)omp_sched_monotonic) == omp_sched_dynamic && c == 4,
          "got kind %#x chunk %d", (unsigned)k, c);
    /* run-sched-var is per task: a change inside a region does not leak out */
    omp_set_schedule(omp_sched_static, 9);
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == omp_get_num_threads() - 1) omp_set_schedule(omp_sched_guided, 2);
    }
    omp_get_schedule(&k, &c);
    CHECK("schedule.per_task_icv", k == omp_sched_static && c == 9, "got (%d,%d) want (static,9)", k, c);
    omp_set_schedule(k0, c0);
}

static const char *bind_name(omp_proc_bind_t b) {
    switch (b) {
    case omp_proc_bind_false: return "false";
    case omp_proc_bind_true: return "true";
    case omp_proc_bind_master: return "master";
    case omp_proc_bind_close: return "close";
    case omp_proc_bind_spread: return "spread";
    }
    return "?";
}

static void places(void) {
    const char *eb = getenv("EXPECT_PROC_BIND");
    omp_proc_bind_t pb = omp_get_proc_bind();
    if (eb && *eb) {
        CHECK("proc_bind.equals_OMP_PROC_BIND", !strcmp(bind_name(pb), eb), "omp_get_proc_bind()=%s want %s",
              bind_name(pb), eb);
    } else {
        CHECK("proc_bind.valid", pb >= omp_proc_bind_false && pb <= omp_proc_bind_spread, "%d", pb);
    }

    int np = omp_get_num_places();
    CHECK("places.count_nonnegative", np >= 0, "omp_get_num_places()=%d", np);
    int ok = 1;
    char why[200] = "";
    cpu_set_t seen;
    CPU_ZERO(&seen);
    int overlap = 0;
    for (int p = 0; p < np; p++) {
        int n = omp_get_place_num_procs(p);
        if (n < 1 || n > CPU_SETSIZE) {
            ok = 0;
            snprintf(why, sizeof why, "place %d has %d procs", p, n);
            break;
        }
        int ids[CPU_SETSIZE];
        for (int i = 0; i < n; i++) ids[i] = -1;
        omp_get_place_proc_ids(p, ids);
        for (int i = 0; i < n; i++) {
            if (ids[i] < 0 || ids[i] >= CPU_SETSIZE) {
                ok = 0;
                snprintf(why, sizeof why, "place %d: proc id %d", p, ids[i]);
                break;
            }
            if (CPU_ISSET(ids[i], &seen)) overlap = 1;
            CPU_SET(ids[i], &seen);
        }
    }
    CHECK("places.proc_ids_consistent", ok, "%s", why);
    /* The spec: zero for a place number outside 0..omp_get_num_places()-1. */
    CHECK("places.out_of_range_queries", omp_get_place_num_procs(np) == 0 && omp_get_place_num_procs(-1) == 0,
          "omp_get_place_num_procs(num_places)=%d, (-1)=%d (want 0)", omp_get_place_num_procs(np),
          omp_get_place_num_procs(-1));

    if (getenv("EXPECT_NUM_PLACES"))
        CHECK_EQ("places.count_expected", np, env_long("EXPECT_NUM_PLACES", -1));
    const char *ep = getenv("EXPECT_PLACES");
    if (ep && (!strcmp(ep, "threads") || !strcmp(ep, "cores"))) {
        /* Places built from the machine cover each available CPU once (the
         * initial thread may already be bound, so count against num_procs). */
        CHECK("places.cover_available_cpus", np >= 1 && !overlap && CPU_COUNT(&seen) == omp_get_num_procs(),
              "%d places, overlap %d, %d CPUs in places vs omp_get_num_procs()=%d", np, overlap, CPU_COUNT(&seen),
              omp_get_num_procs());
        if (!strcmp(ep, "threads")) {
            int one = 1;
            for (int p = 0; p < np; p++) one &= omp_get_place_num_procs(p) == 1;
            CHECK("places.threads_one_proc_each", one, "a place of OMP_PLACES=threads has != 1 procs");
        }
    }

    /* Inside a region: place numbers are valid; with binding on, each thread
     * runs on (and only on) CPUs of its place. */
    int pn[MAXT], cpu[MAXT], inside[MAXT], nthreads = 0;
    int bound = pb != omp_proc_bind_false && np > 0;
#pragma omp parallel num_threads(4)
    {
        int me = omp_get_thread_num();
#pragma omp single
        nthreads = omp_get_num_threads();
        pn[me] = omp_get_place_num();
        cpu[me] = sched_getcpu();
        inside[me] = 1;
        if (bound && pn[me] >= 0) {
            cpu_set_t mine;
            CPU_ZERO(&mine);
            sched_getaffinity(0, sizeof mine, &mine); /* this thread's mask */
            int n = omp_get_place_num_procs(pn[me]);
            int ids[CPU_SETSIZE];
            omp_get_place_proc_ids(pn[me], ids);
            cpu_set_t place;
            CPU_ZERO(&place);
            for (int i = 0; i < n; i++) CPU_SET(ids[i], &place);
            cpu_set_t both;
            CPU_AND(&both, &mine, &place);
            inside[me] = CPU_EQUAL(&both, &mine) && CPU_ISSET(cpu[me], &place);
        }
    }
    ok = 1;
    int all_inside = 1;
    for (int i = 0; i < nthreads; i++) {
        if (np == 0 ? pn[i] != -1 : (pn[i] < (bound ? 0 : -1) || pn[i] >= np)) ok = 0;
        all_inside &= inside[i];
    }
    CHECK("place_num.valid_in_region", ok, "with %d places, thread 0 place %d thread 1 place %d (bound %d)", np, pn[0],
          nthreads > 1 ? pn[1] : -2, bound);
    if (bound)
        CHECK("place_num.thread_runs_in_its_place", all_inside,
              "a thread's affinity mask / current CPU is outside its place");
    int pp = omp_get_partition_num_places();
    CHECK("partition.num_places", pp >= 0 && pp <= np, "omp_get_partition_num_places()=%d with %d places", pp, np);
}

int main(void) {
    check_begin("api");
    basics();
    set_num_threads();
    dynamic_and_limits();
    wtime();
    schedule_roundtrip();
    places();
    return check_done();
}
