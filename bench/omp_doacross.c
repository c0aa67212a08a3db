/* omp_doacross.c — a 2-D wavefront through a doacross loop: a 2048x2048
 * grid, a[i][j] = f(a[i-1][j], a[i][j-1]), with `ordered(2)` over (row,
 * block of 64 columns) and sinks (i-1, b) and (i, b-1). Prints the median
 * time of REPS sweeps and a checksum (compared with a serial sweep).
 * Build: gcc -O2 -fopenmp bench/omp_doacross.c -o omp_doacross
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2048
#define B 64
#define NB (N / B)
#define REPS 15

static double a[N][N], ref[N][N];

static inline double f(double up, double left) { return 0.5 * up + 0.25 * left + 1.0; }

static void serial(double (*x)[N]) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) x[i][j] = f(i ? x[i - 1][j] : 1.0, j ? x[i][j - 1] : 2.0);
}

static void sweep(void) {
#pragma omp parallel
#pragma omp for ordered(2) schedule(static, 1)
    for (int i = 0; i < N; i++)
        for (int b = 0; b < NB; b++) {
#pragma omp ordered depend(sink: i - 1, b) depend(sink: i, b - 1)
            for (int j = b * B; j < (b + 1) * B; j++) a[i][j] = f(i ? a[i - 1][j] : 1.0, j ? a[i][j - 1] : 2.0);
#pragma omp ordered depend(source)
        }
}

static int cmp(const void *p, const void *q) {
    double x = *(const double *)p, y = *(const double *)q;
    return (x > y) - (x < y);
}

int main(void) {
    serial(ref);
    double t[REPS];
    sweep();
    for (int r = 0; r < REPS; r++) {
        double t0 = omp_get_wtime();
        sweep();
        t[r] = omp_get_wtime() - t0;
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            if (a[i][j] != ref[i][j]) {
                printf("WRONG at %d %d\n", i, j);
                return 1;
            }
    qsort(t, REPS, sizeof t[0], cmp);
    printf("doacross wavefront %dx%d block %d threads %d: median %.3f ms\n", N, N, B, omp_get_max_threads(), t[REPS / 2] * 1e3);
    return 0;
}
