/* libomp's KMP_* variables under herd (libgomp ignores them all: each check
 * is a known deviation of the system libgomp; libomp honours them natively).
 *
 *   KMP_EXPLICIT=a,b   KMP_AFFINITY=granularity=fine,explicit,proclist=[a,b]
 *                      is set: places {a},{b}; a two-thread team runs on
 *                      CPU a (thread 0) and CPU b (thread 1)
 *   KMP_EXPECT_UNBOUND KMP_AFFINITY=none is set beside OMP_PLACES/OMP_PROC_BIND:
 *                      KMP_AFFINITY wins, nothing is bound
 *   EXPECT_TEAMS_THREAD_LIMIT, EXPECT_THREAD_LIMIT: what omp_get_teams_thread_limit
 *                      and omp_get_thread_limit report (KMP_TEAMS_THREAD_LIMIT,
 *                      KMP_DEVICE_THREAD_LIMIT)
 *   EXPECT_STACK_MB=n  KMP_STACKSIZE is set: every worker puts n - 2 MiB on its
 *                      stack (skipped under the system libgomp, where it would crash) */
#include "check.h"
#include <string.h>

static int place_is(int p, int cpu) {
    int ids[4];
    if (omp_get_place_num_procs(p) != 1) return 0;
    omp_get_place_proc_ids(p, ids);
    return ids[0] == cpu;
}

int main(void) {
    check_begin("kmp_env");
    int gomp = check_is_system_libgomp();
    const char *ex = getenv("KMP_EXPLICIT");
    if (ex) {
        int a = -1, b = -1;
        sscanf(ex, "%d,%d", &a, &b);
        int np = omp_get_num_places();
        check_known("explicit.places", np == 2 && place_is(0, a) && place_is(1, b), gomp,
                    "%d places, want {%d},{%d}", np, a, b);
        int cpu[2] = {-1, -1}, place[2] = {-9, -9};
#pragma omp parallel num_threads(2)
        {
            int t = omp_get_thread_num();
            cpu[t] = sched_getcpu();
            place[t] = omp_get_place_num();
        }
        check_known("explicit.threads_run_there", cpu[0] == a && cpu[1] == b && place[0] == 0 && place[1] == 1, gomp,
                    "threads on CPUs %d,%d (places %d,%d), want %d,%d", cpu[0], cpu[1], place[0], place[1], a, b);
    }
    if (getenv("KMP_EXPECT_UNBOUND")) {
        int bind = (int)omp_get_proc_bind(), unbound = 0;
#pragma omp parallel num_threads(2) reduction(+ : unbound)
        unbound += omp_get_place_num() == -1;
        check_known("none.unbound", bind == 0 && unbound == 2, gomp, "bind-var %d, %d of 2 threads unbound", bind,
                    unbound);
    }
    long ttl = env_long("EXPECT_TEAMS_THREAD_LIMIT", -1), tl = env_long("EXPECT_THREAD_LIMIT", -1);
    if (ttl > 0)
        check_known("teams_thread_limit", omp_get_teams_thread_limit() == ttl, gomp, "%d, want %ld",
                    omp_get_teams_thread_limit(), ttl);
    if (tl > 0)
        check_known("thread_limit", omp_get_thread_limit() == tl, gomp, "%d, want %ld", omp_get_thread_limit(), tl);
    long mb = env_long("EXPECT_STACK_MB", 0);
    if (mb > 2 && !gomp) {
        int workers = 0, wrong = check_worker_stacks(mb, 2, &workers);
        CHECK("stacksize.per_worker", wrong == 0 && workers == 1, "%d of %d workers summed wrongly", wrong, workers);
    }
    int sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    sum += omp_get_thread_num() + 1;
    CHECK_EQ("region.sum", sum, 3);
    return check_done();
}
