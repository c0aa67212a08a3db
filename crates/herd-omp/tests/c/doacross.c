/* doacross.c — doacross loops (`ordered(n)` with `depend(sink: …)` and
 * `depend(source)`): 1-D, 2-D, 3-D and 8-D nests (8-element sink vectors
 * pass arguments of GOMP_doacross_wait on the stack), several sinks per
 * iteration, the static, static,1, dynamic,2, guided and runtime schedules,
 * negative and non-unit strides, unsigned long long loops, sink vectors
 * outside the iteration space, collapse with ordered, and a doacross loop
 * with lastprivate(conditional:) (GOMP_loop_doacross_start with `mem`).
 * Each iteration checks that every iteration it depends on has finished
 * (its done flag, published before `depend(source)`), and the results of the
 * recurrences are compared with a serial computation.
 */
#include "check.h"

#define N1 2000
#define R2 64
#define C2 48
#define D3 12

static long a1[N1];
static unsigned char done1[N1];
static long a2[R2][C2];
static unsigned char done2[R2][C2];
static long a3[D3][D3][D3];
static unsigned char done3[D3][D3][D3];
static int bad;

static inline void need(unsigned char *flag) {
    if (!__atomic_load_n(flag, __ATOMIC_RELAXED)) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
}
static inline void mark(unsigned char *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELAXED); }
static inline long mix(long x, long y) { return (x * 31 + y * 17 + 7) % 1000003; }

/* a[i] = mix(a[i-1], a[i-3]) */
static void serial1(long *out) {
    for (int i = 0; i < N1; i++) out[i] = mix(i >= 1 ? out[i - 1] : 1, i >= 3 ? out[i - 3] : 2);
}

#define BODY1                                                                        \
    {                                                                                \
        _Pragma("omp ordered depend(sink: i - 1) depend(sink: i - 3)");              \
        if (i >= 1) need(&done1[i - 1]);                                             \
        if (i >= 3) need(&done1[i - 3]);                                             \
        a1[i] = mix(i >= 1 ? a1[i - 1] : 1, i >= 3 ? a1[i - 3] : 2);                 \
        mark(&done1[i]);                                                             \
        _Pragma("omp ordered depend(source)");                                       \
    }

#define ONE_D(fn, SCHED)                                                             \
    static void fn(void) {                                                           \
        _Pragma("omp parallel") {                                                    \
            _Pragma(SCHED) for (int i = 0; i < N1; i++) BODY1                        \
        }                                                                            \
    }
ONE_D(d1_static, "omp for ordered(1) schedule(static)")
ONE_D(d1_static1, "omp for ordered(1) schedule(static, 1)")
ONE_D(d1_dynamic2, "omp for ordered(1) schedule(dynamic, 2)")
ONE_D(d1_guided, "omp for ordered(1) schedule(guided)")
ONE_D(d1_runtime, "omp for ordered(1) schedule(runtime)")
ONE_D(d1_nowait, "omp for ordered(1) schedule(dynamic) nowait")

static void run1(const char *name, void (*fn)(void)) {
    static long want[N1];
    serial1(want);
    for (int rep = 0; rep < 5; rep++) {
        memset(a1, 0, sizeof a1);
        memset(done1, 0, sizeof done1);
        bad = 0;
        fn();
        int ok = !bad && !memcmp(a1, want, sizeof a1);
        if (!ok || rep == 4) {
            CHECK(name, ok, "rep %d: %d dependences not yet done; result %s", rep, bad,
                  memcmp(a1, want, sizeof a1) ? "differs from serial" : "ok");
            return;
        }
    }
}

/* 2-D wavefront: a[i][j] = mix(a[i-1][j] + a[i-1][j+1], a[i][j-1]). */
static long at2(long (*a)[C2], int i, int j) { return i >= 0 && j >= 0 && j < C2 ? a[i][j] : 3; }
static void serial2(long (*out)[C2]) {
    for (int i = 0; i < R2; i++)
        for (int j = 0; j < C2; j++) out[i][j] = mix(at2(out, i - 1, j) + at2(out, i - 1, j + 1), at2(out, i, j - 1));
}

#define BODY2                                                                          \
    {                                                                                  \
        _Pragma("omp ordered depend(sink: i - 1, j) depend(sink: i - 1, j + 1) depend(sink: i, j - 1)"); \
        if (i >= 1) need(&done2[i - 1][j]);                                            \
        if (i >= 1 && j + 1 < C2) need(&done2[i - 1][j + 1]);                          \
        if (j >= 1) need(&done2[i][j - 1]);                                            \
        a2[i][j] = mix(at2(a2, i - 1, j) + at2(a2, i - 1, j + 1), at2(a2, i, j - 1));  \
        mark(&done2[i][j]);                                                            \
        _Pragma("omp ordered depend(source)");                                         \
    }

#define TWO_D(fn, SCHED)                                                               \
    static void fn(void) {                                                             \
        _Pragma("omp parallel") {                                                      \
            _Pragma(SCHED) for (int i = 0; i < R2; i++) for (int j = 0; j < C2; j++) BODY2 \
        }                                                                              \
    }
TWO_D(d2_static, "omp for ordered(2) schedule(static)")
TWO_D(d2_static1, "omp for ordered(2) schedule(static, 1)")
TWO_D(d2_dynamic2, "omp for ordered(2) schedule(dynamic, 2)")
TWO_D(d2_guided, "omp for ordered(2) schedule(guided)")
TWO_D(d2_runtime, "omp for ordered(2) schedule(runtime)")
TWO_D(d2_collapse, "omp for ordered(2) collapse(2) schedule(dynamic, 3)")

static void run2(const char *name, void (*fn)(void)) {
    static long want[R2][C2];
    serial2(want);
    for (int rep = 0; rep < 5; rep++) {
        memset(a2, 0, sizeof a2);
        memset(done2, 0, sizeof done2);
        bad = 0;
        fn();
        int ok = !bad && !memcmp(a2, want, sizeof a2);
        if (!ok || rep == 4) {
            CHECK(name, ok, "rep %d: %d dependences not yet done; result %s", rep, bad,
                  memcmp(a2, want, sizeof a2) ? "differs from serial" : "ok");
            return;
        }
    }
}

/* 3-D, strides: i counts down by 1 from D3-1, j up by 2 (j = 2*jj), k up. */
static long at3(int i, int j, int k) {
    return i < D3 && j >= 0 && k >= 0 ? a3[i][j][k] : 5;
}
static void check3(void) {
    static long want[D3][D3][D3];
    memset(a3, 0, sizeof a3);
    memset(done3, 0, sizeof done3);
    bad = 0;
    /* Only even j are iterations (j += 2). */
    for (int i = D3 - 1; i >= 0; i--)
        for (int j = 0; j < D3; j += 2)
            for (int k = 0; k < D3; k++) a3[i][j][k] = mix(at3(i + 1, j, k) + at3(i, j - 2, k + 1 < D3 ? k + 1 : k), at3(i, j, k - 1));
    memcpy(want, a3, sizeof a3);
    memset(a3, 0, sizeof a3);
#pragma omp parallel
    {
#pragma omp for ordered(3) schedule(dynamic)
        for (int i = D3 - 1; i >= 0; i--)
            for (int j = 0; j < D3; j += 2)
                for (int k = 0; k < D3; k++) {
#pragma omp ordered depend(sink: i + 1, j, k) depend(sink: i, j - 2, k + 1) depend(sink: i, j - 2, k) depend(sink: i, j, k - 1)
                    if (i + 1 < D3) need(&done3[i + 1][j][k]);
                    if (j >= 2) need(&done3[i][j - 2][k + 1 < D3 ? k + 1 : k]);
                    if (k >= 1) need(&done3[i][j][k - 1]);
                    a3[i][j][k] = mix(at3(i + 1, j, k) + at3(i, j - 2, k + 1 < D3 ? k + 1 : k), at3(i, j, k - 1));
                    mark(&done3[i][j][k]);
#pragma omp ordered depend(source)
                }
    }
    CHECK("3d/negative and non-unit strides", !bad && !memcmp(a3, want, sizeof a3), "%d dependences not yet done; result %s",
          bad, memcmp(a3, want, sizeof a3) ? "differs" : "ok");
}

/* unsigned long long loops beyond 2^63 (bounds not known at compile time,
 * so gcc uses the _ull_ entry points), step 3, 2-D. */
static unsigned long long ull_base;
static void check_ull(void) {
    enum { M = 900, K = 4 };
    static long v[M][K], want[M][K];
    static unsigned char dn[M][K];
    const unsigned long long base = ull_base;
    memset(dn, 0, sizeof dn);
    bad = 0;
    for (int t = 0; t < M; t++)
        for (int k = 0; k < K; k++) want[t][k] = mix(t >= 1 ? want[t - 1][k] : 9, k >= 1 ? want[t][k - 1] : t);
#pragma omp parallel
    {
#pragma omp for ordered(2) schedule(dynamic, 4)
        for (unsigned long long x = base; x < base + 3ULL * M; x += 3)
            for (unsigned long long y = base; y < base + K; y++) {
#pragma omp ordered depend(sink: x - 3, y) depend(sink: x, y - 1)
                long t = (long)((x - base) / 3), k = (long)(y - base);
                if (t >= 1) need(&dn[t - 1][k]);
                if (k >= 1) need(&dn[t][k - 1]);
                v[t][k] = mix(t >= 1 ? v[t - 1][k] : 9, k >= 1 ? v[t][k - 1] : t);
                mark(&dn[t][k]);
#pragma omp ordered depend(source)
            }
    }
    CHECK("ull/2^63 + step 3, 2-D", !bad && !memcmp(v, want, sizeof v), "%d dependences not yet done; result %s", bad,
          memcmp(v, want, sizeof v) ? "differs" : "ok");
}

/* reduction(task, …) on a doacross loop: GOMP_loop_doacross_start with
 * `reductions`, and tasks of the iterations adding in. */
static void check_task_reduction(void) {
    enum { M = 200 };
    static long v[M];
    long s = 0;
#pragma omp parallel
    {
#pragma omp for ordered(1) reduction(task, +: s) schedule(static, 2)
        for (int i = 0; i < M; i++) {
#pragma omp ordered depend(sink: i - 1)
            v[i] = (i ? v[i - 1] : 0) + i;
#pragma omp task in_reduction(+: s)
            s += i;
#pragma omp ordered depend(source)
        }
    }
    CHECK("reduction(task) doacross", s == (long)M * (M - 1) / 2 && v[M - 1] == s, "sum %ld, v %ld", s, v[M - 1]);
}

/* Sinks far outside the iteration space (must not wait), and a sink on a
 * later iteration is not allowed, so only earlier ones are used. */
static void check_outside(void) {
    enum { M = 300 };
    static long v[M], want[M];
    for (int t = 0; t < M; t++) want[t] = mix(t >= 1 ? want[t - 1] : 4, t >= 1000 ? 1 : 0);
#pragma omp parallel
    {
#pragma omp for ordered(1) schedule(static, 3)
        for (int i = 0; i < M; i++) {
#pragma omp ordered depend(sink: i - 1000) depend(sink: i - 1)
            v[i] = mix(i >= 1 ? v[i - 1] : 4, i >= 1000 ? 1 : 0);
#pragma omp ordered depend(source)
        }
    }
    CHECK("sinks outside the iteration space", !memcmp(v, want, sizeof v), "result differs");
}

/* ordered(8): sink vectors of 8 elements (GOMP_doacross_wait's arguments 7
 * and 8 are on the stack). */
static int e8[3][3][3][3][3][3][3][3];
static void check8(void) {
    memset(e8, 0, sizeof e8);
    bad = 0;
#pragma omp parallel
    {
#pragma omp for ordered(8) schedule(static, 1)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                for (int c = 0; c < 3; c++)
                    for (int d = 0; d < 3; d++)
                        for (int e = 0; e < 3; e++)
                            for (int f = 0; f < 3; f++)
                                for (int g = 0; g < 3; g++)
                                    for (int h = 0; h < 3; h++) {
#pragma omp ordered depend(sink: a - 1, b, c, d, e, f, g, h) depend(sink: a, b, c, d, e, f, g, h - 1) depend(sink: a, b, c, d, e, f, g - 1, h + 1)
                                        if (a >= 1 && !__atomic_load_n(&e8[a - 1][b][c][d][e][f][g][h], __ATOMIC_RELAXED)) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
                                        if (h >= 1 && !__atomic_load_n(&e8[a][b][c][d][e][f][g][h - 1], __ATOMIC_RELAXED)) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
                                        if (g >= 1 && h < 2 && !__atomic_load_n(&e8[a][b][c][d][e][f][g - 1][h + 1], __ATOMIC_RELAXED)) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
                                        usleep(a == 0 && b == 0 ? 50 : 0);
                                        __atomic_store_n(&e8[a][b][c][d][e][f][g][h], 1, __ATOMIC_RELAXED);
#pragma omp ordered depend(source)
                                    }
    }
    int all = 1;
    for (int k = 0; k < 6561; k++) all &= ((int *)e8)[k] == 1;
    CHECK("ordered(8)/8-element sinks", !bad && all, "%d dependences not yet done; all ran: %d", bad, all);
}

/* ordered(3) collapse(2): the first two loops collapsed, sink on all three. */
static long c3[20][10][8];
static void check_collapse3(void) {
    static long want[20][10][8];
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 10; j++)
            for (int k = 0; k < 8; k++) want[i][j][k] = mix(i ? want[i - 1][j][k] : 1, k ? want[i][j][k - 1] : 2);
    memset(c3, 0, sizeof c3);
#pragma omp parallel
    {
#pragma omp for ordered(3) collapse(2) schedule(guided)
        for (int i = 0; i < 20; i++)
            for (int j = 0; j < 10; j++)
                for (int k = 0; k < 8; k++) {
#pragma omp ordered depend(sink: i - 1, j, k) depend(sink: i, j, k - 1)
                    c3[i][j][k] = mix(i ? c3[i - 1][j][k] : 1, k ? c3[i][j][k - 1] : 2);
#pragma omp ordered depend(source)
                }
    }
    CHECK("ordered(3) collapse(2)", !memcmp(c3, want, sizeof c3), "result differs from serial");
}

/* lastprivate(conditional:) makes gcc call GOMP_loop_doacross_start with `mem`. */
static void check_lastprivate(void) {
    enum { M = 500 };
    static long v[M];
    long last = -1;
#pragma omp parallel
    {
#pragma omp for ordered(1) lastprivate(conditional: last) schedule(dynamic, 5)
        for (int i = 0; i < M; i++) {
#pragma omp ordered depend(sink: i - 1)
            v[i] = (i ? v[i - 1] : 0) + i;
            if (i % 7 == 3) last = v[i];
#pragma omp ordered depend(source)
        }
    }
    long want = -1, s = 0;
    for (int i = 0; i < M; i++) {
        s += i;
        if (i % 7 == 3) want = s;
    }
    CHECK("lastprivate(conditional) doacross", last == want && v[M - 1] == s, "last %ld want %ld", last, want);
}

int main(void) {
    check_begin("doacross");
    run1("1d/static", d1_static);
    run1("1d/static,1", d1_static1);
    run1("1d/dynamic,2", d1_dynamic2);
    run1("1d/guided", d1_guided);
    run1("1d/runtime", d1_runtime);
    run1("1d/dynamic nowait", d1_nowait);
    run2("2d/static", d2_static);
    run2("2d/static,1", d2_static1);
    run2("2d/dynamic,2", d2_dynamic2);
    run2("2d/guided", d2_guided);
    run2("2d/runtime", d2_runtime);
    run2("2d/collapse(2) dynamic,3", d2_collapse);
    check3();
    ull_base = 1ULL << 63;
    check_ull();
    check_task_reduction();
    check_outside();
    check8();
    check_collapse3();
    check_lastprivate();
    return check_done();
}
