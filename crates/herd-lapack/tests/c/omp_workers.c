/* One set of workers: an OpenMP program that calls LAPACK (dpotrf_) from its
 * serial code, from every thread of a parallel region, and from one thread of
 * a region (`single`) and from explicit tasks, measuring in each phase which threads worked and for
 * how long.
 *
 *   omp_workers MODE N
 *
 * The team's threads are recorded (gettid) in a first region; a phase's
 * *outside* CPU time is the CPU time (each thread's CPU clock, in ns) that
 * threads not of the team used during it: a LAPACK with its own thread pool
 * shows its workers there, and the program is then oversubscribed (team +
 * pool threads on the team's cores).
 *
 * MODE `herd`: the program runs on herd's OpenMP runtime with herd's LAPACK
 * in the same library (LD_PRELOAD=target/release/gomp/libgomp.so.1). Every
 * call must reach herd (herd_lapack_calls, looked up at run time), no phase
 * may start a thread, and no thread outside the team may use more than 2 ms
 * of CPU in any phase: the LAPACK calls run on the team's threads.
 * MODE `system`: libgomp and the system LAPACK (OpenBLAS); the same figures
 * are printed for comparison, only the results are checked.
 *
 * Every factor is checked in O(n^2), as HPL checks: for a random x,
 * ||A*x - L*(L^T*x)||_inf / (n eps ||A||_1 ||x||_inf) < 30; and the strict
 * upper triangle must be untouched. Exits 1 on any failed check. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);

static int failures;

#define MAX_THREADS 4096

/* The process's threads and each one's CPU time so far (ns). */
struct snapshot {
  int n;
  int tid[MAX_THREADS];
  long long ns[MAX_THREADS];
};

/* A thread's CPU-time clock (Linux: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)),
 * readable for any thread of this process. */
static long long thread_cpu_ns(int tid) {
  clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0)
    return -1; /* the thread has exited */
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void snap(struct snapshot *s) {
  DIR *d = opendir("/proc/self/task");
  if (!d) {
    perror("/proc/self/task");
    exit(2);
  }
  s->n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && s->n < MAX_THREADS)
    if (e->d_name[0] != '.') {
      int tid = atoi(e->d_name);
      s->tid[s->n] = tid;
      s->ns[s->n++] = thread_cpu_ns(tid);
    }
  closedir(d);
}

static int team_tid[MAX_THREADS], team_size;

static int in_team(int tid) {
  for (int i = 0; i < team_size; i++)
    if (team_tid[i] == tid)
      return 1;
  return 0;
}

/* CPU time (ms) used between `a` and `b` by threads outside the team, and how
 * many of them used more than 2 ms. */
static double outside_ms(const struct snapshot *a, const struct snapshot *b, int *busy) {
  double ms = 0;
  *busy = 0;
  for (int i = 0; i < b->n; i++) {
    if (in_team(b->tid[i]) || b->ns[i] < 0)
      continue;
    long long before = 0;
    for (int j = 0; j < a->n; j++)
      if (a->tid[j] == b->tid[i] && a->ns[j] >= 0)
        before = a->ns[j];
    double d = (b->ns[i] - before) / 1e6;
    ms += d;
    if (d > 2)
      ++*busy;
  }
  return ms;
}

/* A symmetric positive definite matrix (column-major, full storage) from a
 * seed: a random symmetric part plus n on the diagonal. */
static double *spd(int n, unsigned seed) {
  double *a = malloc(sizeof(double) * n * n);
  if (!a) {
    perror("malloc");
    exit(2);
  }
  unsigned long s = seed * 2654435761ul + 1;
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      s = s * 6364136223846793005ul + 1442695040888963407ul;
      double v = (double)(s >> 11) / (double)(1ul << 53) - 0.5;
      a[i + (size_t)j * n] = v;
      a[j + (size_t)i * n] = v;
    }
  for (int i = 0; i < n; i++)
    a[i + (size_t)i * n] += n;
  return a;
}

/* Factors a copy of `a` and checks the factor; returns the seconds. */
static double factor_and_check(const double *a, int n, const char *where) {
  double *l = malloc(sizeof(double) * n * n);
  if (!l) {
    perror("malloc");
    exit(2);
  }
  memcpy(l, a, sizeof(double) * n * n);
  int info = -1;
  double t0 = omp_get_wtime();
  dpotrf_("L", &n, l, &n, &info, 1);
  double secs = omp_get_wtime() - t0;
  if (info != 0) {
    printf("FAIL %s: dpotrf_ info = %d\n", where, info);
#pragma omp atomic
    failures++;
    free(l);
    return secs;
  }
  /* O(n^2), as HPL checks: for a random x, A*x against L*(L^T*x), scaled by
   * n * eps * ||A||_1 * ||x||_inf; and the strict upper triangle untouched. */
  double *x = malloc(sizeof(double) * n), *z = calloc(n, sizeof(double));
  if (!x || !z) {
    perror("malloc");
    exit(2);
  }
  unsigned long s = 12345;
  double xnorm = 0, anorm = 0, rnorm = 0;
  for (int i = 0; i < n; i++) {
    s = s * 6364136223846793005ul + 1442695040888963407ul;
    x[i] = (double)(s >> 11) / (double)(1ul << 53) - 0.5;
    xnorm = fmax(xnorm, fabs(x[i]));
  }
  for (int k = 0; k < n; k++) /* z = L^T x */
    for (int i = k; i < n; i++)
      z[k] += l[i + (size_t)k * n] * x[i];
  for (int j = 0; j < n; j++) {
    double acol = 0;
    for (int i = 0; i < n; i++)
      acol += fabs(a[i + (size_t)j * n]);
    anorm = fmax(anorm, acol);
  }
  int upper_changed = 0;
  for (int i = 0; i < n; i++) {
    double ax = 0, lz = 0;
    for (int j = 0; j < n; j++)
      ax += a[i + (size_t)j * n] * x[j];
    for (int k = 0; k <= i; k++)
      lz += l[i + (size_t)k * n] * z[k];
    rnorm = fmax(rnorm, fabs(ax - lz));
    for (int j = i + 1; j < n; j++)
      upper_changed |= l[i + (size_t)j * n] != a[i + (size_t)j * n];
  }
  double ratio = rnorm / (n * DBL_EPSILON * anorm * xnorm);
  if (!(ratio < 30)) {
    printf("FAIL %s: residual ratio %.3g (threshold 30)\n", where, ratio);
#pragma omp atomic
    failures++;
  }
  if (upper_changed) {
    printf("FAIL %s: dpotrf_(\"L\") changed the strict upper triangle\n", where);
#pragma omp atomic
    failures++;
  }
  free(x);
  free(z);
  free(l);
  return secs;
}

typedef long long (*calls_fn)(const char *);

/* In herd mode: this thread's dpotrf_ calls must have reached herd. */
static void check_reached(calls_fn calls, long long want, const char *where) {
  if (!calls)
    return;
  long long got = calls("dpotrf");
  if (got != want) {
    printf("FAIL %s: herd_lapack_calls(\"dpotrf\") = %lld on this thread, expected %lld\n", where, got, want);
#pragma omp atomic
    failures++;
  }
}

/* Waits (at most 5 s) until threads outside the team are idle: a LAPACK
 * library's pool may spin for a while after its start, which is not a call's
 * work. */
static void settle(void) {
  static struct snapshot a, b;
  for (int i = 0; i < 100; i++) {
    snap(&a);
    usleep(50000);
    snap(&b);
    int busy;
    if (outside_ms(&a, &b, &busy) < 1)
      return;
  }
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "herd") && strcmp(argv[1], "system"))) {
    fprintf(stderr, "usage: %s herd|system N\n", argv[0]);
    return 2;
  }
  int herd = !strcmp(argv[1], "herd");
  int n = atoi(argv[2]);
  calls_fn calls = (calls_fn)dlsym(RTLD_DEFAULT, "herd_lapack_calls");
  if (herd && !calls) {
    printf("FAIL: herd mode, but herd_lapack_calls is not defined: LAPACK is not herd's\n");
    return 1;
  }
  if (!herd)
    calls = NULL;

  static struct snapshot start, s0, s1, s2, s3, s4;
  snap(&start);
  /* The team, once: its threads' ids. */
#pragma omp parallel
  {
#pragma omp single
    team_size = omp_get_num_threads();
#pragma omp barrier
    team_tid[omp_get_thread_num()] = gettid();
  }
  int team = team_size;
  settle();
  snap(&s0);

  /* 1. From the serial part. */
  double *a = spd(n, 1);
  double serial = factor_and_check(a, n, "serial call");
  check_reached(calls, 1, "serial call");
  snap(&s1);

  /* 2. From every thread of a region, each on its own matrix. */
  double each = 0;
#pragma omp parallel reduction(max : each)
  {
    double *b = spd(n, 100 + omp_get_thread_num());
    each = factor_and_check(b, n, "call from every thread");
    check_reached(calls, omp_get_thread_num() == 0 ? 2 : 1, "call from every thread");
    free(b);
  }
  snap(&s2);

  /* 3. From one thread of a region while the others wait at its barrier. */
  double single = 0;
#pragma omp parallel
  {
#pragma omp single
    {
      long long before = calls ? calls("dpotrf") : 0;
      single = factor_and_check(a, n, "call from a single");
      check_reached(calls, before + 1, "call from a single");
    }
  }
  snap(&s3);

  /* 4. From explicit tasks (run on whichever member takes them). */
  double tasks = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  for (int t = 0; t < 8; t++) {
#pragma omp task
    {
      double *b = spd(n, 200 + t);
      factor_and_check(b, n, "call from a task");
      free(b);
    }
  }
  tasks = omp_get_wtime() - tasks;
  snap(&s4);

  int busy1, busy2, busy3, busy4;
  double out1 = outside_ms(&s0, &s1, &busy1), out2 = outside_ms(&s1, &s2, &busy2),
         out3 = outside_ms(&s2, &s3, &busy3), out4 = outside_ms(&s3, &s4, &busy4);
  printf("threads: at start %d, team %d, after the first region %d, at the end %d\n", start.n, team, s0.n, s4.n);
  printf("serial call: %.4f s, outside the team %.1f ms CPU on %d thread(s)\n", serial, out1, busy1);
  printf("call from every thread: %.4f s (slowest), outside the team %.1f ms CPU on %d thread(s)\n", each, out2,
         busy2);
  printf("call from a single: %.4f s, outside the team %.1f ms CPU on %d thread(s)\n", single, out3, busy3);
  printf("8 tasks, each a call (with their matrices' set-up and checks): %.4f s, outside the team %.1f ms CPU on "
         "%d thread(s)\n",
         tasks, out4, busy4);
  if (herd) {
    if (s4.n != s0.n) {
      printf("FAIL: the LAPACK calls changed the process's threads from %d to %d\n", s0.n, s4.n);
      failures++;
    }
    if (busy1 || busy2 || busy3 || busy4) {
      printf("FAIL: threads outside the OpenMP team worked during the LAPACK calls\n");
      failures++;
    }
  }
  free(a);
  if (failures)
    printf("omp_workers: %d check(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
