/* Parallel merge sort of N ints with OpenMP tasks and a cutoff: the two
 * halves are sorted by two tasks (below SORT_CUTOFF elements a serial merge
 * sort), then merged by a parallel merge (the larger run is split at its
 * middle, the split point is found in the other run by binary search, and
 * the two halves of the output are merged by two tasks; below MERGE_CUTOFF
 * a serial merge). The runs alternate between the array and one scratch
 * buffer, so nothing is copied back. Tasks are created inside `parallel` +
 * `single`.
 *
 * usage: omp_msort [N [SAMPLES [MIN_SECONDS]]]      (default N = 16000000)
 *
 * The input is N pseudo-random 32-bit ints (xorshift64*, fixed seed),
 * restored before every sample (untimed). Prints the median time of one
 * sort over the samples (after a warm-up sort of the first 2^20 elements;
 * at least SAMPLES, more until
 * MIN_SECONDS of samples), in seconds, and checks that the output is sorted
 * and is a permutation of the input (an order-independent hash of the
 * multiset of values). Built without -fopenmp (omp_msort_serial) it is the
 * same recursion, serial. */
#include "bench.h"
#include <stdint.h>

#define SORT_CUTOFF 16384
#define MERGE_CUTOFF 16384
#define INSERTION 32

static void insertion_sort(int *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        int v = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

/* Merges the sorted runs a[0..na) and b[0..nb) into out. */
static void merge(const int *a, size_t na, const int *b, size_t nb, int *out) {
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) { /* branch-free: the comparison is unpredictable */
        int x = a[i], y = b[j];
        int take_b = y < x;
        out[k++] = take_b ? y : x;
        j += (size_t)take_b;
        i += (size_t)!take_b;
    }
    while (i < na) out[k++] = a[i++];
    while (j < nb) out[k++] = b[j++];
}

/* First index of b[0..n) whose value is >= v. */
static size_t lower_bound(const int *b, size_t n, int v) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void pmerge(const int *a, size_t na, const int *b, size_t nb, int *out) {
    if (na + nb <= MERGE_CUTOFF) {
        merge(a, na, b, nb, out);
        return;
    }
    if (na < nb) { /* split the larger run */
        const int *t = a;
        a = b;
        b = t;
        size_t tn = na;
        na = nb;
        nb = tn;
    }
    size_t ma = na / 2;
    size_t mb = lower_bound(b, nb, a[ma]);
#pragma omp task firstprivate(a, b, out, ma, mb)
    pmerge(a, ma, b, mb, out);
    pmerge(a + ma, na - ma, b + mb, nb - mb, out + ma + mb);
#pragma omp taskwait
}

/* Serial merge sort of a[0..n); the result is in b when into_b, else in a;
 * the other array is scratch. */
static void sort_serial(int *a, int *b, size_t n, int into_b) {
    if (n <= INSERTION) {
        insertion_sort(a, n);
        if (into_b) memcpy(b, a, n * sizeof *a);
        return;
    }
    size_t h = n / 2;
    sort_serial(a, b, h, !into_b);
    sort_serial(a + h, b + h, n - h, !into_b);
    if (into_b) merge(a, h, a + h, n - h, b);
    else merge(b, h, b + h, n - h, a);
}

static void sort_tasks(int *a, int *b, size_t n, int into_b) {
    if (n <= SORT_CUTOFF) {
        sort_serial(a, b, n, into_b);
        return;
    }
    size_t h = n / 2;
#pragma omp task firstprivate(a, b, h, into_b)
    sort_tasks(a, b, h, !into_b);
    sort_tasks(a + h, b + h, n - h, !into_b);
#pragma omp taskwait
    if (into_b) pmerge(a, h, a + h, n - h, b);
    else pmerge(b, h, b + h, n - h, a);
}

static uint64_t mix(uint64_t x) { /* splitmix64 finaliser */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Order-independent hash of the multiset of values. */
static uint64_t multiset_hash(const int *a, size_t n) {
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++) h += mix((uint64_t)(uint32_t)a[i]);
    return h;
}

int main(int argc, char **argv) {
    const char *bench = "omp_msort";
    long n = arg_long(argc, argv, 1, 16000000);
    int samples = (int)arg_long(argc, argv, 2, 3);
    double min_seconds = argc > 3 ? atof(argv[3]) : 0.0;
    if (n < 1 || samples < 1 || samples > 1000) die(bench, "bad arguments");
    int threads = omp_get_max_threads();
    int bound = team_bound(bench, threads);

    int *orig = malloc((size_t)n * sizeof *orig);
    int *a = malloc((size_t)n * sizeof *a);
    int *tmp = malloc((size_t)n * sizeof *tmp);
    if (!orig || !a || !tmp) die(bench, "out of memory");
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (long i = 0; i < n; i++) { /* xorshift64* */
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        orig[i] = (int)(uint32_t)((x * 0x2545f4914f6cdd1dULL) >> 32);
    }
    memset(tmp, 0, (size_t)n * sizeof *tmp);
    uint64_t expect = multiset_hash(orig, (size_t)n);

    double t[1000], total = 0;
    int s;
    /* s == -1: warm-up (threads started), on the first 2^20 elements only */
    for (s = -1; s < 1000 && (s < samples || total < min_seconds); s++) {
        long m = s < 0 && n > (1L << 20) ? (1L << 20) : n;
        memcpy(a, orig, (size_t)m * sizeof *a);
        double t0 = mono_now();
#pragma omp parallel
#pragma omp single
        sort_tasks(a, tmp, (size_t)m, 0);
        double t1 = mono_now();
        for (long i = 1; i < m; i++)
            if (a[i - 1] > a[i]) die(bench, "output not sorted");
        if (multiset_hash(a, (size_t)m) != (m == n ? expect : multiset_hash(orig, (size_t)m)))
            die(bench, "output is not a permutation of the input");
        if (s >= 0) {
            t[s] = t1 - t0;
            total += t[s];
        }
    }
    samples = s;
    char case_[48], more[96];
    snprintf(case_, sizeof case_, "n=%ld", n);
    snprintf(more, sizeof more, ",\"result\":\"%016llx\",\"cutoff\":%d", (unsigned long long)expect, SORT_CUTOFF);
    emit_omp_samples(bench, case_, threads, t, samples, bound, more);
    free(orig);
    free(a);
    free(tmp);
    return 0;
}
