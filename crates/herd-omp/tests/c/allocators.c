/* OpenMP 5.0 memory allocators: omp_init_allocator's traits (alignment,
 * pool_size, fallback, fb_data, pinned, invalid keys and values), the
 * predefined allocators and memory spaces, omp_alloc / omp_calloc /
 * omp_realloc / omp_aligned_alloc / omp_free, the default allocator, and the
 * `allocate` clause (GOMP_alloc / GOMP_free).  Values are what libgomp does
 * on a machine without memkind (no high-bandwidth memory); pinned memory
 * (the pinned trait, gcc 14's ompx_gnu_pinned_mem_alloc) is what gcc 14's
 * libgomp does, which gcc 12's lacks (checked with check_known there). */
#include "check.h"
#include <stdint.h>
#include <sys/wait.h>
#include <fcntl.h>

#define ALIGNED(p, a) (((uintptr_t)(p) & ((a)-1)) == 0)

static omp_allocator_handle_t make(omp_memspace_handle_t ms, int n, const omp_alloctrait_t *t) {
    return omp_init_allocator(ms, n, t);
}

static omp_allocator_handle_t one(omp_alloctrait_key_t k, omp_uintptr_t v) {
    omp_alloctrait_t t[1] = {{k, v}};
    return make(omp_default_mem_space, 1, t);
}

static void alignment(void) {
    static const size_t aligns[] = {64, 4096};
    for (int i = 0; i < 2; i++) {
        size_t al = aligns[i];
        char name[64];
        omp_allocator_handle_t a = one(omp_atk_alignment, al);
        snprintf(name, sizeof name, "alignment %zu: allocator made", al);
        if (!CHECK(name, a != omp_null_allocator, "omp_init_allocator returned omp_null_allocator")) continue;
        int bad = 0;
        void *ps[16];
        for (int j = 0; j < 16; j++) {
            ps[j] = omp_alloc(1 + j * 37, a);
            bad += !ps[j] || !ALIGNED(ps[j], al);
            if (ps[j]) memset(ps[j], 0xab, 1 + j * 37);
        }
        snprintf(name, sizeof name, "alignment %zu: omp_alloc", al);
        CHECK(name, bad == 0, "%d of 16 blocks NULL or misaligned (first %p)", bad, ps[0]);
        int *c = omp_calloc(100, sizeof(int), a);
        int zero = c != NULL;
        for (int j = 0; c && j < 100; j++) zero &= c[j] == 0;
        snprintf(name, sizeof name, "alignment %zu: omp_calloc aligned and zeroed", al);
        CHECK(name, c && ALIGNED(c, al) && zero, "%p zeroed=%d", (void *)c, zero);
        /* realloc keeps contents and the allocator's alignment */
        for (int j = 0; j < 100; j++) c[j] = j * 3;
        int *r = omp_realloc(c, 1000 * sizeof(int), a, a);
        int kept = r != NULL;
        for (int j = 0; r && j < 100; j++) kept &= r[j] == j * 3;
        snprintf(name, sizeof name, "alignment %zu: omp_realloc keeps contents and alignment", al);
        CHECK(name, r && ALIGNED(r, al) && kept, "%p kept=%d", (void *)r, kept);
        omp_free(r, a);
        /* a larger alignment argument wins over the trait */
        void *big = omp_aligned_alloc(8192, 10, a);
        snprintf(name, sizeof name, "alignment %zu: omp_aligned_alloc(8192)", al);
        CHECK(name, big && ALIGNED(big, 8192), "%p", big);
        omp_free(big, a);
        for (int j = 0; j < 16; j++) omp_free(ps[j], omp_null_allocator); /* the block knows its allocator */
        omp_destroy_allocator(a);
    }
    void *p = omp_aligned_alloc(256, 100, omp_default_mem_alloc);
    CHECK("omp_aligned_alloc(256) on omp_default_mem_alloc", p && ALIGNED(p, 256), "%p", p);
    omp_free(p, omp_default_mem_alloc);
    int *q = omp_aligned_calloc(128, 50, sizeof(int), omp_default_mem_alloc);
    int zero = q != NULL;
    for (int j = 0; q && j < 50; j++) zero &= q[j] == 0;
    CHECK("omp_aligned_calloc(128)", q && ALIGNED(q, 128) && zero, "%p zeroed=%d", (void *)q, zero);
    omp_free(q, omp_default_mem_alloc);
}

static void pool(void) {
    omp_alloctrait_t t[2] = {{omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t a = make(omp_default_mem_space, 2, t);
    if (!CHECK("pool_size+null_fb: allocator made", a != omp_null_allocator, "omp_null_allocator")) return;
    void *p1 = omp_alloc(1500, a), *p2 = omp_alloc(1500, a);
    CHECK("pool_size+null_fb: two blocks fit", p1 && p2, "%p %p", p1, p2);
    void *p3 = omp_alloc(1500, a);
    CHECK("pool_size+null_fb: NULL when the pool is exhausted", p3 == NULL, "got %p", p3);
    void *huge = omp_alloc(5000, a);
    CHECK("pool_size+null_fb: NULL for a block larger than the pool", huge == NULL, "got %p", huge);
    omp_free(p1, a);
    p3 = omp_alloc(1500, a);
    CHECK("pool_size+null_fb: succeeds again after a free", p3 != NULL, "NULL");
    /* realloc past the pool fails and leaves the block alone */
    memset(p3, 7, 1500);
    void *r = omp_realloc(p3, 3000, a, a);
    CHECK("pool_size+null_fb: realloc past the pool returns NULL", r == NULL, "got %p", r);
    CHECK("pool_size+null_fb: the old block is intact", ((unsigned char *)p3)[1499] == 7, "changed");
    omp_free(p2, a);
    omp_free(p3, a);
    /* the pool is shared by threads: concurrent allocation never exceeds it */
    int over = 0, got_total = 0;
#pragma omp parallel reduction(+ : over, got_total)
    {
        void *mine[8];
        int n = 0;
        for (int k = 0; k < 8; k++)
            if ((mine[n] = omp_alloc(900, a)) != NULL) n++;
        got_total += n;
#pragma omp barrier
        for (int k = 0; k < n; k++) omp_free(mine[k], a);
    }
    CHECK("pool_size: concurrent allocations stay within the pool", got_total >= 1 && got_total <= 4,
          "%d blocks of 900 bytes live at once in a 4096-byte pool", got_total);
    (void)over;
    omp_destroy_allocator(a);

    /* default_mem_fb: beyond the pool, the default allocator serves */
    omp_alloctrait_t d[2] = {{omp_atk_pool_size, 1024}, {omp_atk_alignment, 64}};
    a = make(omp_default_mem_space, 2, d);
    void *big = omp_alloc(10000, a);
    /* (libgomp 12 does not keep the failed allocator's alignment trait here; herd does) */
    CHECK("pool_size+default_mem_fb: falls back to the default allocator", big != NULL, "NULL");
    omp_free(big, a);
    omp_destroy_allocator(a);
}

static void allocator_fb(void) {
    omp_alloctrait_t ft[2] = {{omp_atk_pool_size, 8192}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t fb = make(omp_default_mem_space, 2, ft);
    omp_alloctrait_t t[3] = {
        {omp_atk_pool_size, 1024}, {omp_atk_fallback, omp_atv_allocator_fb}, {omp_atk_fb_data, fb}};
    omp_allocator_handle_t a = make(omp_default_mem_space, 3, t);
    if (!CHECK("allocator_fb: allocators made", a && fb, "%lu %lu", (unsigned long)a, (unsigned long)fb)) return;
    void *p = omp_alloc(4000, a);
    CHECK("allocator_fb: served by fb_data's allocator", p != NULL, "NULL");
    void *q = omp_alloc(6000, a); /* too big for both: fb's null_fb */
    CHECK("allocator_fb: the fallback's own fallback applies", q == NULL, "got %p", q);
    omp_free(p, a);
    q = omp_alloc(6000, a); /* the block of fb was given back to fb's pool */
    CHECK("allocator_fb: free returns the block to the fallback's pool", q != NULL, "NULL");
    omp_free(q, omp_null_allocator);
    omp_destroy_allocator(a);
    omp_destroy_allocator(fb);
}

static void abort_fb(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        omp_alloctrait_t t[2] = {{omp_atk_pool_size, 100}, {omp_atk_fallback, omp_atv_abort_fb}};
        omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 2, t);
        if (a == omp_null_allocator) _exit(3);
        int devnull = open("/dev/null", 1);
        if (devnull >= 0) dup2(devnull, 2); /* the runtime's message */
        void *p = omp_alloc(1000, a);
        _exit(p ? 4 : 5); /* must not return at all */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    int ended = (WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) < 3) || WIFSIGNALED(st);
    CHECK("abort_fb: exhausting the pool ends the program", ended, "child %s %d",
          WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

static void invalid_traits(void) {
    struct {
        const char *name;
        omp_memspace_handle_t ms;
        omp_alloctrait_key_t k;
        omp_uintptr_t v;
        int valid;
        int libgomp12_null; /* gcc 12's libgomp answers omp_null_allocator */
    } cases[] = {
        {"alignment 3", omp_default_mem_space, omp_atk_alignment, 3, 0},
        {"alignment 0", omp_default_mem_space, omp_atk_alignment, 0, 0},
        {"alignment default", omp_default_mem_space, omp_atk_alignment, omp_atv_default, 1},
        {"unknown key 0", omp_default_mem_space, (omp_alloctrait_key_t)0, 1, 0},
        {"unknown key 9", omp_default_mem_space, (omp_alloctrait_key_t)9, 1, 0},
        {"fallback true", omp_default_mem_space, omp_atk_fallback, omp_atv_true, 0},
        {"sync_hint all", omp_default_mem_space, omp_atk_sync_hint, omp_atv_all, 0},
        {"sync_hint private", omp_default_mem_space, omp_atk_sync_hint, omp_atv_private, 1},
        {"access contended", omp_default_mem_space, omp_atk_access, omp_atv_contended, 0},
        {"access pteam", omp_default_mem_space, omp_atk_access, omp_atv_pteam, 1},
        {"partition all", omp_default_mem_space, omp_atk_partition, omp_atv_all, 0},
        {"partition blocked", omp_default_mem_space, omp_atk_partition, omp_atv_blocked, 1},
        {"pinned 5", omp_default_mem_space, omp_atk_pinned, 5, 0},
        {"pinned false", omp_default_mem_space, omp_atk_pinned, omp_atv_false, 1},
        /* page-locked memory since gcc 14; gcc 12's libgomp has none */
        {"pinned true", omp_default_mem_space, omp_atk_pinned, omp_atv_true, 1, 1},
        /* libgomp without memkind: no high-bandwidth memory */
        {"high_bw_mem_space", omp_high_bw_mem_space, omp_atk_sync_hint, omp_atv_contended, 0},
        {"low_lat_mem_space", omp_low_lat_mem_space, omp_atk_sync_hint, omp_atv_contended, 1},
        {"large_cap_mem_space", omp_large_cap_mem_space, omp_atk_sync_hint, omp_atv_contended, 1},
        {"const_mem_space", omp_const_mem_space, omp_atk_sync_hint, omp_atv_contended, 1},
        {"memory space 5", (omp_memspace_handle_t)5, omp_atk_sync_hint, omp_atv_contended, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        omp_alloctrait_t t[1] = {{cases[i].k, cases[i].v}};
        omp_allocator_handle_t a = omp_init_allocator(cases[i].ms, 1, t);
        char name[96];
        snprintf(name, sizeof name, "traits: %s -> %s", cases[i].name,
                 cases[i].valid ? "an allocator" : "omp_null_allocator");
        check_known(name, (a != omp_null_allocator) == cases[i].valid,
                    cases[i].libgomp12_null && check_is_system_libgomp(), "got %lu", (unsigned long)a);
        if (a != omp_null_allocator) {
            void *p = omp_alloc(10, a);
            CHECK(name, p != NULL, "omp_alloc on it returned NULL");
            omp_free(p, a);
            omp_destroy_allocator(a);
        }
    }
    omp_allocator_handle_t none = omp_init_allocator(omp_default_mem_space, 0, NULL);
    CHECK("no traits -> an allocator", none != omp_null_allocator, "omp_null_allocator");
    omp_destroy_allocator(none);
}

static void predefined(void) {
    const omp_allocator_handle_t all[] = {omp_default_mem_alloc, omp_large_cap_mem_alloc, omp_const_mem_alloc,
                                          omp_high_bw_mem_alloc, omp_low_lat_mem_alloc,   omp_cgroup_mem_alloc,
                                          omp_pteam_mem_alloc,   omp_thread_mem_alloc};
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        char *p = omp_alloc(100, all[i]);
        bad += !p;
        if (p) p[99] = 1;
        omp_free(p, all[i]);
    }
    CHECK("predefined allocators serve memory", bad == 0, "%d of 8 returned NULL", bad);
    CHECK("omp_alloc(0) is NULL", omp_alloc(0, omp_default_mem_alloc) == NULL, "non-NULL");
    omp_free(NULL, omp_default_mem_alloc);
    char *r = omp_realloc(NULL, 10, omp_default_mem_alloc, omp_null_allocator);
    CHECK("omp_realloc(NULL) allocates", r != NULL, "NULL");
    CHECK("omp_realloc(p, 0) frees and returns NULL", omp_realloc(r, 0, omp_null_allocator, omp_null_allocator) == NULL,
          "non-NULL");
}

/* def-allocator-var: OMP_ALLOCATOR (EXPECT_DEFAULT_ALLOCATOR: the handle it
 * names) in the initial task and every implicit task, nested ones too; then
 * omp_set_default_allocator. */
static void default_allocator(void) {
    const char *e = getenv("EXPECT_DEFAULT_ALLOCATOR");
    omp_allocator_handle_t initial = e ? (omp_allocator_handle_t)strtoul(e, NULL, 10) : omp_default_mem_alloc;
    if (getenv("EXPECT_ENV_POOL")) /* traits: an allocator of its own (env_allocator_traits checks it) */
        initial = omp_get_default_allocator();
    CHECK_EQ("omp_get_default_allocator initially", omp_get_default_allocator(), initial);
    int seen = 0, teams = 0;
#pragma omp parallel num_threads(2) reduction(+ : seen, teams)
#pragma omp parallel num_threads(2) reduction(+ : seen, teams)
    {
        seen += omp_get_default_allocator() == initial;
        teams++;
    }
    CHECK("nested implicit tasks start with the initial def-allocator-var", seen == teams, "%d of %d", seen, teams);
    omp_allocator_handle_t a = one(omp_atk_alignment, 512);
    omp_set_default_allocator(a);
    CHECK_EQ("omp_set_default_allocator", omp_get_default_allocator(), a);
    void *p = omp_alloc(10, omp_null_allocator);
    CHECK("omp_null_allocator uses the default allocator", p && ALIGNED(p, 512), "%p", p);
    omp_free(p, omp_null_allocator);
    int inherited = 0, n = 0;
#pragma omp parallel reduction(+ : inherited, n)
    {
        inherited += omp_get_default_allocator() == a;
        n++;
    }
    CHECK("implicit tasks inherit def-allocator-var", inherited == n, "%d of %d", inherited, n);
    omp_set_default_allocator(initial);
    omp_destroy_allocator(a);
}

/* OMP_ALLOCATOR with traits (EXPECT_ENV_POOL: its pool_size; EXPECT_ENV_OVERSIZE:
 * "null" when an allocation larger than the pool must fail, "served" when its
 * fallback — e.g. allocator_fb with fb_data naming a predefined allocator, the
 * form of libomp's testsuite — must serve it). */
static void env_allocator_traits(void) {
    const char *pool = getenv("EXPECT_ENV_POOL"), *over = getenv("EXPECT_ENV_OVERSIZE");
    if (!pool || !over)
        return;
    if (!dlsym(RTLD_DEFAULT, "omp_get_mapped_ptr")) {
        /* gcc 13 (OMP_5.1.1) taught libgomp traits in OMP_ALLOCATOR; 12's ignores them. */
        printf("# skipped: this libgomp predates gcc 13 and reads no traits in OMP_ALLOCATOR\n");
        return;
    }
    size_t n = strtoul(pool, NULL, 10);
    omp_allocator_handle_t d = omp_get_default_allocator();
    CHECK("OMP_ALLOCATOR with traits makes an allocator of its own", d > omp_thread_mem_alloc, "handle %lu",
          (unsigned long)d);
    void *in = omp_alloc(n / 2, omp_null_allocator);
    CHECK("an allocation within the pool is served", in != NULL, "NULL");
    void *big = omp_alloc(2 * n, omp_null_allocator);
    if (strcmp(over, "null") == 0)
        CHECK("beyond the pool, null_fb gives NULL", big == NULL, "%p", big);
    else
        CHECK("beyond the pool, the fallback serves it", big != NULL, "NULL");
    omp_free(big, omp_null_allocator);
    omp_free(in, omp_null_allocator);
}

static void allocate_clause(void) {
    omp_allocator_handle_t a = one(omp_atk_alignment, 128);
    int x = 0, bad = 0, sum = 0;
#pragma omp parallel private(x) allocate(a : x) reduction(+ : bad, sum)
    {
        bad += !ALIGNED(&x, 128);
        x = omp_get_thread_num() + 1;
        sum += x;
    }
    int n = omp_get_max_threads();
    CHECK("allocate clause: private copies from the allocator", bad == 0, "%d misaligned", bad);
    CHECK_EQ("allocate clause: values", sum, n * (n + 1) / 2);
    omp_destroy_allocator(a);
}

/* The process's page-locked memory (VmLck), kB; -1 if unreadable. */
static long locked_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmLck: %ld", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

/* Pinned memory: a block of the pinned trait's allocator, and of gcc 14's
 * ompx_gnu_pinned_mem_alloc (200; gcc 12's omp.h does not name it), is
 * page-locked while it lives (VmLck) — where this process may lock pages
 * (root, or within RLIMIT_MEMLOCK: 100 kB is within Debian's default 8 MB).
 * gcc 12's libgomp has no pinned memory, and LLVM 14's libomp accepts the
 * trait without locking (check_known for both). */
static void pinned(void) {
    int old = check_is_system_libgomp() || check_is_libomp();
    long before = locked_kb();
    omp_alloctrait_t t[1] = {{omp_atk_pinned, omp_atv_true}};
    omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 1, t);
    void *p = a != omp_null_allocator ? omp_alloc(100000, a) : NULL;
    long during = locked_kb();
    check_known("pinned trait: 100000 bytes page-locked", p && during >= before + 97, old,
                "allocator %lu, block %p, VmLck %ld -> %ld kB", (unsigned long)a, p, before, during);
    if (p) {
        memset(p, 1, 100000);
        omp_free(p, a);
    }
    if (a != omp_null_allocator) omp_destroy_allocator(a);
    CHECK("pinned trait: freeing unlocks", locked_kb() == before, "VmLck %ld -> %ld kB", before, locked_kb());
    if (old) return; /* handle 200 is not an allocator in either */
    omp_allocator_handle_t gnu_pinned = (omp_allocator_handle_t)200;
    char *q = omp_calloc(1, 50000, gnu_pinned);
    during = locked_kb();
    CHECK("ompx_gnu_pinned_mem_alloc: zeroed and page-locked", q && q[0] == 0 && q[49999] == 0 && during >= before + 48,
          "block %p, VmLck %ld -> %ld kB", (void *)q, before, during);
    omp_free(q, gnu_pinned);
    CHECK("ompx_gnu_pinned_mem_alloc: freeing unlocks", locked_kb() == before, "VmLck %ld -> %ld kB", before,
          locked_kb());
}

int main(void) {
    check_begin("allocators");
    alignment();
    pool();
    allocator_fb();
    abort_fb();
    invalid_traits();
    pinned();
    predefined();
    default_allocator();
    env_allocator_traits();
    allocate_clause();
    return check_done();
}
