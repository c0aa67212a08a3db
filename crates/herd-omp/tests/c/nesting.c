/* Deep nesting: three and four active levels with mixed team sizes, and the
 * thread count of a program that opens nested teams of every size.
 *
 * At every level of a nest (team sizes given per level, 1 = an inactive
 * region): omp_get_level / omp_get_active_level, omp_get_ancestor_thread_num
 * and omp_get_team_size for every enclosing level, a reduction(+) and an
 * atomic counted at every level, a barrier that every member must have
 * reached (an arrival counter read after it), explicit tasks created at every
 * level and awaited, and a threadprivate variable that each innermost thread
 * writes, passes a barrier with, and reads back.  Each combination of
 * ancestor numbers must occur exactly once.  Beyond max-active-levels the
 * regions are serialized (team of one, level still counted).
 *
 * The thread count: three times over, an outer team of 2 whose members each
 * open inner teams of 1, 2, ..., K threads.  The process may not gain more
 * threads than the largest concurrent demand (two inner teams of K, whose
 * masters already exist) plus a small slack for a runtime's helper threads,
 * counted after every pair of regions; a runtime that keeps a new set of
 * threads for every inner team size fails.
 */
#include "check.h"
#include <dirent.h>
#include <unistd.h>

#define MAXL 4

static int tp_id;
#pragma omp threadprivate(tp_id)

struct nest {
    int levels;
    int size[MAXL];
    int seen[256]; /* per combination of ancestor numbers */
    int bad;       /* a wrong level, ancestor, team size or barrier count */
    int tp_bad;
    int atomic_count;
    int task_count;
    char what[200];
};

static void note_bad(struct nest *s, const char *what, int l, int got, int want) {
    if (__atomic_fetch_add(&s->bad, 1, __ATOMIC_RELAXED) == 0)
        snprintf(s->what, sizeof s->what, "%s at level %d: got %d, want %d", what, l, got, want);
}

/* The expected team size at (1-based) level l: the size asked, unless the
 * region is beyond max-active-levels (serialized) or asked for one thread. */
static int expected_size(struct nest *s, int l, int mal) {
    int active_before = 0;
    for (int k = 1; k < l; k++)
        if (s->size[k - 1] > 1 && active_before < mal) active_before++;
    return active_before >= mal ? 1 : s->size[l - 1];
}

static int expected_active(struct nest *s, int l, int mal) {
    int a = 0;
    for (int k = 1; k <= l; k++)
        if (expected_size(s, k, mal) > 1) a++;
    return a;
}

static long level(struct nest *s, int l, int mal) {
    long red = 0;
    if (l > s->levels) {
        /* Innermost: who am I, at every level? */
        int idx = 0, mult = 1;
        for (int k = 1; k <= s->levels; k++) {
            int want = expected_size(s, k, mal);
            int ts = omp_get_team_size(k), a = omp_get_ancestor_thread_num(k);
            if (ts != want) note_bad(s, "omp_get_team_size", k, ts, want);
            if (a < 0 || a >= want) note_bad(s, "omp_get_ancestor_thread_num", k, a, 0);
            else idx += a * mult;
            mult *= want;
        }
        if (omp_get_ancestor_thread_num(s->levels) != omp_get_thread_num())
            note_bad(s, "ancestor(level) == thread_num", s->levels, omp_get_ancestor_thread_num(s->levels),
                     omp_get_thread_num());
        if (omp_get_ancestor_thread_num(0) != 0) note_bad(s, "ancestor(0)", 0, omp_get_ancestor_thread_num(0), 0);
        if (omp_get_ancestor_thread_num(s->levels + 1) != -1)
            note_bad(s, "ancestor(level+1)", s->levels + 1, omp_get_ancestor_thread_num(s->levels + 1), -1);
        if (idx < 256) __atomic_fetch_add(&s->seen[idx], 1, __ATOMIC_RELAXED);
        return 1;
    }
    int arrived = 0;
#pragma omp parallel num_threads(s->size[l - 1]) reduction(+ : red)
    {
        int want = expected_size(s, l, mal);
        if (omp_get_level() != l) note_bad(s, "omp_get_level", l, omp_get_level(), l);
        if (omp_get_active_level() != expected_active(s, l, mal))
            note_bad(s, "omp_get_active_level", l, omp_get_active_level(), expected_active(s, l, mal));
        if (omp_get_num_threads() != want) note_bad(s, "omp_get_num_threads", l, omp_get_num_threads(), want);
        if (omp_get_team_size(l) != want) note_bad(s, "omp_get_team_size(level)", l, omp_get_team_size(l), want);
#pragma omp atomic
        arrived++;
#pragma omp barrier
        int a;
#pragma omp atomic read
        a = arrived;
        if (a != want) note_bad(s, "members past the barrier", l, a, want);
        /* Tasks at this level, awaited here. */
        for (int t = 0; t < 3; t++) {
#pragma omp task shared(s)
            __atomic_fetch_add(&s->task_count, 1, __ATOMIC_RELAXED);
        }
#pragma omp taskwait
#pragma omp atomic
        s->atomic_count++;
        red += level(s, l + 1, mal);
        if (l == s->levels) {
            /* threadprivate: each innermost thread writes its own id, all
             * pass a barrier, each reads its own back. */
            int id = omp_get_thread_num() + 1000 * omp_get_ancestor_thread_num(l > 1 ? l - 1 : 0);
            tp_id = id;
#pragma omp barrier
            if (tp_id != id) __atomic_fetch_add(&s->tp_bad, 1, __ATOMIC_RELAXED);
        }
    }
    return red;
}

static void nest(const char *name, int mal, int levels, const int *size) {
    static struct nest s;
    memset(&s, 0, sizeof s);
    s.levels = levels;
    memcpy(s.size, size, levels * sizeof *size);
    int save = omp_get_max_active_levels();
    omp_set_max_active_levels(mal);
    long red = level(&s, 1, mal);
    omp_set_max_active_levels(save);
    long leaves = 1, members = 0;
    for (int l = 1; l <= levels; l++) {
        leaves *= expected_size(&s, l, mal);
        members += leaves; /* implicit tasks at level l */
    }
    char n[160];
    snprintf(n, sizeof n, "%s.reduction", name);
    CHECK_EQ(n, red, leaves);
    snprintf(n, sizeof n, "%s.atomic", name);
    CHECK_EQ(n, s.atomic_count, members);
    snprintf(n, sizeof n, "%s.tasks", name);
    CHECK_EQ(n, s.task_count, 3 * members);
    snprintf(n, sizeof n, "%s.levels_ancestors_barriers", name);
    CHECK(n, s.bad == 0, "%d problems, first: %s", s.bad, s.what);
    snprintf(n, sizeof n, "%s.threadprivate", name);
    CHECK(n, s.tp_bad == 0, "%d threads read another value back", s.tp_bad);
    int once = 1;
    for (long i = 0; i < leaves && i < 256; i++) once &= s.seen[i] == 1;
    snprintf(n, sizeof n, "%s.each_thread_once", name);
    CHECK(n, once, "some combination of ancestor numbers ran %s", "not exactly once");
}

static int os_threads(void) {
    int c = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') c++;
    closedir(d);
    return c;
}

static void thread_bound(int K) {
    int save = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
    long sum = 0;
    int before = os_threads(), most = before;
    /* The largest concurrent demand: two inner teams of K, whose masters are
     * the two outer members: 2 (K - 1) new threads at most, plus a little
     * slack for a runtime's helper threads. */
    int bound = before + 2 * (K - 1) + 4;
    for (int r = 0; r < 3; r++) {
        for (int k = 1; k <= K; k++) {
#pragma omp parallel num_threads(2) reduction(+ : sum)
            {
#pragma omp parallel num_threads(k) reduction(+ : sum)
                sum += 1;
            }
            int now = os_threads();
            /* A runtime that ends nested threads with their team (libgomp
             * does) may still list threads that are exiting: the bound is on
             * threads that stay, so an excess is counted again after they
             * have had time to go. Pooled threads that leak stay. */
            for (int w = 0; w < 50 && now > bound; w++) {
                usleep(2000);
                now = os_threads();
            }
            if (now > most) most = now;
        }
    }
    omp_set_max_active_levels(save);
    CHECK_EQ("threads.nested_sizes_sum", sum, 3L * K * (K + 1));
    char n[96];
    snprintf(n, sizeof n, "threads.bounded_K%d", K);
    CHECK(n, before > 0 && most <= bound,
          "up to %d OS threads during 3 rounds of inner teams 1..%d, %d before (bound %d)", most, K, before, bound);
}

/* OMP_THREAD_LIMIT: the threads of a 2x2x2 nest never outnumber the limit
 * (inner teams get fewer threads).  Each team's member 0 adds the team's
 * extra threads to `extra` once the team runs and takes them off before it
 * ends, so `extra` never exceeds the threads really working; the innermost
 * members record its largest value. */
static int extra, most;

static void limit_level(int l) {
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) __atomic_add_fetch(&extra, omp_get_num_threads() - 1, __ATOMIC_RELAXED);
#pragma omp barrier
        if (l < 3) {
            limit_level(l + 1);
        } else {
            int now = __atomic_load_n(&extra, __ATOMIC_RELAXED);
            int m = __atomic_load_n(&most, __ATOMIC_RELAXED);
            while (now > m && !__atomic_compare_exchange_n(&most, &m, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            }
        }
#pragma omp barrier
        if (omp_get_thread_num() == 0) __atomic_sub_fetch(&extra, omp_get_num_threads() - 1, __ATOMIC_RELAXED);
    }
}

static void thread_limit(int limit) {
    int save = omp_get_max_active_levels();
    omp_set_max_active_levels(3);
    limit_level(1);
    omp_set_max_active_levels(save);
    CHECK("thread_limit.nest_within_limit", most + 1 <= limit && extra == 0,
          "up to %d threads at once in a 2x2x2 nest (OMP_THREAD_LIMIT=%d)", most + 1, limit);
}

int main(void) {
    check_begin("nesting");
    if (omp_get_thread_limit() < 1024) {
        thread_limit(omp_get_thread_limit());
        return check_done();
    }
    nest("l3_2x2x2", 3, 3, (const int[]){2, 2, 2});
    nest("l3_3x1x2", 3, 3, (const int[]){3, 1, 2});
    nest("l3_2x3x2_mal2", 2, 3, (const int[]){2, 3, 2}); /* third level serialized */
    nest("l4_2x2x2x2", 4, 4, (const int[]){2, 2, 2, 2});
    nest("l4_3x2x1x2", 4, 4, (const int[]){3, 2, 1, 2});
    nest("l4_2x3x2x2_mal3", 3, 4, (const int[]){2, 3, 2, 2});
    /* The same nest again: pools and teams reused must give the same answers. */
    for (int i = 0; i < 20; i++) nest("l3_2x2x2_again", 3, 3, (const int[]){2, 2, 2});
    thread_bound(16);
    return check_done();
}
