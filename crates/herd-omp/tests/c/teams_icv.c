/* The host device's teams ICVs: nteams-var (omp_get_max_teams,
 * omp_set_num_teams, OMP_NUM_TEAMS) and teams-thread-limit-var
 * (omp_get_teams_thread_limit, omp_set_teams_thread_limit,
 * OMP_TEAMS_THREAD_LIMIT).  0 means not set (libgomp's report); the setters
 * take non-negative values and ignore negative ones; both ICVs are
 * device-wide, so a value set inside a parallel region holds after it.
 * EXPECT_NUM_TEAMS / EXPECT_TEAMS_THREAD_LIMIT: the values the environment
 * gives (default 0). */
#include "check.h"

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v ? atoi(v) : dflt;
}

int main(void) {
    check_begin("teams_icv");
    CHECK_EQ("max_teams.initial", omp_get_max_teams(), env_int("EXPECT_NUM_TEAMS", 0));
    CHECK_EQ("teams_thread_limit.initial", omp_get_teams_thread_limit(), env_int("EXPECT_TEAMS_THREAD_LIMIT", 0));
    omp_set_num_teams(3);
    omp_set_teams_thread_limit(5);
    CHECK_EQ("max_teams.set", omp_get_max_teams(), 3);
    CHECK_EQ("teams_thread_limit.set", omp_get_teams_thread_limit(), 5);
    omp_set_num_teams(-2);
    omp_set_teams_thread_limit(-1);
    CHECK_EQ("max_teams.negative_ignored", omp_get_max_teams(), 3);
    CHECK_EQ("teams_thread_limit.negative_ignored", omp_get_teams_thread_limit(), 5);
    int seen = -1;
#pragma omp parallel num_threads(2)
    {
#pragma omp barrier
        if (omp_get_thread_num() == omp_get_num_threads() - 1) omp_set_num_teams(7);
#pragma omp barrier
        if (omp_get_thread_num() == 0) seen = omp_get_max_teams();
    }
    CHECK_EQ("max_teams.device_wide_in_region", seen, 7);
    CHECK_EQ("max_teams.device_wide_after_region", omp_get_max_teams(), 7);
    return check_done();
}
