/* Empty fork-join region overhead, EPCC syncbench style.
 *
 * usage: region_omp [REGIONS [SAMPLES]]
 *
 * One sample times REGIONS empty `#pragma omp parallel` regions and the same
 * loop without regions (the reference); the overhead per region is
 * (t_regions - t_reference) / REGIONS. Prints the median over SAMPLES, in
 * microseconds. Thread count and binding come from OMP_NUM_THREADS,
 * OMP_PROC_BIND and OMP_PLACES. */
#include "bench.h"

int main(int argc, char **argv) {
    const char *bench = "region";
    long regions = arg_long(argc, argv, 1, 20000);
    int samples = (int)arg_long(argc, argv, 2, 7);
    if (regions < 1 || samples < 1 || samples > 1000) die(bench, "bad arguments");
    int threads = omp_get_max_threads();
    int bound = check_team(bench, threads);

    /* Warm-up: threads created, caches and branch predictors primed. */
    for (long i = 0; i < regions / 10 + 100; i++) {
#pragma omp parallel
        BARRIER();
    }

    double per_region[1000];
    for (int s = 0; s < samples; s++) {
        double t0 = now();
        for (long i = 0; i < regions; i++) BARRIER();
        double t1 = now();
        for (long i = 0; i < regions; i++) {
#pragma omp parallel
            BARRIER();
        }
        double t2 = now();
        per_region[s] = ((t2 - t1) - (t1 - t0)) / (double)regions * 1e6;
    }
    double min = per_region[0];
    for (int s = 1; s < samples; s++)
        if (per_region[s] < min) min = per_region[s];
    double med = median(per_region, samples);

    /* Verification (untimed): every thread runs every region. */
    long counts[64 * 16] = {0};
    int wrong_team = 0;
    for (long i = 0; i < 1000; i++) {
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            if (omp_get_num_threads() != threads || t >= 64) wrong_team = 1;
            else counts[t * 16]++;
        }
    }
    if (wrong_team) die(bench, "region ran with the wrong team");
    for (int t = 0; t < threads && t < 64; t++)
        if (counts[t * 16] != 1000) die(bench, "a thread missed regions");

    char extra[128];
    snprintf(extra, sizeof extra, ",\"min\":%.6g,\"samples\":%d,\"regions\":%ld", min, samples, regions);
    emit(bench, omp_runtime(), "empty", threads, med, "us", bound, extra);
    return 0;
}
