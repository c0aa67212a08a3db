/* A parallel loop of N trivial iterations (a[i] = i + rep), one
 * `#pragma omp parallel for` per loop, under a given schedule.
 *
 * usage: loops_omp SCHEDULE [N [REPS [SAMPLES]]]
 *   SCHEDULE: static | static,C | dynamic,C | guided,C   (C: chunk size)
 *
 * One sample times REPS loops; prints the median time per loop over SAMPLES,
 * in microseconds, and checks that the last loop wrote every element. */
#include "bench.h"

enum kind { STATIC_BLOCK, STATIC_CHUNK, DYNAMIC, GUIDED };

static void run(enum kind k, long chunk, long *a, long n, long rep) {
    switch (k) {
    case STATIC_BLOCK:
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = i + rep;
        break;
    case STATIC_CHUNK:
#pragma omp parallel for schedule(static, chunk)
        for (long i = 0; i < n; i++) a[i] = i + rep;
        break;
    case DYNAMIC:
#pragma omp parallel for schedule(dynamic, chunk)
        for (long i = 0; i < n; i++) a[i] = i + rep;
        break;
    case GUIDED:
#pragma omp parallel for schedule(guided, chunk)
        for (long i = 0; i < n; i++) a[i] = i + rep;
        break;
    }
}

int main(int argc, char **argv) {
    const char *bench = "loops";
    if (argc < 2) die(bench, "usage: loops_omp SCHEDULE [N [REPS [SAMPLES]]]");
    const char *sched = argv[1];
    long n = arg_long(argc, argv, 2, 1000000);
    long reps = arg_long(argc, argv, 3, 50);
    int samples = (int)arg_long(argc, argv, 4, 7);
    if (n < 1 || reps < 1 || samples < 1 || samples > 1000) die(bench, "bad arguments");

    enum kind k;
    long chunk = 0;
    const char *comma = strchr(sched, ',');
    size_t name_len = comma ? (size_t)(comma - sched) : strlen(sched);
    if (comma) chunk = atol(comma + 1);
    if (name_len == 6 && !strncmp(sched, "static", 6)) k = comma ? STATIC_CHUNK : STATIC_BLOCK;
    else if (name_len == 7 && !strncmp(sched, "dynamic", 7) && chunk > 0) k = DYNAMIC;
    else if (name_len == 6 && !strncmp(sched, "guided", 6) && chunk > 0) k = GUIDED;
    else die(bench, "SCHEDULE must be static, static,C, dynamic,C or guided,C");
    if (comma && chunk < 1) die(bench, "chunk must be positive");

    int threads = omp_get_max_threads();
    int bound = check_team(bench, threads);
    long *a = malloc((size_t)n * sizeof *a);
    if (!a) die(bench, "out of memory");
    memset(a, 0, (size_t)n * sizeof *a);

    long rep = 0;
    for (int w = 0; w < 5; w++) run(k, chunk, a, n, ++rep); /* warm-up */
    double t[1000];
    for (int s = 0; s < samples; s++) {
        double t0 = now();
        for (long r = 0; r < reps; r++) run(k, chunk, a, n, ++rep);
        t[s] = (now() - t0) / (double)reps * 1e6;
    }
    for (long i = 0; i < n; i++)
        if (a[i] != i + rep) die(bench, "an element was not written by the last loop");

    double min = t[0];
    for (int s = 1; s < samples; s++)
        if (t[s] < min) min = t[s];
    double med = median(t, samples);
    char extra[160];
    snprintf(extra, sizeof extra, ",\"min\":%.6g,\"samples\":%d,\"n\":%ld,\"reps\":%ld", min, samples, n, reps);
    emit(bench, omp_runtime(), sched, threads, med, "us", bound, extra);
    free(a);
    return 0;
}
