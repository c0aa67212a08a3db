/* fork(): a child process of an OpenMP program runs OpenMP constructs.
 * The child has only the thread that called fork; herd forgets the pools
 * whose threads it lacks and builds new ones (gcc 12's libgomp hangs in the
 * child's first parallel region with more than one thread: a known
 * deviation, and the child is stopped by alarm() instead of hanging the
 * suite).  The child checks a region's team, tasks, a nested region, host
 * teams and a grandchild; the parent's regions work before and after.  A
 * last child narrows its CPU mask to one CPU before its first region (as a
 * process pool pinning each worker does): every thread of its teams must run
 * within that CPU (herd reads the machine again in the child). */
#include "check.h"
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

static int team_size(void) {
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n += 1;
    return n;
}

/* What a forked process checks; its exit status: the number of failures. */
static int child_work(int want, int depth) {
    alarm(5);
    int bad = 0;
    for (int r = 0; r < 3; r++) bad += team_size() != want;
    int tasks = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < 100; i++) {
#pragma omp task
        __atomic_fetch_add(&tasks, 1, __ATOMIC_RELAXED);
    }
    bad += tasks != 100;
    int inner = 0;
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    __atomic_fetch_add(&inner, 1, __ATOMIC_RELAXED);
    bad += inner != 4;
    int teams = 0;
#pragma omp teams num_teams(2) reduction(+ : teams)
    teams += 1;
    bad += teams != 2;
    if (depth == 0) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) _exit(child_work(want, 1));
        int st = 0;
        bad += waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}

/* A child that narrows its mask to the last CPU it may use, then runs a
 * region of `want` threads: the number of threads bound outside that CPU. */
static int narrowed_child(int want) {
    alarm(5);
    cpu_set_t set, one;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 100;
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) last = c;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return 101;
    int outside = 0, n = 0;
#pragma omp parallel num_threads(want) reduction(+ : outside, n)
    {
        cpu_set_t m;
        sched_getaffinity(0, sizeof m, &m);
        outside += CPU_COUNT(&m) != 1 || !CPU_ISSET(last, &m);
        n += 1;
    }
    return outside + (n != want);
}

/* A child that narrows its mask to one CPU: omp_get_num_procs() must count
 * the CPUs it may still use (libgomp reads the thread's mask), before and
 * (`region`: libgomp's own children hang in a region after a fork, see
 * above) after its first region. The parent asked before forking, so a
 * runtime that keeps its first answer fails. Exit status: the number of
 * wrong answers. */
static int narrowed_num_procs(int region) {
    alarm(5);
    cpu_set_t set, one;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 100;
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &set)) first = c;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return 101;
    int bad = omp_get_num_procs() != 1;
    if (region) {
        int n = 0;
#pragma omp parallel reduction(+ : n)
        n += 1;
        bad += (omp_get_num_procs() != 1) + (n < 1);
    }
    return bad;
}

int main(void) {
    check_begin("fork");
    int want = omp_get_max_threads();
    CHECK_EQ("parent.team_before", team_size(), want);
    for (int round = 0; round < 2; round++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            CHECK("fork", 0, "fork failed");
            break;
        }
        if (pid == 0) _exit(child_work(want, 0));
        int st = 0;
        waitpid(pid, &st, 0);
        int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        char name[64];
        snprintf(name, sizeof name, "child%d.runs_openmp", round);
        check_known(name, ok, check_is_system_libgomp(), "exit status %d, signal %d",
                    WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        if (!ok) break;
        CHECK_EQ("parent.team_between", team_size(), want);
    }
    CHECK_EQ("parent.team_after", team_size(), want);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(narrowed_child(want));
    int st = 0;
    waitpid(pid, &st, 0);
    check_known("narrowed_child.threads_within_its_cpus", WIFEXITED(st) && WEXITSTATUS(st) == 0,
                check_is_system_libgomp(), "exit status %d, signal %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (getenv("OMP_PLACES") == NULL && getenv("GOMP_CPU_AFFINITY") == NULL && getenv("KMP_AFFINITY") == NULL) {
        /* With a place list libgomp answers the count it read at start-up. */
        int procs = omp_get_num_procs();
        fflush(stdout);
        pid = fork();
        if (pid == 0) _exit(narrowed_num_procs(!check_is_system_libgomp()));
        waitpid(pid, &st, 0);
        CHECK("narrowed_child.num_procs", WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "parent %d; child: exit status %d, signal %d", procs, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
              WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    }
    return check_done();
}
