/* omp_cancel.c — cancellation latency (issue 14).  Run with OMP_CANCELLATION=true.
 *
 *   latency: a loop of tiny iterations, `schedule(runtime)` (OMP_SCHEDULE;
 *            bench/omp_cancel.sh sets dynamic,1, static,1 and guided,1),
 *            with a cancellation
 *            point in each; one thread cancels it at iteration 1000; the time
 *            from its `cancel for` to the last thread leaving the loop's
 *            closing barrier.  Median of REPS regions, in microseconds.
 *   search:  a taskgroup of tasks scanning 2^22-int blocks of a 2^26-int array
 *            for a key near the middle; the finder cancels the taskgroup;
 *            time of the whole search (taskgroup start to end), median, ms.
 *
 * Build: gcc -O2 -fopenmp -o omp_cancel bench/omp_cancel.c (libgomp, herd);
 *        clang-14 -O2 -fopenmp (LLVM libomp's own ABI: libomp does not
 *        cancel a loop entered through the GOMP ABI).  Run: bench/omp_cancel.sh.
 * Prints: "latency_us <median>" and "search_ms <median>".
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPS 200
#define SREPS 30
#define LEN (1L << 26)
#define BLOCK (1L << 16)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return v[n / 2];
}

static volatile long sink;

int main(void) {
    if (!omp_get_cancellation()) {
        fprintf(stderr, "omp_cancel: run with OMP_CANCELLATION=true\n");
        return 2;
    }
    double lat[REPS];
    for (int r = 0; r < REPS; r++) {
        double t_cancel = 0, t_left = 0;
#pragma omp parallel
        {
#pragma omp for schedule(runtime)
            for (long i = 0; i < 1000000000L; i++) {
                if (i == 1000) {
                    t_cancel = now();
#pragma omp cancel for
                }
#pragma omp cancellation point for
                sink += i;
            }
            double t = now();
#pragma omp critical
            if (t > t_left) t_left = t;
        }
        lat[r] = (t_left - t_cancel) * 1e6;
    }
    int *a = malloc(LEN * sizeof *a);
    for (long i = 0; i < LEN; i++) a[i] = (int)(i * 2654435761u % 1000003u) + 1;
    double srch[SREPS];
    long found = -1;
    for (int r = 0; r < SREPS; r++) {
        long key_at = LEN / 2 + r * 977;
        int saved = a[key_at];
        a[key_at] = 0;
        found = -1;
        double t0 = now();
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
        for (long b = 0; b < LEN; b += BLOCK) {
#pragma omp task firstprivate(b) shared(found)
            {
                for (long i = b; i < b + BLOCK; i++)
                    if (a[i] == 0) {
                        found = i;
#pragma omp cancel taskgroup
                    }
            }
        }
        srch[r] = (now() - t0) * 1e3;
        a[key_at] = saved;
        if (found != key_at) {
            fprintf(stderr, "omp_cancel: search found %ld, key at %ld\n", found, key_at);
            return 1;
        }
    }
    printf("latency_us %.2f\nsearch_ms %.3f\n", median(lat, REPS), median(srch, SREPS));
    return 0;
}
