/* Host teams (OpenMP 5.0 teams outside target; gcc: GOMP_teams_reg):
 * team numbers and counts, the num_teams clause and nteams-var
 * (OMP_NUM_TEAMS / omp_set_num_teams; libgomp's default of 3 teams when
 * neither is given), thread_limit and teams-thread-limit-var as each team's
 * thread limit, omp_get_level()/omp_in_parallel() inside a team, distribute
 * and distribute parallel for covering every iteration once, loop
 * bind(teams), parallel regions inside teams (with team numbers visible to
 * their threads), and reductions across teams (clause and atomics).
 * EXPECT_NUM_TEAMS: the teams a bare `teams` construct makes (default 3).
 * EXPECT_TEAMS_THREAD_LIMIT: teams-thread-limit-var from the environment. */
#include "check.h"

#define N 1000
#define MAXT 64

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v ? atoi(v) : dflt;
}

/* gcc rejects most runtime calls and constructs lexically inside a teams
 * region; called through functions, they run in the team's initial thread. */
static __attribute__((noinline)) int initial_thread_state_bad(int ttl) {
    int bad = 0;
    if (omp_get_level() != 0 || omp_in_parallel() || omp_get_num_threads() != 1 || omp_get_thread_num() != 0) bad++;
    if (omp_get_active_level() != 0) bad++;
    if (ttl > 0 && omp_get_thread_limit() != ttl) bad++;
    return bad;
}

static __attribute__((noinline)) int thread_limit_of_team(void) { return omp_get_thread_limit(); }

static __attribute__((noinline)) void spawn_tasks(int *count, int n) {
    for (int i = 0; i < n; i++) {
#pragma omp task
        __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
    }
}

int main(void) {
    check_begin("teams");
    int want_default = env_int("EXPECT_NUM_TEAMS", 3);
    int ttl = env_int("EXPECT_TEAMS_THREAD_LIMIT", 0);

    /* A bare teams construct: nteams-var, or libgomp's 3. */
    int seen[MAXT] = {0}, nteams = -1, bad = 0;
#pragma omp teams
    {
        int t = omp_get_team_num(), n = omp_get_num_teams();
        if (t == 0) nteams = n;
        if (t < 0 || t >= MAXT || t >= n) bad++;
        else __atomic_fetch_add(&seen[t], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&bad, initial_thread_state_bad(ttl), __ATOMIC_RELAXED);
    }
    CHECK_EQ("default.num_teams", nteams, want_default);
    CHECK_EQ("default.team_state", bad, 0);
    if (nteams > 0 && nteams <= MAXT) check_counts("default.each_team_once", seen, nteams, 1);

    /* num_teams clause: each team number exactly once, teams may run at once. */
    for (int k = 1; k <= 9; k += 4) {
        int cnt[MAXT] = {0}, n_seen = 0;
        bad = 0;
#pragma omp teams num_teams(k)
        {
            if (omp_get_num_teams() != k) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
            int t = omp_get_team_num();
            if (t >= 0 && t < MAXT) __atomic_fetch_add(&cnt[t], 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&n_seen, 1, __ATOMIC_RELAXED);
        }
        char name[64];
        snprintf(name, sizeof name, "num_teams(%d).count", k);
        CHECK_EQ(name, n_seen, k);
        snprintf(name, sizeof name, "num_teams(%d).num_teams", k);
        CHECK_EQ(name, bad, 0);
        snprintf(name, sizeof name, "num_teams(%d).each_once", k);
        check_counts(name, cnt, k, 1);
    }
    CHECK_EQ("outside.num_teams", omp_get_num_teams(), 1);
    CHECK_EQ("outside.team_num", omp_get_team_num(), 0);

    /* thread_limit clause: the thread limit of each team; parallel inside a
     * team has at most that many threads and sees the team number. */
    int lim_bad = 0, par_bad = 0, max_team = 0;
    int thr_in[4] = {0};
#pragma omp teams num_teams(4) thread_limit(2)
    {
        int t = omp_get_team_num();
        if (thread_limit_of_team() != 2) __atomic_fetch_add(&lim_bad, 1, __ATOMIC_RELAXED);
#pragma omp parallel num_threads(3)
        {
            if (omp_get_team_num() != t || omp_get_num_teams() != 4) __atomic_fetch_add(&par_bad, 1, __ATOMIC_RELAXED);
            if (omp_get_level() != 1 || !(omp_get_num_threads() == 1 || omp_in_parallel()))
                __atomic_fetch_add(&par_bad, 1, __ATOMIC_RELAXED);
            int nt = omp_get_num_threads();
            int m = __atomic_load_n(&max_team, __ATOMIC_RELAXED);
            while (nt > m && !__atomic_compare_exchange_n(&max_team, &m, nt, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            }
            __atomic_fetch_add(&thr_in[t & 3], 1, __ATOMIC_RELAXED);
        }
    }
    CHECK_EQ("thread_limit.icv", lim_bad, 0);
    CHECK_EQ("thread_limit.parallel_sees_team", par_bad, 0);
    CHECK("thread_limit.bounds_parallel", max_team >= 1 && max_team <= 2, "largest team inside a team %d, limit 2",
          max_team);
    int sum = thr_in[0] + thr_in[1] + thr_in[2] + thr_in[3];
    CHECK("thread_limit.every_team_ran", sum >= 4 && sum <= 8, "%d implicit tasks in 4 teams of at most 2", sum);

    /* Parallel inside teams: full teams when no limit applies. */
    int full[2] = {0};
#pragma omp teams num_teams(2)
    {
        int t = omp_get_team_num();
#pragma omp parallel num_threads(2)
        {
            if (omp_get_num_threads() == 2 && t < 2) __atomic_fetch_add(&full[t], 1, __ATOMIC_RELAXED);
        }
    }
    if (ttl == 0 || ttl >= 2) {
        CHECK_EQ("parallel_in_teams.team0", full[0], 2);
        CHECK_EQ("parallel_in_teams.team1", full[1], 2);
    }

    /* omp_set_num_teams sets the default. */
    omp_set_num_teams(5);
    int n5 = 0;
#pragma omp teams
    {
        if (omp_get_team_num() == 0) n5 = omp_get_num_teams();
    }
    CHECK_EQ("omp_set_num_teams.used", n5, 5);

    /* distribute: every iteration exactly once, across the teams. */
    static int hits[N];
    memset(hits, 0, sizeof hits);
#pragma omp teams num_teams(3)
#pragma omp distribute
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    check_counts("distribute.each_once", hits, N, 1);

    memset(hits, 0, sizeof hits);
#pragma omp teams distribute dist_schedule(static, 7) num_teams(4)
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    check_counts("distribute.dist_schedule.each_once", hits, N, 1);

    memset(hits, 0, sizeof hits);
#pragma omp teams distribute parallel for num_teams(2) num_threads(2)
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    check_counts("distribute_parallel_for.each_once", hits, N, 1);

    memset(hits, 0, sizeof hits);
#pragma omp teams num_teams(3)
#pragma omp loop bind(teams)
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    check_counts("loop_bind_teams.each_once", hits, N, 1);

    /* Reductions across teams: the clause, and atomics. */
    long red = 0, atom = 0;
#pragma omp teams distribute num_teams(4) reduction(+ : red)
    for (int i = 1; i <= N; i++) red += i;
    CHECK_EQ("reduction.clause", red, (long)N * (N + 1) / 2);
#pragma omp teams num_teams(6)
    {
        long part = 0;
        for (int i = omp_get_team_num(); i < N; i += omp_get_num_teams()) part += i + 1;
        __atomic_fetch_add(&atom, part, __ATOMIC_RELAXED);
    }
    CHECK_EQ("reduction.atomic", atom, (long)N * (N + 1) / 2);

    /* Tasks inside a team's initial thread complete before the team ends. */
    int tasks = 0;
#pragma omp teams num_teams(2)
    spawn_tasks(&tasks, 10);
    CHECK_EQ("tasks_in_team", tasks, 20);
    return check_done();
}
