/* omp_chunks.c — the runtime's cost per loop chunk and per construct, with
 * nothing else in the way: a parallel region running
 *   dynamic  #pragma omp for schedule(dynamic, 1) over N trivial iterations
 *            (one GOMP_loop_*_next call per iteration)
 *   single   N `#pragma omp single nowait` constructs
 * Prints "<case> <ns>" per case: the best of 5 repetitions, in nanoseconds
 * per iteration (dynamic) or per construct (single). EPCC's schedbench puts
 * a delay in each iteration, which hides these costs on a small machine.
 * Usage: omp_chunks [N] (default 2,000,000 iterations, N/10 singles). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

static double dynamic_1(long n) {
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = omp_get_wtime();
#pragma omp parallel
        {
            long local = 0;
#pragma omp for schedule(dynamic, 1)
            for (long i = 0; i < n; i++) local += i & 7;
            __atomic_fetch_add(&sink, local, __ATOMIC_RELAXED);
        }
        t = omp_get_wtime() - t;
        if (t < best) best = t;
    }
    return best / n * 1e9;
}

static double singles(long n) {
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = omp_get_wtime();
#pragma omp parallel
        for (long i = 0; i < n; i++) {
#pragma omp single nowait
            __atomic_fetch_add(&sink, 1, __ATOMIC_RELAXED); /* singles of one loop may run at once */
        }
        t = omp_get_wtime() - t;
        if (t < best) best = t;
    }
    return best / n * 1e9;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    long expect = 0;
    for (long i = 0; i < n; i++) expect += i & 7;
    sink = 0;
    printf("dynamic %.2f\n", dynamic_1(n));
    if (sink != 5 * expect) {
        fprintf(stderr, "omp_chunks: dynamic loop sum %ld, expected %ld\n", sink, 5 * expect);
        return 1;
    }
    sink = 0;
    printf("single %.2f\n", singles(n / 10));
    if (sink != 5 * (n / 10)) {
        fprintf(stderr, "omp_chunks: %ld singles ran, expected %ld\n", sink, 5 * (n / 10));
        return 1;
    }
    return 0;
}
