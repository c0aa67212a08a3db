/* Shared helpers of the OpenMP comparison programs: timing, medians, JSON
 * output, and checks that the run is what it claims to be (which OpenMP
 * runtime is loaded, how many threads, bound to distinct CPUs).
 *
 * Every program prints exactly one JSON line per measurement, in the same
 * format as the Rust benchmark binaries (see bench/src/lib.rs, `Record`), and
 * exits non-zero when a result is wrong. */
#ifndef HERD_BENCH_H
#define HERD_BENCH_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#else
/* Serial builds of the omp_* programs (compiled without -fopenmp): the
 * pragmas are ignored and no OpenMP runtime is linked; these stand in for
 * the few runtime calls the programs make. */
static inline double omp_get_wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_num_threads(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
static inline int omp_get_max_active_levels(void) { return 1; }
static inline void omp_set_max_active_levels(int n) { (void)n; }
static inline int omp_get_level(void) { return 0; }
static inline int omp_get_active_level(void) { return 0; }
static inline int omp_get_ancestor_thread_num(int level) { return level == 0 ? 0 : -1; }
typedef struct { int unused; } omp_lock_t;
static inline void omp_init_lock(omp_lock_t *l) { (void)l; }
static inline void omp_destroy_lock(omp_lock_t *l) { (void)l; }
static inline void omp_set_lock(omp_lock_t *l) { (void)l; }
static inline void omp_unset_lock(omp_lock_t *l) { (void)l; }
typedef enum { omp_proc_bind_false = 0, omp_proc_bind_true = 1 } omp_proc_bind_t;
static inline omp_proc_bind_t omp_get_proc_bind(void) { return omp_proc_bind_false; }
#endif

/* Seconds since an arbitrary origin. */
static inline double now(void) { return omp_get_wtime(); }

/* Keeps the compiler from removing or merging code around it. */
#define BARRIER() __asm__ volatile("" ::: "memory")

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static inline double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Which OpenMP runtime is really loaded: LLVM's libomp defines the
 * __kmpc_* entry points, even when loaded under the name libgomp.so.1. */
static inline const char *omp_runtime(void) {
#ifndef _OPENMP
    return "serial";
#else
    return dlsym(RTLD_DEFAULT, "__kmpc_fork_call") ? "libomp" : "libgomp";
#endif
}

static inline void die(const char *bench, const char *msg) {
    fprintf(stderr, "%s: FAILED: %s\n", bench, msg);
    exit(1);
}

/* Checks that a parallel region has the expected number of threads, each on
 * its own CPU. Returns 1 when the threads are bound to distinct CPUs. */
static inline int check_team(const char *bench, int expect) {
    int cpus[256] = {0};
    int n = 0;
#pragma omp parallel
    {
#pragma omp single
        n = omp_get_num_threads();
        int t = omp_get_thread_num();
        if (t < 256) cpus[t] = sched_getcpu();
    }
    if (n != expect) {
        fprintf(stderr, "%s: expected %d threads, got %d (set OMP_NUM_THREADS)\n", bench, expect, n);
        exit(1);
    }
    for (int i = 0; i < n && i < 256; i++)
        for (int j = 0; j < i; j++)
            if (cpus[i] == cpus[j]) return 0;
    return omp_get_proc_bind() != omp_proc_bind_false;
}

/* Prints one measurement as a JSON line. `value` is in `unit`; `extra` is
 * either "" or a comma-prefixed list of further JSON members. */
static inline void emit(const char *bench, const char *impl, const char *case_, int threads, double value,
                        const char *unit, int bound, const char *extra) {
    printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"case\":\"%s\",\"threads\":%d,\"value\":%.6g,"
           "\"unit\":\"%s\",\"ok\":true,\"bound\":%s%s}\n",
           bench, impl, case_, threads, value, unit, bound ? "true" : "false", extra);
    fflush(stdout);
}

/* Integer argument i of argv, or `dflt` when absent. */
static inline long arg_long(int argc, char **argv, int i, long dflt) {
    return argc > i ? atol(argv[i]) : dflt;
}

/* ---- Helpers of the omp_* programs (bench/src/bin/omp-compare.rs) ---- */

/* Seconds since an arbitrary origin, from CLOCK_MONOTONIC: the same clock
 * whatever the OpenMP runtime (or none) implements omp_get_wtime with. */
static inline double mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The GOMP-ABI runtime really serving this process, for programs built with
 * -fopenmp: `*lib` receives the real path of the shared object that
 * provides GOMP_parallel (first in symbol lookup order, so LD_PRELOAD and
 * LD_LIBRARY_PATH replacements are seen), and the result names it:
 * "libomp" when that object defines __kmpc_fork_call (LLVM), "libgomp" when
 * it defines GOMP_offload_register_ver (GNU, GCC >= 6), "other" otherwise
 * (e.g. herd's libgomp.so.1; the driver checks the path). Serial builds:
 * "serial" and an empty path. */
static inline const char *omp_runtime_lib(char *lib, size_t size) {
    lib[0] = 0;
#ifndef _OPENMP
    (void)size;
    return "serial";
#else
    void *f = dlsym(RTLD_DEFAULT, "GOMP_parallel");
    Dl_info info;
    if (!f || !dladdr(f, &info) || !info.dli_fname) return "unknown";
    char real[PATH_MAX];
    const char *path = realpath(info.dli_fname, real) ? real : info.dli_fname;
    snprintf(lib, size, "%s", path);
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return "unknown";
    const char *name = dlsym(h, "__kmpc_fork_call")           ? "libomp"
                       : dlsym(h, "GOMP_offload_register_ver") ? "libgomp"
                                                               : "other";
    dlclose(h);
    return name;
#endif
}

/* Participants of a parallel region and whether they run bound to distinct
 * CPUs (serial builds: 1, unbound). Exits when the team is not `expect`. */
static inline int team_bound(const char *bench, int expect) {
#ifndef _OPENMP
    if (expect != 1) {
        fprintf(stderr, "%s: serial build, expected 1 thread\n", bench);
        exit(1);
    }
    return 0;
#else
    return check_team(bench, expect);
#endif
}

/* Prints one measurement of an omp_* program as a JSON line: the members of
 * emit() plus "lib" (see omp_runtime_lib; quotes and backslashes in the
 * path are replaced by '?'), with "impl" from omp_runtime_lib. */
static inline void emit_omp(const char *bench, const char *case_, int threads, double value, const char *unit,
                            int bound, const char *extra) {
    char lib[PATH_MAX];
    const char *impl = omp_runtime_lib(lib, sizeof lib);
    for (char *c = lib; *c; c++)
        if (*c == '"' || *c == '\\') *c = '?';
    printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"case\":\"%s\",\"threads\":%d,\"value\":%.9g,"
           "\"unit\":\"%s\",\"ok\":true,\"bound\":%s,\"lib\":\"%s\"%s}\n",
           bench, impl, case_, threads, value, unit, bound ? "true" : "false", lib, extra);
    fflush(stdout);
}

/* Median, minimum and maximum of v[0..n) (sorts v). */
static inline void summarize(double *v, int n, double *med, double *min, double *max) {
    *med = median(v, n);
    *min = v[0];
    *max = v[n - 1];
}

/* Prints the median of the timed samples t[0..samples) in seconds with
 * emit_omp, adding their "min", "max" and "samples" ahead of `more` (further
 * JSON members, each starting with a comma). Sorts t. */
static inline void emit_omp_samples(const char *bench, const char *case_, int threads, double *t, int samples,
                                    int bound, const char *more) {
    double med, min, max;
    summarize(t, samples, &med, &min, &max);
    char extra[320];
    snprintf(extra, sizeof extra, ",\"min\":%.9g,\"max\":%.9g,\"samples\":%d%s", min, max, samples, more);
    emit_omp(bench, case_, threads, med, "s", bound, extra);
}

#endif
