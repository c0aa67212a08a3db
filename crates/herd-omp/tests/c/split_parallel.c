/* split_parallel.c — the split-parallel ABI that gcc emitted before 4.9:
 *     GOMP_parallel_start(fn, data, n); fn(data); GOMP_parallel_end();
 * (libgomp still exports it for old binaries). Called here by hand, as old
 * gcc's generated code did: the caller runs fn as member 0 between the two
 * calls. Checked: team size and thread numbers, every member runs fn once,
 * barriers and a worksharing loop inside fn, nesting (a split region inside
 * a split region's member 0, and inside a regular parallel region), many
 * regions in a row, the combined forms (`parallel for` of each schedule,
 * `parallel sections`: GOMP_parallel_loop_*_start / _sections_start, whose
 * fn takes chunks with GOMP_loop_*_next / GOMP_sections_next as old gcc's
 * code did), and the state after the region (level 0, one thread).
 */
#include "check.h"

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
void GOMP_parallel_end(void);
void GOMP_parallel_loop_static_start(void (*)(void *), void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_dynamic_start(void (*)(void *), void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_guided_start(void (*)(void *), void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_runtime_start(void (*)(void *), void *, unsigned, long, long, long);
void GOMP_parallel_sections_start(void (*)(void *), void *, unsigned, unsigned);
_Bool GOMP_loop_static_next(long *, long *);
_Bool GOMP_loop_dynamic_next(long *, long *);
_Bool GOMP_loop_guided_next(long *, long *);
_Bool GOMP_loop_runtime_next(long *, long *);
void GOMP_loop_end_nowait(void);
unsigned GOMP_sections_next(void);
void GOMP_sections_end_nowait(void);

#define MAXT 64

struct region {
    int want;                /* requested size (0: the ICV) */
    int seen_threads[MAXT];  /* per thread number: times fn ran */
    int sizes_ok, levels_ok, after_barrier_ok;
    int phase;               /* incremented by every member before the barrier */
    long sum;                /* a worksharing loop's reduction */
    int level;               /* omp_get_level() expected inside */
};

static void body(void *p) {
    struct region *r = p;
    int me = omp_get_thread_num(), n = omp_get_num_threads();
    if (me < MAXT) __atomic_fetch_add(&r->seen_threads[me], 1, __ATOMIC_RELAXED);
    if ((r->want == 0 || n == r->want) && omp_in_parallel() == (omp_get_active_level() > 0) &&
        (n == 1 || omp_get_active_level() >= 1))
        __atomic_fetch_add(&r->sizes_ok, 1, __ATOMIC_RELAXED);
    if (omp_get_level() == r->level) __atomic_fetch_add(&r->levels_ok, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&r->phase, 1, __ATOMIC_SEQ_CST);
#pragma omp barrier
    if (__atomic_load_n(&r->phase, __ATOMIC_SEQ_CST) == n)
        __atomic_fetch_add(&r->after_barrier_ok, 1, __ATOMIC_RELAXED);
    long local = 0;
#pragma omp for schedule(dynamic, 7)
    for (int i = 1; i <= 1000; i++) local += i;
    __atomic_fetch_add(&r->sum, local, __ATOMIC_RELAXED);
}

/* One split region of `want` threads at nesting level `level`; returns the
 * team size it saw. */
static int split_region(const char *what, int want, int level) {
    struct region r = {.want = want, .level = level};
    GOMP_parallel_start(body, &r, (unsigned)want);
    body(&r); /* member 0, in the caller's frame */
    GOMP_parallel_end();
    int n = 0;
    for (int i = 0; i < MAXT; i++) n += r.seen_threads[i] != 0;
    int once = 1;
    for (int i = 0; i < n; i++) once &= r.seen_threads[i] == 1;
    char name[160];
    snprintf(name, sizeof name, "%s: every member ran fn once (team of %d)", what, n);
    CHECK(name, once && n >= 1, "counts %d %d %d", r.seen_threads[0], r.seen_threads[1], r.seen_threads[2]);
    snprintf(name, sizeof name, "%s: team size and omp_in_parallel inside", what);
    CHECK_EQ(name, r.sizes_ok, n);
    snprintf(name, sizeof name, "%s: omp_get_level inside", what);
    CHECK_EQ(name, r.levels_ok, n);
    snprintf(name, sizeof name, "%s: barrier inside", what);
    CHECK_EQ(name, r.after_barrier_ok, n);
    snprintf(name, sizeof name, "%s: worksharing loop inside", what);
    CHECK_EQ(name, r.sum, 500500L);
    return n;
}

/* The combined split forms: fn takes its chunks of the prepared loop (or
 * its sections) as old gcc's outlined body did. */
struct combined {
    _Bool (*next)(long *, long *); /* NULL: sections */
    long sum;                    /* iterations (or section numbers) summed */
    int hits[4];                 /* per section: times it ran */
};

static void combined_body(void *p) {
    struct combined *c = p;
    long local = 0;
    if (c->next) {
        long s, e;
        while (c->next(&s, &e))
            for (long i = s; i < e; i++) local += i;
        GOMP_loop_end_nowait();
    } else {
        for (unsigned k = GOMP_sections_next(); k != 0; k = GOMP_sections_next()) {
            if (k <= 4) __atomic_fetch_add(&c->hits[k - 1], 1, __ATOMIC_RELAXED);
            local += k;
        }
        GOMP_sections_end_nowait();
    }
    __atomic_fetch_add(&c->sum, local, __ATOMIC_RELAXED);
}

static void combined_forms(void) {
    struct {
        const char *name;
        _Bool (*next)(long *, long *);
    } loops[] = {{"static", GOMP_loop_static_next},
                 {"dynamic", GOMP_loop_dynamic_next},
                 {"guided", GOMP_loop_guided_next},
                 {"runtime", GOMP_loop_runtime_next}};
    for (int l = 0; l < 4; l++) {
        struct combined c = {.next = loops[l].next};
        /* Iterations 1..1000 (end exclusive), chunk 7. */
        if (l == 0) GOMP_parallel_loop_static_start(combined_body, &c, 0, 1, 1001, 1, 7);
        if (l == 1) GOMP_parallel_loop_dynamic_start(combined_body, &c, 0, 1, 1001, 1, 7);
        if (l == 2) GOMP_parallel_loop_guided_start(combined_body, &c, 0, 1, 1001, 1, 7);
        if (l == 3) GOMP_parallel_loop_runtime_start(combined_body, &c, 0, 1, 1001, 1);
        combined_body(&c);
        GOMP_parallel_end();
        char name[96];
        snprintf(name, sizeof name, "split parallel loop (%s): every iteration once", loops[l].name);
        CHECK_EQ(name, c.sum, 500500L);
    }
    struct combined c = {.next = NULL};
    GOMP_parallel_sections_start(combined_body, &c, 0, 4);
    combined_body(&c);
    GOMP_parallel_end();
    CHECK("split parallel sections: every section once",
          c.sum == 10 && c.hits[0] == 1 && c.hits[1] == 1 && c.hits[2] == 1 && c.hits[3] == 1,
          "sum %ld hits %d %d %d %d", c.sum, c.hits[0], c.hits[1], c.hits[2], c.hits[3]);
}

struct outer {
    int inner_sizes_ok;
};

static void outer_body(void *p) {
    struct outer *o = p;
    if (omp_get_thread_num() == 0) {
        /* A split region nested in member 0 of a split region: inactive
         * unless max-active-levels allows it; one thread or two. */
        int n = split_region("nested in a split region", 0, 2);
        if (n >= 1) __atomic_fetch_add(&o->inner_sizes_ok, 1, __ATOMIC_RELAXED);
    }
#pragma omp barrier
}

int main(void) {
    check_begin("split_parallel");
    int t = omp_get_max_threads();
    int n = split_region("default size", 0, 1);
    CHECK_EQ("default size is the ICV", n, t);
    if (t > 1) split_region("num_threads(2)", 2, 1);
    split_region("num_threads(1)", 1, 1);

    struct outer o = {0};
    GOMP_parallel_start(outer_body, &o, 0);
    outer_body(&o);
    GOMP_parallel_end();
    CHECK_EQ("nested split region ran", o.inner_sizes_ok, 1);

    int inner_ok = 0;
#pragma omp parallel num_threads(2) reduction(+ : inner_ok)
    {
        if (omp_get_thread_num() == 1) inner_ok += split_region("inside a regular parallel region", 0, 2) >= 1;
    }
    CHECK_EQ("split region inside a regular region", inner_ok, 1);

    combined_forms();

    int ok = 1;
    for (int i = 0; i < 200 && ok; i++) {
        struct region r = {.want = 0, .level = 1};
        GOMP_parallel_start(body, &r, 0);
        body(&r);
        GOMP_parallel_end();
        ok = r.sum == 500500L && r.after_barrier_ok == t;
    }
    CHECK("200 split regions in a row", ok, "a region went wrong");
    CHECK("after the regions: level 0, one thread", omp_get_level() == 0 && omp_get_num_threads() == 1 &&
                                                         !omp_in_parallel(), "level %d", omp_get_level());
    return check_done();
}
