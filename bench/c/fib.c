/* fib(N) with an OpenMP task at every level, no cutoff.
 *
 * usage: fib_omp [N [SAMPLES]]
 *
 * Prints the median time of one fib(N) over SAMPLES, in milliseconds, and
 * checks the result against an iterative computation. */
#include "bench.h"

static long fib_task(int n) {
    if (n < 2) return n;
    long x, y;
#pragma omp task shared(x) firstprivate(n)
    x = fib_task(n - 1);
    y = fib_task(n - 2);
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
    const char *bench = "fib";
    int n = (int)arg_long(argc, argv, 1, 30);
    int samples = (int)arg_long(argc, argv, 2, 3);
    if (n < 0 || n > 60 || samples < 1 || samples > 1000) die(bench, "bad arguments");
    int threads = omp_get_max_threads();
    int bound = check_team(bench, threads);
    long expect = fib_iter(n);
    volatile int vn = n; /* the compiler must not know n */

    double t[1000];
    for (int s = -1; s < samples; s++) { /* s == -1: warm-up */
        long r = 0;
        double t0 = now();
#pragma omp parallel
#pragma omp single
        r = fib_task(vn);
        double t1 = now();
        if (r != expect) die(bench, "wrong fib result");
        if (s >= 0) t[s] = (t1 - t0) * 1e3;
    }
    double min = t[0];
    for (int s = 1; s < samples; s++)
        if (t[s] < min) min = t[s];
    double med = median(t, samples);
    char case_[32], extra[128];
    snprintf(case_, sizeof case_, "tasks,n=%d", n);
    snprintf(extra, sizeof extra, ",\"min\":%.6g,\"samples\":%d,\"result\":%ld", min, samples, expect);
    emit(bench, omp_runtime(), case_, threads, med, "ms", bound, extra);
    return 0;
}
