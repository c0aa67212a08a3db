/* Sparse block LU factorisation (BOTS "sparselu" style) with OpenMP tasks.
 *
 * usage: omp_sparselu [NB [BS [SAMPLES [MIN_SECONDS]]]]   (default 32 64 3 0)
 *
 * The matrix is NB x NB blocks of BS x BS floats; a block that is zero is
 * not stored (NULL). The stored blocks at the start are the diagonal, its two
 * neighbours, and a sparse pattern (see present()); values are pseudo-random
 * in [-1, 1), the diagonal made dominant so that LU without pivoting is
 * stable. The factorisation, for every diagonal block kk:
 *   lu0(A[kk][kk]);                         LU of the diagonal block
 *   for each stored A[kk][jj], jj > kk:     task fwd(A[kk][kk], A[kk][jj])
 *   for each stored A[ii][kk], ii > kk:     task bdiv(A[kk][kk], A[ii][kk])
 *   taskwait
 *   for each stored pair A[ii][kk], A[kk][jj]:
 *       task { allocate A[ii][jj] (zero) if absent (fill-in);
 *              bmod(A[ii][kk], A[kk][jj], A[ii][jj]) }
 *   taskwait
 * inside `parallel` + `single`. Every block is updated in the same order as
 * in the serial algorithm, so the result is bit-for-bit the serial one.
 *
 * Prints the median time of one factorisation (allocation and generation of
 * the matrix untimed; fill-in allocation timed) over the samples (after one
 * warm-up; at least SAMPLES, more until MIN_SECONDS of samples), in seconds.
 * Verification: the factorisation is recomputed serially (no tasks) and the
 * maximum absolute difference must be 0 (both must be finite); the checksum
 * (sum of all stored values, and the number of blocks after fill-in) is
 * printed as "result" so that runtimes can be compared. Built without
 * -fopenmp (omp_sparselu_serial) the task version is the serial algorithm
 * and the in-process comparison is skipped. */
#include "bench.h"
#include <math.h>

static int NB, BS;

/* Whether block (i, j) is stored in the generated matrix. */
static int present(int i, int j) {
    if (i == j || i == j + 1 || j == i + 1) return 1;
    if (i % 2 == 1 || j % 2 == 1) return 0;
    if (i < j) return i % 3 == 0;
    return j % 3 == 0;
}

static float *new_block(void) {
    float *b = calloc((size_t)BS * (size_t)BS, sizeof *b);
    if (!b) die("omp_sparselu", "out of memory");
    return b;
}

/* A fresh matrix (the same every time): NB*NB block pointers. */
static float **generate(void) {
    float **A = calloc((size_t)NB * (size_t)NB, sizeof *A);
    if (!A) die("omp_sparselu", "out of memory");
    unsigned long long x = 0x243f6a8885a308d3ULL;
    for (int ii = 0; ii < NB; ii++)
        for (int jj = 0; jj < NB; jj++) {
            if (!present(ii, jj)) continue;
            float *b = A[ii * NB + jj] = new_block();
            for (int k = 0; k < BS * BS; k++) {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                b[k] = (float)((double)((x * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
            }
            if (ii == jj)
                for (int k = 0; k < BS; k++) b[k * BS + k] += (float)(2 * NB * BS);
        }
    return A;
}

static void release(float **A) {
    for (int k = 0; k < NB * NB; k++) free(A[k]);
    free(A);
}

/* ---- block kernels (row-major BS x BS) ---- */

/* In-place LU of a diagonal block, no pivoting: L unit lower, U upper. */
static void lu0(float *d) {
    for (int k = 0; k < BS; k++)
        for (int i = k + 1; i < BS; i++) {
            float l = d[i * BS + k] /= d[k * BS + k];
            for (int j = k + 1; j < BS; j++) d[i * BS + j] -= l * d[k * BS + j];
        }
}

/* Block right of the diagonal: c = L^-1 c (L from d). */
static void fwd(const float *d, float *c) {
    for (int k = 0; k < BS; k++)
        for (int i = k + 1; i < BS; i++) {
            float l = d[i * BS + k];
            for (int j = 0; j < BS; j++) c[i * BS + j] -= l * c[k * BS + j];
        }
}

/* Block below the diagonal: r = r U^-1 (U from d). */
static void bdiv(const float *d, float *r) {
    for (int i = 0; i < BS; i++)
        for (int k = 0; k < BS; k++) {
            float v = r[i * BS + k] /= d[k * BS + k];
            for (int j = k + 1; j < BS; j++) r[i * BS + j] -= v * d[k * BS + j];
        }
}

/* Inner block: x -= r c. */
static void bmod(const float *r, const float *c, float *x) {
    for (int i = 0; i < BS; i++)
        for (int k = 0; k < BS; k++) {
            float v = r[i * BS + k];
            for (int j = 0; j < BS; j++) x[i * BS + j] -= v * c[k * BS + j];
        }
}

/* ---- the factorisation ---- */

static void lu_tasks(float **A) {
    for (int kk = 0; kk < NB; kk++) {
        float *diag = A[kk * NB + kk];
        lu0(diag);
        for (int jj = kk + 1; jj < NB; jj++) {
            float *c = A[kk * NB + jj];
            if (c) {
#pragma omp task firstprivate(diag, c)
                fwd(diag, c);
            }
        }
        for (int ii = kk + 1; ii < NB; ii++) {
            float *r = A[ii * NB + kk];
            if (r) {
#pragma omp task firstprivate(diag, r)
                bdiv(diag, r);
            }
        }
#pragma omp taskwait
        for (int ii = kk + 1; ii < NB; ii++) {
            float *r = A[ii * NB + kk];
            if (!r) continue;
            for (int jj = kk + 1; jj < NB; jj++) {
                float *c = A[kk * NB + jj];
                if (!c) continue;
                float **x = &A[ii * NB + jj];
#pragma omp task firstprivate(r, c, x)
                {
                    if (!*x) *x = new_block();
                    bmod(r, c, *x);
                }
            }
        }
#pragma omp taskwait
    }
}

#ifdef _OPENMP
/* The same factorisation without tasks, to verify the task version. */
static void lu_serial(float **A) {
    for (int kk = 0; kk < NB; kk++) {
        float *diag = A[kk * NB + kk];
        lu0(diag);
        for (int jj = kk + 1; jj < NB; jj++)
            if (A[kk * NB + jj]) fwd(diag, A[kk * NB + jj]);
        for (int ii = kk + 1; ii < NB; ii++)
            if (A[ii * NB + kk]) bdiv(diag, A[ii * NB + kk]);
        for (int ii = kk + 1; ii < NB; ii++) {
            if (!A[ii * NB + kk]) continue;
            for (int jj = kk + 1; jj < NB; jj++) {
                if (!A[kk * NB + jj]) continue;
                if (!A[ii * NB + jj]) A[ii * NB + jj] = new_block();
                bmod(A[ii * NB + kk], A[kk * NB + jj], A[ii * NB + jj]);
            }
        }
    }
}
#endif

/* Sum of all stored values (finite or not) and the number of stored blocks. */
static double checksum(float **A, int *blocks) {
    double s = 0;
    *blocks = 0;
    for (int k = 0; k < NB * NB; k++) {
        if (!A[k]) continue;
        ++*blocks;
        for (int e = 0; e < BS * BS; e++) s += A[k][e];
    }
    return s;
}

int main(int argc, char **argv) {
    const char *bench = "omp_sparselu";
    NB = (int)arg_long(argc, argv, 1, 32);
    BS = (int)arg_long(argc, argv, 2, 64);
    int samples = (int)arg_long(argc, argv, 3, 3);
    double min_seconds = argc > 4 ? atof(argv[4]) : 0.0;
    if (NB < 1 || NB > 1000 || BS < 1 || BS > 1000 || samples < 1 || samples > 1000) die(bench, "bad arguments");
    int threads = omp_get_max_threads();
    int bound = team_bound(bench, threads);

    double t[1000], total = 0, sum = 0;
    int s, blocks = 0;
    for (s = -1; s < 1000 && (s < samples || total < min_seconds); s++) { /* s == -1: warm-up */
        float **A = generate();
        double t0 = mono_now();
#pragma omp parallel
#pragma omp single
        lu_tasks(A);
        double t1 = mono_now();
        sum = checksum(A, &blocks);
        if (!isfinite(sum)) die(bench, "the factors are not finite");
#ifdef _OPENMP
        if (s == -1) { /* verify once, against the serial algorithm */
            float **B = generate();
            lu_serial(B);
            double maxdiff = 0;
            for (int k = 0; k < NB * NB; k++) {
                if (!A[k] != !B[k]) die(bench, "fill-in differs from the serial factorisation");
                if (!A[k]) continue;
                for (int e = 0; e < BS * BS; e++) {
                    double d = fabs((double)A[k][e] - (double)B[k][e]);
                    if (!(d <= maxdiff)) maxdiff = d; /* NaN propagates */
                }
            }
            if (!(maxdiff == 0.0)) {
                fprintf(stderr, "%s: max abs difference to the serial factorisation: %g\n", bench, maxdiff);
                die(bench, "result differs from the serial factorisation");
            }
            release(B);
        }
#endif
        release(A);
        if (s >= 0) {
            t[s] = t1 - t0;
            total += t[s];
        }
    }
    samples = s;
    char case_[48], more[96];
    snprintf(case_, sizeof case_, "nb=%d,bs=%d", NB, BS);
    snprintf(more, sizeof more, ",\"result\":\"%.17g/%d\"", sum, blocks);
    emit_omp_samples(bench, case_, threads, t, samples, bound, more);
    return 0;
}
