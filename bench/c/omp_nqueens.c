/* N-queens: counts the placements of N non-attacking queens, with an
 * OpenMP task for every placement tried and no cutoff (BOTS "nqueens"
 * style): a task copies its parent's partial board, places a queen on row j
 * in column i, checks it against the queens above, and when it fits recurses
 * into row j + 1; the parent waits for its N children (taskwait) and sums
 * their counts. Tasks are created inside `parallel` + `single`.
 *
 * usage: omp_nqueens [N [SAMPLES [MIN_SECONDS]]]
 *
 * Prints the median time of one count over the samples (after one warm-up;
 * at least SAMPLES, more until MIN_SECONDS of samples), in seconds, and checks
 * the count against the known number of solutions. Built without -fopenmp
 * (omp_nqueens_serial) it is the serial recursion. */
#include "bench.h"

#define MAXN 16

/* Solutions of the N-queens problem, N = 0..16 (OEIS A000170). */
static const long SOLUTIONS[MAXN + 1] = {1,     1,      0,      0,       2,        10,        4,
                                         40,    92,     352,    724,     2680,     14200,     73712,
                                         365596, 2279184, 14772512};

/* Whether the queen of row j (column b[j]) is attacked by rows 0..j-1. */
static int fits(int j, const char *b) {
    for (int i = 0; i < j; i++) {
        int d = b[i] - b[j];
        if (d == 0 || d == j - i || d == i - j) return 0;
    }
    return 1;
}

/* Counts into *count the completions of board a, whose rows 0..j-1 hold queens. */
static void queens(int n, int j, const char *a, long *count) {
    if (j == n) {
        *count = 1;
        return;
    }
    long sub[MAXN];
    for (int i = 0; i < n; i++) {
        sub[i] = 0;
#pragma omp task firstprivate(i, j, n, a) shared(sub)
        {
            char b[MAXN];
            memcpy(b, a, (size_t)j);
            b[j] = (char)i;
            if (fits(j, b)) queens(n, j + 1, b, &sub[i]);
        }
    }
#pragma omp taskwait
    long s = 0;
    for (int i = 0; i < n; i++) s += sub[i];
    *count = s;
}

int main(int argc, char **argv) {
    const char *bench = "omp_nqueens";
    int n = (int)arg_long(argc, argv, 1, 12);
    int samples = (int)arg_long(argc, argv, 2, 3);
    double min_seconds = argc > 3 ? atof(argv[3]) : 0.0;
    if (n < 1 || n > MAXN || samples < 1 || samples > 1000) die(bench, "bad arguments");
    int threads = omp_get_max_threads();
    int bound = team_bound(bench, threads);
    volatile int vn = n; /* the compiler must not know n */

    double t[1000], total = 0;
    int s;
    for (s = -1; s < 1000 && (s < samples || total < min_seconds); s++) { /* s == -1: warm-up */
        long count = -1;
        char board[MAXN] = {0};
        double t0 = mono_now();
#pragma omp parallel
#pragma omp single
        queens(vn, 0, board, &count);
        double t1 = mono_now();
        if (count != SOLUTIONS[n]) die(bench, "wrong number of solutions");
        if (s >= 0) {
            t[s] = t1 - t0;
            total += t[s];
        }
    }
    samples = s;
    char case_[32], more[64];
    snprintf(case_, sizeof case_, "n=%d", n);
    snprintf(more, sizeof more, ",\"result\":%ld", SOLUTIONS[n]);
    emit_omp_samples(bench, case_, threads, t, samples, bound, more);
    return 0;
}
