/* bind.c — the runtime keeps the whole machine, whichever way it is loaded.
 *
 * With OMP_PROC_BIND / OMP_PLACES set, libgomp's constructor binds the
 * initial thread to the first place.  When herd's library is preloaded beside
 * the program's own libgomp (LD_PRELOAD=libherd_omp.so), that libgomp is
 * loaded and initialised too; herd must still see every CPU the process was
 * given (not just the first place) and spread a team over them.  run.sh runs
 * this program under every way of loading herd (herd run, LD_PRELOAD,
 * LD_LIBRARY_PATH=<gomp dir>) and under the reference runtimes.
 *
 * Environment (set by run.sh):
 *   EXPECT_CPUS=n      CPUs the process is started with (`nproc` in run.sh)
 *   EXPECT_BOUND=1     binding was requested (OMP_PROC_BIND / OMP_PLACES):
 *                      team members must run on distinct CPUs and places
 *   BIND_ONE_CPU=1     first restrict the process to one CPU (the highest the
 *                      initial thread may use) and re-execute it, as
 *                      `taskset -c <cpu>` would: the runtime must then keep to
 *                      that CPU (it may not widen the set it was given)
 */
#include "check.h"
#include <sched.h>

#define REPS 50

static int mask_count(void) {
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) != 0) return -1;
    return CPU_COUNT(&s);
}

/* Restricts the process to one CPU and executes it again (once). */
static void reexec_on_one_cpu(char **argv) {
    if (getenv("BIND_RESTRICTED_TO")) return;
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) != 0) {
        perror("sched_getaffinity");
        exit(3);
    }
    int cpu = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s)) cpu = c;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    char buf[16];
    snprintf(buf, sizeof buf, "%d", cpu);
    setenv("BIND_RESTRICTED_TO", buf, 1);
    if (sched_setaffinity(0, sizeof s, &s) != 0) {
        perror("sched_setaffinity");
        exit(3);
    }
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    exit(3);
}

int main(int argc, char **argv) {
    (void)argc;
    if (env_long("BIND_ONE_CPU", 0)) reexec_on_one_cpu(argv);
    check_begin("bind");
    long restricted = env_long("BIND_RESTRICTED_TO", -1);
    long cpus = restricted >= 0 ? 1 : env_long("EXPECT_CPUS", 0);
    int bound = env_long("EXPECT_BOUND", 0) != 0;
    printf("# initial thread may use %d CPU(s) at main; expecting %ld%s\n", mask_count(), cpus,
           bound ? ", bound" : "");

    CHECK("num_procs", cpus <= 0 || omp_get_num_procs() == cpus, "omp_get_num_procs()=%d, the process has %ld CPU(s)",
          omp_get_num_procs(), cpus);
    if (bound) {
        int np = omp_get_num_places();
        CHECK("num_places", np >= (cpus < 2 ? 1 : 2), "omp_get_num_places()=%d with %ld CPU(s)", np, cpus);
    }

    int same_cpu = 0, same_place = 0, wrong_size = 0, off_cpu = 0, last_cpu[2] = {-1, -1}, last_place[2] = {-1, -1};
    for (int r = 0; r < REPS; r++) {
        int cpu[2] = {-1, -1}, place[2] = {-1, -1};
#pragma omp parallel num_threads(2)
        {
            int me = omp_get_thread_num();
            if (omp_get_num_threads() != 2) __atomic_store_n(&wrong_size, 1, __ATOMIC_RELAXED);
            if (me < 2) {
                check_spin(2000);
                cpu[me] = sched_getcpu();
                place[me] = omp_get_place_num();
            }
#pragma omp barrier
        }
        if (cpu[0] == cpu[1]) same_cpu++;
        if (place[0] == place[1]) same_place++;
        for (int i = 0; i < 2; i++)
            if (restricted >= 0 && cpu[i] != restricted) off_cpu++;
        last_cpu[0] = cpu[0], last_cpu[1] = cpu[1], last_place[0] = place[0], last_place[1] = place[1];
    }
    CHECK("team_size", !wrong_size, "a region of num_threads(2) did not have 2 threads");
    if (restricted >= 0) {
        CHECK("stays_on_given_cpu", off_cpu == 0, "%d of %d members ran outside CPU %ld (last: CPUs %d,%d)", off_cpu,
              2 * REPS, restricted, last_cpu[0], last_cpu[1]);
    } else if (bound && cpus >= 2) {
        CHECK("distinct_cpus", same_cpu == 0, "%d of %d regions ran both members on one CPU (last: CPUs %d,%d)",
              same_cpu, REPS, last_cpu[0], last_cpu[1]);
        CHECK("distinct_places", same_place == 0, "%d of %d regions had both members in one place (last: %d,%d)",
              same_place, REPS, last_place[0], last_place[1]);
    }
    return check_done();
}
