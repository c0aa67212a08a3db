/* omp_teams.c — host teams (OpenMP 5.0 `teams` outside `target`) with
 * independent work per team: libgomp runs the teams one after another on
 * the encountering thread, LLVM libomp and herd run them at once.
 *
 *   omp_teams [work_us [reps]]
 *
 * Each construct is `teams num_teams(2)` whose teams each run `work_us`
 * microseconds of arithmetic (calibrated once, serially); prints the median
 * time of one construct over `reps` constructs (after 3 warm-up ones), and
 * the ideal: one team's work (both teams at once on 2 cores).
 * Built with gcc -O2 -fopenmp; run by bench/omp_teams.sh under each
 * runtime. Only OpenMP 4.5/5.0 entry points, so that libomp 14 loads it. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

/* About `iters` dependent floating-point operations. */
static __attribute__((noinline)) double work(long iters) {
    double x = 1.0;
    for (long i = 0; i < iters; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    double work_us = argc > 1 ? atof(argv[1]) : 20000;
    int reps = argc > 2 ? atoi(argv[2]) : 21;
    if (work_us <= 0 || reps < 1 || reps > 100000) {
        fprintf(stderr, "usage: omp_teams [work_us>0 [reps 1..100000]]\n");
        return 2;
    }
    /* Calibrate: iterations per microsecond (the fastest of 5 runs). */
    long cal = 1000000;
    double best = 1e9;
    for (int k = 0; k < 5; k++) {
        double t0 = omp_get_wtime();
        sink = work(cal);
        double d = omp_get_wtime() - t0;
        if (d < best) best = d;
    }
    double per_us = cal / (best * 1e6);
    long iters = (long)(work_us * per_us);
    if (iters < 1) iters = 1;
    double *t = malloc(sizeof *t * reps);
    int teams_seen = 0;
    for (int r = -3; r < reps; r++) {
        double s = omp_get_wtime();
#pragma omp teams num_teams(2)
        {
            sink = work(iters + omp_get_team_num());
            if (omp_get_team_num() == 1) teams_seen = omp_get_num_teams();
        }
        if (r >= 0) t[r] = omp_get_wtime() - s;
    }
    if (teams_seen != 2) {
        fprintf(stderr, "omp_teams: team 1 saw %d teams, want 2\n", teams_seen);
        return 1;
    }
    qsort(t, reps, sizeof *t, cmp);
    printf("teams_2x%gus median_us %.1f ideal_us %.1f\n", work_us, t[reps / 2] * 1e6, work_us);
    free(t);
    return 0;
}
