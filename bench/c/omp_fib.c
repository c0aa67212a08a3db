/* fib(N) with an OpenMP task for every recursive call, no cutoff (BOTS
 * "fib" style: both calls are tasks, then a taskwait), inside
 * `parallel` + `single`.
 *
 * usage: omp_fib [N [SAMPLES [MIN_SECONDS]]]
 *
 * Prints the median time of one fib(N) over the samples (after one warm-up;
 * at least SAMPLES, more until MIN_SECONDS of samples), in seconds, and
 * checks every result against an iterative fib. Built
 * without -fopenmp (omp_fib_serial) the pragmas are ignored and the same
 * source is the plain serial recursion, the baseline of the speed-ups. */
#include "bench.h"

static long fib(int n) {
    if (n < 2) return n;
    long x, y;
#pragma omp task shared(x) firstprivate(n)
    x = fib(n - 1);
#pragma omp task shared(y) firstprivate(n)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

static long fib_iter(int n) {
    long a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv) {
    const char *bench = "omp_fib";
    int n = (int)arg_long(argc, argv, 1, 30);
    int samples = (int)arg_long(argc, argv, 2, 3);
    double min_seconds = argc > 3 ? atof(argv[3]) : 0.0;
    if (n < 0 || n > 60 || samples < 1 || samples > 1000) die(bench, "bad arguments");
    int threads = omp_get_max_threads();
    int bound = team_bound(bench, threads);
    long expect = fib_iter(n);
    volatile int vn = n; /* the compiler must not know n */

    double t[1000], total = 0;
    int s;
    for (s = -1; s < 1000 && (s < samples || total < min_seconds); s++) { /* s == -1: warm-up */
        long r = -1;
        double t0 = mono_now();
#pragma omp parallel
#pragma omp single
        r = fib(vn);
        double t1 = mono_now();
        if (r != expect) die(bench, "wrong fib result");
        if (s >= 0) {
            t[s] = t1 - t0;
            total += t[s];
        }
    }
    samples = s;
    char case_[32], more[96];
    snprintf(case_, sizeof case_, "n=%d", n);
    /* calls = 2 fib(n+1) - 1 */
    snprintf(more, sizeof more, ",\"result\":%ld,\"tasks\":%ld", expect, 2 * fib_iter(n + 1) - 2);
    emit_omp_samples(bench, case_, threads, t, samples, bound, more);
    return 0;
}
