/* An ordered loop whose members sleep while they wait for their turn:
 * `omp for ordered schedule(dynamic, 1)` over ITERS iterations, each doing
 * WORK spins outside the ordered section and a one-line ordered section.
 * Run with OMP_WAIT_POLICY=passive (members sleep at once) to measure what
 * passing a turn costs when the waiting members sleep: a runtime that wakes
 * every sleeper per turn pays n - 1 wake-ups on the loop's critical path.
 * Prints the median of REPS runs, in microseconds per iteration, and checks
 * that the ordered sections ran in order.
 * Usage: omp_ordered [ITERS [WORK [REPS]]]  (defaults 20000 200 7) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    long work = argc > 2 ? atol(argv[2]) : 200;
    int reps = argc > 3 ? atoi(argv[3]) : 7;
    double t[64];
    if (reps < 1 || reps > 64) reps = 7;
    for (int r = 0; r < reps; r++) {
        long next = 0, bad = 0;
        volatile double sink = 0;
        double t0 = omp_get_wtime();
#pragma omp parallel
        {
#pragma omp for ordered schedule(dynamic, 1)
            for (long i = 0; i < iters; i++) {
                double x = (double)i;
                for (long k = 0; k < work; k++) x = x * 1.0000001 + 1e-9;
                sink += x * 0.0;
#pragma omp ordered
                {
                    if (next != i) bad++;
                    next = i + 1;
                }
            }
        }
        t[r] = (omp_get_wtime() - t0) * 1e6 / (double)iters;
        if (bad || next != iters) {
            fprintf(stderr, "ordered sections out of order (%ld bad, next %ld)\n", bad, next);
            return 1;
        }
    }
    qsort(t, reps, sizeof t[0], cmp);
    printf("ordered dynamic,1 iters=%ld work=%ld threads=%d: median %.3f us/iter\n", iters, work,
           omp_get_max_threads(), t[reps / 2]);
    return 0;
}
