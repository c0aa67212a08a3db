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
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    return dlsym(RTLD_DEFAULT, "__kmpc_fork_call") ? "libomp" : "libgomp";
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

#endif
