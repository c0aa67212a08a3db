/* A C program linked against libherd_lapack.so that defines its own xerbla_,
 * as programs (and NumPy's lapack_lite) do: herd's argument errors must reach
 * it with LAPACK's routine name and position, and INFO must be -position.
 * Called with gfortran's hidden CHARACTER lengths, as Fortran callers pass them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc, size_t ta_len, size_t tb_len);

static char seen_name[16];
static int seen_info, seen_calls;

void xerbla_(const char *name, const int *info, size_t len) {
  size_t n = len < sizeof seen_name - 1 ? len : sizeof seen_name - 1;
  memcpy(seen_name, name, n);
  seen_name[n] = 0;
  while (n > 0 && seen_name[n - 1] == ' ') seen_name[--n] = 0;
  seen_info = *info;
  seen_calls++;
}

static int failures;
static void expect(int cond, const char *what) {
  if (!cond) { fprintf(stderr, "FAILED: %s\n", what); failures++; }
}

int main(void) {
  double a[9] = {4, 2, 2, 2, 5, 3, 2, 3, 6};
  int n = 3, lda = 3, bad_lda = 2, info = 99;
  dpotrf_("X", &n, a, &lda, &info, 1);
  expect(info == -1 && seen_calls == 1 && strcmp(seen_name, "DPOTRF") == 0 && seen_info == 1,
         "dpotrf_ with UPLO='X': INFO -1 and xerbla_(\"DPOTRF\", 1)");
  dpotrf_("L", &n, a, &bad_lda, &info, 1);
  expect(info == -4 && seen_calls == 2 && seen_info == 4, "dpotrf_ with LDA < N: INFO -4, xerbla_ position 4");
  dpotrf_("L", &n, a, &lda, &info, 1);
  expect(info == 0 && seen_calls == 2, "dpotrf_ of an SPD matrix: INFO 0, no xerbla_");
  expect(a[0] == 2.0 && a[1] == 1.0 && a[2] == 1.0, "dpotrf_: first column of L is (2, 1, 1)");
  expect(a[3] == 2.0 && a[6] == 2.0, "dpotrf_ 'L' leaves the strict upper triangle");

  double b[4] = {1, 2, 3, 4}, c[4] = {0};
  int two = 2, one = 1;
  double alpha = 1.0, beta = 0.0;
  dgemm_("N", "N", &two, &two, &two, &alpha, b, &one, b, &two, &beta, c, &two, 1, 1);
  expect(seen_calls == 3 && strcmp(seen_name, "DGEMM") == 0 && seen_info == 8, "dgemm_ with LDA < M: xerbla_ position 8");
  dgemm_("N", "T", &two, &two, &two, &alpha, b, &two, b, &two, &beta, c, &two, 1, 1);
  expect(seen_calls == 3 && c[0] == 10 && c[1] == 14 && c[2] == 14 && c[3] == 20, "dgemm_ B*B^T");
  if (failures) return 1;
  puts("xerbla: ok");
  return 0;
}
