/* omp_taskred.c — task reductions (OpenMP 5.0) under any libgomp-ABI runtime.
 *
 *   taskloop:  `taskloop reduction(+:sum) grainsize(G)` over an array of N
 *              doubles (N = 10^7, G = 10^4: 1000 tasks), inside parallel+single.
 *   tree:      a binary task tree of depth D (2^(D+1)-1 tasks), each task
 *              `in_reduction(+:sum)` of a `taskgroup task_reduction(+:sum)`.
 *
 * Each kernel runs REPS times after one warm-up; prints the median time per
 * run in milliseconds and checks the result (exit 1 on a wrong sum).
 * Build: gcc -O2 -fopenmp bench/omp_taskred.c -o omp_taskred
 * Run under a runtime with LD_LIBRARY_PATH pointing at its libgomp.so.1.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double taskloop_sum(const double *a, long n, long grain) {
    double sum = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskloop reduction(+ : sum) grainsize(grain)
    for (long i = 0; i < n; i++) sum += a[i];
    return sum;
}

static long tree_sum;
static void tree(int depth) {
#pragma omp task in_reduction(+ : tree_sum)
    {
        tree_sum += 1;
        if (depth > 0) {
            tree(depth - 1);
            tree(depth - 1);
        }
    }
}

static long tree_run(int depth) {
    tree_sum = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup task_reduction(+ : tree_sum)
    tree(depth);
    return tree_sum;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    long grain = argc > 2 ? atol(argv[2]) : 10000;
    int depth = argc > 3 ? atoi(argv[3]) : 16;
    int reps = argc > 4 ? atoi(argv[4]) : 21;
    double *a = malloc(n * sizeof *a);
    if (!a) return 2;
    for (long i = 0; i < n; i++) a[i] = (double)(i % 1000);
    double want = 0;
    for (long i = 0; i < n; i++) want += a[i];
    double t[256];
    if (reps > 256) reps = 256;
    int bad = 0;

    taskloop_sum(a, n, grain);
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
        double s = taskloop_sum(a, n, grain);
        t[r] = omp_get_wtime() - t0;
        if (s != want) bad = 1;
    }
    printf("taskloop_reduction n=%ld grain=%ld threads=%d median_ms=%.3f\n", n, grain, omp_get_max_threads(),
           1e3 * median(t, reps));

    long want_tree = (2L << depth) - 1;
    tree_run(depth);
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
        long s = tree_run(depth);
        t[r] = omp_get_wtime() - t0;
        if (s != want_tree) bad = 1;
    }
    printf("tree_in_reduction depth=%d tasks=%ld threads=%d median_ms=%.3f\n", depth, want_tree,
           omp_get_max_threads(), 1e3 * median(t, reps));
    if (bad) {
        printf("WRONG RESULT\n");
        return 1;
    }
    free(a);
    return 0;
}
