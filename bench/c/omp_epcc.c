/* Overheads of the OpenMP synchronisation and loop-scheduling constructs,
 * and of tasks, measured the EPCC way (EPCC OpenMP micro-benchmark suite
 * v3.x, syncbench, schedbench and taskbench; this is an independent
 * implementation of that method).
 *
 * usage: omp_epcc [--samples N] [--target-ms T] [--delay-us D] [--only a,b,...]
 *                 [--idle-ms M [--idle-reps R]]
 *
 * Method. A "delay" is a dependent chain of float additions calibrated to
 * take D µs (default 0.1, EPCC's default). For each construct, the test
 * executes the construct `innerreps` times around the delay (e.g. a
 * `parallel` region whose body is one delay), and the reference executes the
 * same delays without the construct, on one thread. innerreps starts at 8
 * and doubles until a test takes at least T ms (default 2; the least of 3
 * tries at each size). Then N outer
 * samples (default 20, EPCC's default) each time the reference and the test
 * (one after the other, same innerreps); the overhead of the construct is
 * median(test) - median(reference), per construct execution, in
 * microseconds (EPCC's "median overhead"). The samples' spread is reported
 * as min/max of test_k - median(reference).
 *
 * After-idle condition (--idle-ms M, M > 0; the default 0 is the warm
 * condition above). What a program pays when it enters a construct after a
 * pause, once the runtime's workers have gone to sleep (or are still
 * spinning: libgomp spins GOMP_SPINCOUNT iterations, LLVM libomp
 * KMP_BLOCKTIME = 200 ms by default, before sleeping). innerreps is R
 * (--idle-reps, default 1: only the first construct after the pause; for
 * critical, lock and atomic R per thread), not calibrated. Each of the N
 * samples sleeps M ms on the master thread outside any parallel region,
 * then times the reference; sleeps M ms again, then times the test; the
 * overhead is reported as in the warm condition (per construct, median of
 * test_k - median(reference)). Sleeping before the reference too charges
 * the master core's own wake-up (frequency, caches) to both sides. The
 * constructs that run inside one parallel region (for, barrier, single,
 * critical, lock, atomic, schedbench, pingpong) then include that region's
 * start: the team has to be woken either way.
 *
 * Constructs (2 threads: one delay per thread per construct, as EPCC):
 *   parallel      #pragma omp parallel { delay }
 *   for           inside one parallel: #pragma omp for (nthreads iterations,
 *                 default schedule = static), one delay per iteration, with
 *                 its implied barrier
 *   parallel_for  #pragma omp parallel for over nthreads iterations
 *   barrier       inside one parallel: delay; #pragma omp barrier
 *   single        inside one parallel: #pragma omp single { delay }
 *   critical      inside one parallel, innerreps/nthreads per thread:
 *                 #pragma omp critical { delay }
 *   lock          the same with omp_set_lock / omp_unset_lock
 *   atomic        innerreps/nthreads per thread: #pragma omp atomic x += 1.0
 *                 (double; GCC compiles it inline as a compare-and-swap
 *                 loop, so no runtime call is involved); its reference is a
 *                 chain of innerreps double additions
 *   reduction     #pragma omp parallel reduction(+:x) { delay; x += 1 };
 *                 reference: delay; x += 1
 *   sched_static, sched_static_1, sched_dynamic_1, sched_dynamic_16,
 *   sched_guided_1
 *                 schedbench: inside one parallel, #pragma omp for
 *                 schedule(static | static,1 | dynamic,1 | dynamic,16 |
 *                 guided,1) over 128 iterations per thread, one delay per
 *                 iteration; reference: 128 delays. Overhead per loop.
 *                 (EPCC's schedbench default is 1024 iterations per thread;
 *                 128 keeps the noise from unequal vCPU speeds, a few % of
 *                 the loop's time, small against the scheduling costs.)
 *   pingpong      not a construct: the floor. Inside one region (whose
 *                 cost is not timed) threads 0 and 1 bounce one cache line
 *                 innerreps times, one round trip each (what any 2-thread
 *                 fork-join or barrier must at least pay on this machine);
 *                 reference: the same stores on one thread. Watching it
 *                 round by round tells hardware/VM variation (e.g. where the
 *                 hypervisor puts the vCPUs) from runtime costs.
 *
 * Task constructs (taskbench). innerreps counts delays per thread, each
 * delay in a task of its own, and the reference is innerreps delays, so the
 * overhead is per task and thread (EPCC's definition); every test is one
 * parallel region, whose end barrier waits for the tasks.
 *   parallel-task every thread creates innerreps tasks #pragma omp task
 *                 { delay }
 *   master-task   inside #pragma omp master, the master creates
 *                 innerreps * nthreads such tasks
 *   taskwait      every thread, innerreps times: task { delay };
 *                 #pragma omp taskwait
 *   task-barrier  every thread, innerreps times: task { delay };
 *                 #pragma omp barrier
 *   nested-task   every thread creates innerreps / nthreads tasks, each of
 *                 which creates nthreads untied tasks { delay } and waits
 *                 for them (taskwait)
 *   nested-master-task
 *                 the same, the master creating innerreps outer tasks (the
 *                 inner ones tied, as EPCC)
 *   branch-tree   every thread creates innerreps / 2^8 tasks, each the
 *                 root of a binary tree of tasks 8 levels deep (2^8 tasks),
 *                 every task with a delay
 *   leaf-tree     every thread grows innerreps / 2^8 binary trees of tasks
 *                 8 levels deep whose 2^8 leaves (no tasks themselves) do
 *                 the delays (2^8 - 1 tasks per tree)
 *                 (EPCC v3.1 uses depth 6.) After idle, the trees' unit is
 *                 one tree per thread: --idle-reps R times 2^8 delays.
 *
 * Every construct is also checked, untimed, by a variant that verifies its
 * semantics (team size, each iteration once, barrier ordering, single
 * executed once, mutual exclusion of critical and lock, atomicity, the
 * reduction's value; every task construct runs its test once counting the
 * delays its tasks run, which must be innerreps * nthreads, and taskwait and
 * task-barrier check that the tasks have run when they return); a failure
 * exits with status 1.
 *
 * Output: one JSON line per construct (bench "omp_epcc", case = construct,
 * value = overhead in µs, plus test_us, ref_us, min, max, innerreps,
 * samples, delay_us, condition "warm" or "idle", idle_ms). Built without -fopenmp (omp_epcc_serial) every
 * construct is a no-op: the "overheads" then show the floor of the method. */
#include "bench.h"
#include <errno.h>

#define MAXT 64
#define PAD 16 /* longs: 128 bytes between per-thread counters */
#define ITERS_PER_THREAD 128
#define MAX_SAMPLES 1000

static const char *bench = "omp_epcc";
static int nthreads;
static long delaylength;
static omp_lock_t lock;

/* ---- delay ---- */

__attribute__((noinline)) static void delay(long n) {
    float a = 0.0f;
    for (long i = 0; i < n; i++) a += (float)i;
    __asm__ volatile("" ::"x"(a));
}

/* Seconds per delay(n), the least of a few measurements. */
static double time_delay(long n) {
    double best = 1e30;
    for (int k = 0; k < 5; k++) {
        double t0 = mono_now();
        for (int i = 0; i < 2000; i++) delay(n);
        double t = (mono_now() - t0) / 2000;
        if (t < best) best = t;
    }
    return best;
}

/* The delay length (iterations) that takes `us` microseconds. */
static long calibrate_delay(double us) {
    long n = 1;
    while (time_delay(n) * 1e6 < us && n < (1L << 30)) n = n * 11 / 10 + 1;
    return n;
}

/* Sleeps `ms` milliseconds (the master thread, outside any parallel region). */
static void sleep_ms(double ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- timed tests and their references: seconds for `reps` constructs ---- */

static double ref_delay(long reps) {
    double t0 = mono_now();
    for (long j = 0; j < reps; j++) delay(delaylength);
    return mono_now() - t0;
}

static double ref_atomic(long reps) {
    double x = 0.0;
    double t0 = mono_now();
    for (long j = 0; j < reps; j++) {
        x += 1.0;
        __asm__ volatile("" : "+x"(x));
    }
    double t = mono_now() - t0;
    if (x != (double)reps) die(bench, "reference atomic loop miscounted");
    return t;
}

static double ref_reduction(long reps) {
    int x = 0;
    double t0 = mono_now();
    for (long j = 0; j < reps; j++) {
        delay(delaylength);
        x += 1;
        __asm__ volatile("" : "+r"(x));
    }
    return mono_now() - t0;
}

static double ref_sched(long reps) {
    double t0 = mono_now();
    for (long j = 0; j < reps; j++)
        for (int i = 0; i < ITERS_PER_THREAD; i++) delay(delaylength);
    return mono_now() - t0;
}

static double test_parallel(long reps) {
    double t0 = mono_now();
    for (long j = 0; j < reps; j++) {
#pragma omp parallel
        delay(delaylength);
    }
    return mono_now() - t0;
}

/* Nested parallel: an outer team of nthreads, each member opening reps inner
 * regions of 2 threads (max-active-levels 2), each member of which runs one
 * delay: the cost of starting and ending a nested active region while the
 * other outer members do the same. (2 × nthreads threads in all: on fewer
 * cores every runtime is oversubscribed alike.) */
static double test_nested_parallel(long reps) {
    int save = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
    double t0 = mono_now();
#pragma omp parallel
    for (long j = 0; j < reps; j++) {
#pragma omp parallel num_threads(2)
        delay(delaylength);
    }
    double t = mono_now() - t0;
    omp_set_max_active_levels(save);
    return t;
}

static double test_for(long reps) {
    int nt = nthreads;
    double t0 = mono_now();
#pragma omp parallel
    for (long j = 0; j < reps; j++) {
#pragma omp for
        for (int i = 0; i < nt; i++) delay(delaylength);
    }
    return mono_now() - t0;
}

static double test_parallel_for(long reps) {
    int nt = nthreads;
    double t0 = mono_now();
    for (long j = 0; j < reps; j++) {
#pragma omp parallel for
        for (int i = 0; i < nt; i++) delay(delaylength);
    }
    return mono_now() - t0;
}

static double test_barrier(long reps) {
    double t0 = mono_now();
#pragma omp parallel
    for (long j = 0; j < reps; j++) {
        delay(delaylength);
#pragma omp barrier
    }
    return mono_now() - t0;
}

static double test_single(long reps) {
    double t0 = mono_now();
#pragma omp parallel
    for (long j = 0; j < reps; j++) {
#pragma omp single
        delay(delaylength);
    }
    return mono_now() - t0;
}

static double test_critical(long reps) {
    long per_thread = reps / nthreads;
    double t0 = mono_now();
#pragma omp parallel
    for (long j = 0; j < per_thread; j++) {
#pragma omp critical
        delay(delaylength);
    }
    return mono_now() - t0;
}

static double test_lock(long reps) {
    long per_thread = reps / nthreads;
    double t0 = mono_now();
#pragma omp parallel
    for (long j = 0; j < per_thread; j++) {
        omp_set_lock(&lock);
        delay(delaylength);
        omp_unset_lock(&lock);
    }
    return mono_now() - t0;
}

static double atomic_x;

static double test_atomic(long reps) {
    long per_thread = reps / nthreads;
    atomic_x = 0.0;
    double t0 = mono_now();
#pragma omp parallel
    for (long j = 0; j < per_thread; j++) {
#pragma omp atomic
        atomic_x += 1.0;
    }
    double t = mono_now() - t0;
    if (atomic_x != (double)(per_thread * nthreads)) die(bench, "atomic: lost updates");
    return t;
}

static double test_reduction(long reps) {
    int x = 0;
    double t0 = mono_now();
    for (long j = 0; j < reps; j++) {
#pragma omp parallel reduction(+ : x)
        {
            delay(delaylength);
            x += 1;
        }
    }
    double t = mono_now() - t0;
    if (x != reps * nthreads) die(bench, "reduction: wrong sum");
    return t;
}

/* The hardware floor: inside one region (not timed), thread 0 and thread 1
 * bounce one cache line (a counter each increments in turn) `reps` times;
 * thread 0 times it. One round trip per rep; no runtime call. */
static long pingpong_flag __attribute__((aligned(128)));

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("pause" ::: "memory");
#else
    __asm__ volatile("" ::: "memory");
#endif
}

static double test_pingpong(long reps) {
    double t = 0;
    pingpong_flag = 0;
#pragma omp parallel
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp barrier
        if (me == 0) {
            double t0 = mono_now();
            for (long j = 0; j < reps; j++) {
                __atomic_store_n(&pingpong_flag, 2 * j + 1, __ATOMIC_RELEASE);
                if (n == 1) __atomic_store_n(&pingpong_flag, 2 * j + 2, __ATOMIC_RELEASE);
                while (__atomic_load_n(&pingpong_flag, __ATOMIC_ACQUIRE) != 2 * j + 2) cpu_relax();
            }
            t = mono_now() - t0;
        } else if (me == 1) {
            for (long j = 0; j < reps; j++) {
                while (__atomic_load_n(&pingpong_flag, __ATOMIC_ACQUIRE) != 2 * j + 1) cpu_relax();
                __atomic_store_n(&pingpong_flag, 2 * j + 2, __ATOMIC_RELEASE);
            }
        }
    }
    return t;
}

/* Its reference: the same stores and loads on one thread, no partner. */
static double ref_pingpong(long reps) {
    pingpong_flag = 0;
    double t0 = mono_now();
    for (long j = 0; j < reps; j++) {
        __atomic_store_n(&pingpong_flag, 2 * j + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&pingpong_flag, 2 * j + 2, __ATOMIC_RELEASE);
        while (__atomic_load_n(&pingpong_flag, __ATOMIC_ACQUIRE) != 2 * j + 2) cpu_relax();
    }
    return mono_now() - t0;
}

static const char *check_pingpong(void) {
    test_pingpong(1000);
    return pingpong_flag == 2000 ? NULL : "pingpong: wrong final count";
}

#define SCHED_TEST(fname, clause)                                                                                 \
    static double fname(long reps) {                                                                              \
        int n = ITERS_PER_THREAD * nthreads;                                                                      \
        double t0 = mono_now();                                                                                   \
        _Pragma("omp parallel") for (long j = 0; j < reps; j++) {                                                 \
            _Pragma(clause) for (int i = 0; i < n; i++) delay(delaylength);                                       \
        }                                                                                                         \
        return mono_now() - t0;                                                                                   \
    }

SCHED_TEST(test_sched_static, "omp for schedule(static)")
SCHED_TEST(test_sched_static_1, "omp for schedule(static, 1)")
SCHED_TEST(test_sched_dynamic_1, "omp for schedule(dynamic, 1)")
SCHED_TEST(test_sched_dynamic_16, "omp for schedule(dynamic, 16)")
SCHED_TEST(test_sched_guided_1, "omp for schedule(guided, 1)")

/* ---- semantic checks (untimed): NULL when right, else what is wrong ---- */

#define CHECK_REPS 1000
static long cnt[MAXT * PAD];
static volatile long shared_count;
static int hits[ITERS_PER_THREAD * MAXT];
static volatile int failed;

static void reset(void) {
    memset(cnt, 0, sizeof cnt);
    memset(hits, 0, sizeof hits);
    shared_count = 0;
    failed = 0;
}

static const char *check_nested_parallel(void) {
    int save = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
#ifdef _OPENMP
    const int inner = 2, level = 2, active = nthreads > 1 ? 2 : 1;
#else
    const int inner = 1, level = 0, active = 0;
#endif
    reset();
#pragma omp parallel
    for (int j = 0; j < CHECK_REPS; j++) {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
        {
            if (omp_get_num_threads() != inner || omp_get_level() != level || omp_get_active_level() != active ||
                omp_get_ancestor_thread_num(level > 0 ? 1 : 0) != outer || outer >= MAXT)
                failed = 1;
            else if (omp_get_thread_num() == inner - 1)
                __atomic_fetch_add(&cnt[outer * PAD], 1, __ATOMIC_RELAXED);
        }
    }
    omp_set_max_active_levels(save);
    if (failed) return "a nested region ran with the wrong team, level or ancestor";
    for (int t = 0; t < nthreads; t++)
        if (cnt[t * PAD] != CHECK_REPS) return "an inner team missed its second member";
    return NULL;
}

static const char *check_team_size(void) {
    reset();
    for (int j = 0; j < CHECK_REPS; j++) {
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            if (omp_get_num_threads() != nthreads || t >= MAXT) failed = 1;
            else cnt[t * PAD]++;
        }
    }
    if (failed) return "a region ran with the wrong team";
    for (int t = 0; t < nthreads; t++)
        if (cnt[t * PAD] != CHECK_REPS) return "a thread missed regions";
    return NULL;
}

/* Every iteration of 0..n ran exactly `times` times. */
static const char *check_hits(int n, int times) {
    for (int i = 0; i < n; i++)
        if (hits[i] != times) return "an iteration ran a wrong number of times";
    return NULL;
}

static const char *check_for(void) {
    reset();
    int n = 4 * nthreads;
#pragma omp parallel
    for (int j = 0; j < CHECK_REPS; j++) {
#pragma omp for
        for (int i = 0; i < n; i++) hits[i]++;
        /* implied barrier: every iteration of this loop is done */
        for (int i = 0; i < n; i++)
            if (hits[i] < j + 1) failed = 1;
#pragma omp barrier
    }
    return failed ? "for: iterations not done at the implied barrier" : check_hits(n, CHECK_REPS);
}

static const char *check_parallel_for(void) {
    reset();
    int n = 4 * nthreads;
    for (int j = 0; j < CHECK_REPS; j++) {
#pragma omp parallel for
        for (int i = 0; i < n; i++) hits[i]++;
    }
    return check_hits(n, CHECK_REPS);
}

static const char *check_single(void) {
    reset();
#pragma omp parallel
    for (long j = 0; j < CHECK_REPS; j++) {
#pragma omp single
        shared_count = shared_count + 1;
        /* implied barrier: this single has run */
        if (shared_count < j + 1) failed = 1;
    }
    if (failed) return "single: not done at its implied barrier";
    return shared_count == CHECK_REPS ? NULL : "single: executed a wrong number of times";
}

/* Non-atomic read-modify-write with a delay in between: any overlap of two
 * critical sections loses an update. */
static const char *check_critical(void) {
    reset();
#pragma omp parallel
    for (int j = 0; j < CHECK_REPS; j++) {
#pragma omp critical
        {
            long v = shared_count;
            delay(delaylength);
            shared_count = v + 1;
        }
    }
    return shared_count == (long)CHECK_REPS * nthreads ? NULL : "critical: no mutual exclusion";
}

static const char *check_lock(void) {
    reset();
#pragma omp parallel
    for (int j = 0; j < CHECK_REPS; j++) {
        omp_set_lock(&lock);
        long v = shared_count;
        delay(delaylength);
        shared_count = v + 1;
        omp_unset_lock(&lock);
    }
    return shared_count == (long)CHECK_REPS * nthreads ? NULL : "lock: no mutual exclusion";
}

static const char *check_atomic(void) {
    double x = 0.0;
#pragma omp parallel
    for (int j = 0; j < 100 * CHECK_REPS; j++) {
#pragma omp atomic
        x += 1.0;
    }
    return x == 100.0 * CHECK_REPS * nthreads ? NULL : "atomic: lost updates";
}

static const char *check_reduction(void) {
    for (int j = 0; j < CHECK_REPS; j++) {
        long x = j;
#pragma omp parallel reduction(+ : x)
        x += omp_get_thread_num() + 1;
        if (x != j + (long)nthreads * (nthreads + 1) / 2) return "reduction: wrong value";
    }
    return NULL;
}

#define SCHED_CHECK(fname, clause)                                                                                \
    static const char *fname(void) {                                                                              \
        reset();                                                                                                  \
        int n = ITERS_PER_THREAD * nthreads;                                                                      \
        _Pragma("omp parallel") for (int j = 0; j < 20; j++) {                                                    \
            _Pragma(clause) for (int i = 0; i < n; i++) hits[i]++;                                                \
            for (int i = 0; i < n; i++)                                                                           \
                if (hits[i] < j + 1) failed = 1;                                                                  \
            _Pragma("omp barrier")                                                                                \
        }                                                                                                         \
        return failed ? "loop: iterations not done at the implied barrier" : check_hits(n, 20);                   \
    }

SCHED_CHECK(check_sched_static, "omp for schedule(static)")
SCHED_CHECK(check_sched_static_1, "omp for schedule(static, 1)")
SCHED_CHECK(check_sched_dynamic_1, "omp for schedule(dynamic, 1)")
SCHED_CHECK(check_sched_dynamic_16, "omp for schedule(dynamic, 16)")
SCHED_CHECK(check_sched_guided_1, "omp for schedule(guided, 1)")

/* ---- taskbench: the tasks count their delays when `counting` (checks) ---- */

#define TREE_DEPTH 8
#define TREE_TASKS (1L << TREE_DEPTH) /* delays (and tasks) per tree */
static int counting;
static long task_count;

/* The work of one task: a delay, counted during the checks. */
static inline void task_delay(void) {
    delay(delaylength);
    if (counting) __atomic_fetch_add(&task_count, 1, __ATOMIC_RELAXED);
}

/* A task that creates nthreads tasks and waits for them. */
static void nested_tasks(int untied) {
    int nt = nthreads;
    if (untied) {
        for (int i = 0; i < nt; i++) {
#pragma omp task untied
            task_delay();
        }
    } else {
        for (int i = 0; i < nt; i++) {
#pragma omp task
            task_delay();
        }
    }
#pragma omp taskwait
}

/* A binary tree of tasks `level` deep, every task (each level) with a delay:
 * 2^level - 1 tasks and delays. */
static void branch_tree(int level) {
    if (level > 0) {
#pragma omp task
        {
            branch_tree(level - 1);
            branch_tree(level - 1);
            task_delay();
        }
    }
}

/* A binary tree of tasks `level` deep whose 2^level leaves do the delays. */
static void leaf_tree(int level) {
    if (level == 0) task_delay();
    else {
#pragma omp task
        {
            leaf_tree(level - 1);
            leaf_tree(level - 1);
        }
    }
}

/* What each step of a task test creates, and what it does after. */
enum body { DELAY, NESTED, NESTED_UNTIED, BRANCH_TREE, LEAF_TREE };
enum after { NOTHING, TASKWAIT, BARRIER };

static void steps(long n, enum body body, enum after after) {
    for (long j = 0; j < n; j++) {
        switch (body) {
        case DELAY:
#pragma omp task
            task_delay();
            break;
        case NESTED:
#pragma omp task
            nested_tasks(0);
            break;
        case NESTED_UNTIED:
#pragma omp task
            nested_tasks(1);
            break;
        case BRANCH_TREE: /* 2^TREE_DEPTH tasks and delays */
#pragma omp task
            {
                branch_tree(TREE_DEPTH);
                task_delay();
            }
            break;
        case LEAF_TREE:
            leaf_tree(TREE_DEPTH);
            break;
        }
        if (after == TASKWAIT) {
#pragma omp taskwait
        } else if (after == BARRIER) {
#pragma omp barrier
        }
    }
}

/* One parallel region in which every thread (or only the master, inside
 * `master`) runs n steps; its end barrier waits for the tasks. */
static double task_test(long n, int by_master, enum body body, enum after after) {
    double t0 = mono_now();
#pragma omp parallel
    {
        if (by_master) {
#pragma omp master
            steps(n, body, after);
        } else {
            steps(n, body, after);
        }
    }
    return mono_now() - t0;
}

/* Each performs reps * nthreads task_delay()s in all: reps per thread. */
static double test_parallel_task(long reps) { return task_test(reps, 0, DELAY, NOTHING); }
static double test_master_task(long reps) { return task_test(reps * nthreads, 1, DELAY, NOTHING); }
static double test_taskwait(long reps) { return task_test(reps, 0, DELAY, TASKWAIT); }
static double test_task_barrier(long reps) { return task_test(reps, 0, DELAY, BARRIER); }
/* (EPCC: the inner tasks untied here, tied in nested-master-task) */
static double test_nested_task(long reps) { return task_test(reps / nthreads, 0, NESTED_UNTIED, NOTHING); }
static double test_nested_master_task(long reps) { return task_test(reps, 1, NESTED, NOTHING); }
static double test_branch_tree(long reps) { return task_test(reps >> TREE_DEPTH, 0, BRANCH_TREE, NOTHING); }
static double test_leaf_tree(long reps) { return task_test(reps >> TREE_DEPTH, 0, LEAF_TREE, NOTHING); }

/* Ordering. Every thread, CHECK_REPS times: sets its counter to j + 1 (in
 * a task unless after == NOTHING), then a barrier (a taskwait if after ==
 * TASKWAIT); then the counters (its own after a taskwait) must be j + 1. */
static const char *check_sync(enum after after) {
    reset();
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        for (long j = 0; j < CHECK_REPS; j++) {
            if (after == NOTHING) __atomic_store_n(&cnt[me * PAD], j + 1, __ATOMIC_RELAXED);
            else {
#pragma omp task
                __atomic_store_n(&cnt[me * PAD], j + 1, __ATOMIC_RELAXED);
            }
            if (after == TASKWAIT) {
#pragma omp taskwait
            } else {
#pragma omp barrier
            }
            for (int t = 0; t < nthreads; t++)
                if ((after != TASKWAIT || t == me) && __atomic_load_n(&cnt[t * PAD], __ATOMIC_RELAXED) < j + 1)
                    failed = 1;
#pragma omp barrier
        }
    }
    if (!failed) return NULL;
    return after == NOTHING    ? "barrier: a thread passed before all arrived"
           : after == TASKWAIT ? "taskwait: a child task had not run"
                               : "task barrier: a task had not run";
}

static const char *check_barrier(void) { return check_sync(NOTHING); }
static const char *check_taskwait(void) { return check_sync(TASKWAIT); }
static const char *check_task_barrier(void) { return check_sync(BARRIER); }

/* ---- driver ---- */

struct construct {
    const char *name;
    double (*test)(long reps);
    double (*ref)(long reps);
    const char *(*check)(void); /* NULL: none, but see COUNTED */
    int flags;
};
/* flags */
#define PER_THREAD 1 /* test(reps) runs reps / nthreads constructs per thread */
#define COUNTED 2    /* test(reps) runs reps * nthreads task_delay()s: checked by counting them */
#define TREE 4       /* reps must be a multiple of TREE_TASKS */

static const struct construct CONSTRUCTS[] = {
    {"parallel", test_parallel, ref_delay, check_team_size, 0},
    {"nested_parallel", test_nested_parallel, ref_delay, check_nested_parallel, 0},
    {"for", test_for, ref_delay, check_for, 0},
    {"parallel_for", test_parallel_for, ref_delay, check_parallel_for, 0},
    {"barrier", test_barrier, ref_delay, check_barrier, 0},
    {"single", test_single, ref_delay, check_single, 0},
    {"critical", test_critical, ref_delay, check_critical, PER_THREAD},
    {"lock", test_lock, ref_delay, check_lock, PER_THREAD},
    {"atomic", test_atomic, ref_atomic, check_atomic, PER_THREAD},
    {"reduction", test_reduction, ref_reduction, check_reduction, 0},
    {"sched_static", test_sched_static, ref_sched, check_sched_static, 0},
    {"sched_static_1", test_sched_static_1, ref_sched, check_sched_static_1, 0},
    {"sched_dynamic_1", test_sched_dynamic_1, ref_sched, check_sched_dynamic_1, 0},
    {"sched_dynamic_16", test_sched_dynamic_16, ref_sched, check_sched_dynamic_16, 0},
    {"sched_guided_1", test_sched_guided_1, ref_sched, check_sched_guided_1, 0},
    {"pingpong", test_pingpong, ref_pingpong, check_pingpong, 0},
    {"parallel-task", test_parallel_task, ref_delay, NULL, COUNTED},
    {"master-task", test_master_task, ref_delay, NULL, COUNTED},
    {"taskwait", test_taskwait, ref_delay, check_taskwait, COUNTED},
    {"task-barrier", test_task_barrier, ref_delay, check_task_barrier, COUNTED},
    {"nested-task", test_nested_task, ref_delay, NULL, COUNTED | PER_THREAD},
    {"nested-master-task", test_nested_master_task, ref_delay, NULL, COUNTED},
    {"branch-tree", test_branch_tree, ref_delay, NULL, COUNTED | TREE},
    {"leaf-tree", test_leaf_tree, ref_delay, NULL, COUNTED | TREE},
};
#define NCONSTRUCTS (int)(sizeof CONSTRUCTS / sizeof CONSTRUCTS[0])

/* Whether `name` is in the comma-separated list `only` (NULL: all). */
static int selected(const char *only, const char *name) {
    if (!only) return 1;
    size_t len = strlen(name);
    for (const char *p = only; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, name, len)) return 1;
        p += n + (end ? 1 : 0);
    }
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: omp_epcc [--samples N] [--target-ms T] [--delay-us D] [--only a,b,...] "
                    "[--idle-ms M [--idle-reps R]]\nconstructs:");
    for (int c = 0; c < NCONSTRUCTS; c++) fprintf(stderr, " %s", CONSTRUCTS[c].name);
    fprintf(stderr, "\n");
    exit(2);
}

int main(int argc, char **argv) {
    int samples = 20;
    double target_ms = 2.0, delay_us = 0.1, idle_ms = 0.0;
    long idle_reps = 1;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) usage();
        if (!strcmp(argv[i], "--samples")) samples = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--target-ms")) target_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--delay-us")) delay_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only")) only = argv[++i];
        else if (!strcmp(argv[i], "--idle-ms")) idle_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--idle-reps")) idle_reps = atol(argv[++i]);
        else usage();
    }
    if (samples < 1 || samples > MAX_SAMPLES || !(target_ms > 0) || !(delay_us > 0) || !(idle_ms >= 0) ||
        idle_ms > 60000 || idle_reps < 1)
        usage();
    int idle = idle_ms > 0;
    for (int c = 0, found = 0; only && c <= NCONSTRUCTS; c++) {
        if (c == NCONSTRUCTS && !found) usage();
        if (c < NCONSTRUCTS) found += selected(only, CONSTRUCTS[c].name);
    }

    nthreads = omp_get_max_threads();
    if (nthreads > MAXT) die(bench, "too many threads");
    int bound = team_bound(bench, nthreads);
    omp_init_lock(&lock);
    delaylength = calibrate_delay(delay_us);
    double delay_real_us = time_delay(delaylength) * 1e6;

    for (int c = 0; c < NCONSTRUCTS; c++) {
        const struct construct *k = &CONSTRUCTS[c];
        if (!selected(only, k->name)) continue;
        /* innerreps come in units: nthreads where the test divides them
         * among the threads, a whole tree per thread for the trees */
        long tree = k->flags & TREE ? TREE_TASKS : 1;
        long unit = (k->flags & PER_THREAD ? nthreads : 1) * tree;
        const char *err = k->check ? k->check() : NULL;
        if (!err && k->flags & COUNTED) {
            long n = 64 * nthreads * tree;
            counting = 1;
            task_count = 0;
            k->test(n);
            counting = 0;
            if (task_count != n * nthreads) err = "tasks: a task ran a wrong number of times";
        }
        if (err) die(bench, err);

        /* innerreps: after idle, idle_reps units; warm, a multiple of
         * nthreads units, doubled until a test takes target_ms (the least of
         * 3 tries, so that one preemption does not stop the doubling early) */
        long reps = idle ? idle_reps * unit : 8 * nthreads * tree;
        if (idle) k->test(reps); /* warm-up: code and data paged in */
        for (; !idle;) {
            double best = 1e30;
            for (int i = 0; i < 3; i++) {
                double t = k->test(reps);
                if (t < best) best = t;
            }
            if (best >= target_ms * 1e-3 || reps >= (1L << 40)) break;
            reps *= 2;
        }
        k->ref(reps); /* warm-up of the reference */

        double test[MAX_SAMPLES], ref[MAX_SAMPLES], over[MAX_SAMPLES];
        for (int s = 0; s < samples; s++) {
            if (idle) sleep_ms(idle_ms);
            ref[s] = k->ref(reps) / (double)reps * 1e6;
            if (idle) sleep_ms(idle_ms);
            test[s] = k->test(reps) / (double)reps * 1e6;
        }
        double ref_med = median(ref, samples);
        for (int s = 0; s < samples; s++) over[s] = test[s] - ref_med;
        double over_med, over_min, over_max;
        summarize(over, samples, &over_med, &over_min, &over_max);
        double test_med = median(test, samples);

        char extra[400];
        snprintf(extra, sizeof extra,
                 ",\"test_us\":%.9g,\"ref_us\":%.9g,\"min\":%.9g,\"max\":%.9g,\"samples\":%d,\"innerreps\":%ld,"
                 "\"delay_us\":%.6g,\"delaylength\":%ld,\"condition\":\"%s\",\"idle_ms\":%.6g",
                 test_med, ref_med, over_min, over_max, samples, reps, delay_real_us, delaylength,
                 idle ? "idle" : "warm", idle_ms);
        emit_omp(bench, k->name, nthreads, test_med - ref_med, "us", bound, extra);
    }
    omp_destroy_lock(&lock);
    return 0;
}
