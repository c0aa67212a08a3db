/* locks.c — the OpenMP lock API.
 *
 * omp_lock_t: mutual exclusion (racy read-yield-write counter under the lock
 * gives an exact total), omp_test_lock returns 0 while another thread holds
 * the lock and succeeds once it is released.  omp_nest_lock_t: nesting depth,
 * omp_test_nest_lock returns the new nesting count, another thread cannot
 * acquire it while held (at any depth).  Many locks in an array, re-init after
 * destroy.  (omp_init_lock_with_hint is declared by gcc 12's omp.h but not
 * exported by its libgomp.so.1, so it is not used.)  gcc's omp.h makes omp_lock_t 4 bytes
 * and omp_nest_lock_t 16 bytes: a runtime must keep its lock state inside that
 * storage (canaries around the locks and tightly packed lock arrays check that
 * nothing outside is written).
 */
#include "check.h"
#include <sched.h>
#include <stdint.h>

#define MAXT 64

static void sizes(void) {
    CHECK("sizeof(omp_lock_t)==4", sizeof(omp_lock_t) == 4, "%zu", sizeof(omp_lock_t));
    CHECK("sizeof(omp_nest_lock_t)==16", sizeof(omp_nest_lock_t) == 16, "%zu", sizeof(omp_nest_lock_t));
}

/* Waits (yielding) until *flag == v. */
static void wait_for(int *flag, int v) {
    long spins = 0;
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != v)
        if (++spins % 16 == 0) sched_yield();
}

static volatile long counter;
static volatile int inside;

static void exclusion(void) {
    omp_lock_t l;
    omp_init_lock(&l);
    const int per = 3000;
    int nt = 0, overlap = 0;
    counter = 0;
#pragma omp parallel
    {
#pragma omp single
        nt = omp_get_num_threads();
        for (int k = 0; k < per; k++) {
            omp_set_lock(&l);
            if (++inside != 1) overlap = 1;
            long v = counter;
            if ((k & 127) == 0) sched_yield();
            counter = v + 1;
            inside--;
            omp_unset_lock(&l);
        }
    }
    omp_destroy_lock(&l);
    CHECK("lock.mutual_exclusion", counter == (long)nt * per && !overlap, "total %ld want %ld overlap %d", counter,
          (long)nt * per, overlap);

    /* 8 threads (oversubscribed): blocked threads must still make progress. */
    omp_init_lock(&l);
    counter = 0;
#pragma omp parallel num_threads(8)
    for (int k = 0; k < 500; k++) {
        omp_set_lock(&l);
        long v = counter;
        if ((k & 31) == 0) sched_yield();
        counter = v + 1;
        omp_unset_lock(&l);
    }
    omp_destroy_lock(&l);
    CHECK_EQ("lock.mutual_exclusion_8_threads", counter, 4000);
}

static void test_lock_semantics(void) {
    omp_lock_t l;
    omp_init_lock(&l);
    int r1 = omp_test_lock(&l);
    omp_unset_lock(&l);
    int r2 = omp_test_lock(&l);
    omp_unset_lock(&l);
    CHECK("test_lock.free_lock_succeeds", r1 != 0 && r2 != 0, "omp_test_lock on a free lock returned %d, %d", r1,
          r2);

    int flag = 0, held_result = -1, after_result = 0, tries = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            omp_set_lock(&l);
            __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
            wait_for(&flag, 2);
            omp_unset_lock(&l);
            __atomic_store_n(&flag, 3, __ATOMIC_RELEASE);
        } else {
            wait_for(&flag, 1);
            int any = 0;
            for (int k = 0; k < 100; k++) any |= omp_test_lock(&l);
            held_result = any;
            __atomic_store_n(&flag, 2, __ATOMIC_RELEASE);
            wait_for(&flag, 3);
            /* free now: must succeed (a few retries tolerated) */
            while (!(after_result = omp_test_lock(&l)) && ++tries < 1000) sched_yield();
            if (after_result) omp_unset_lock(&l);
        }
    }
    omp_destroy_lock(&l);
    CHECK("test_lock.fails_while_held_by_other", held_result == 0, "omp_test_lock returned nonzero while another "
                                                                   "thread held the lock");
    CHECK("test_lock.succeeds_after_release", after_result != 0, "omp_test_lock kept failing after the release");
}

static void nest_lock_semantics(void) {
    omp_nest_lock_t n;
    omp_init_nest_lock(&n);
    int depth_ok = 1;
    for (int d = 0; d < 5; d++) omp_set_nest_lock(&n);
    int t6 = omp_test_nest_lock(&n);
    int t7 = omp_test_nest_lock(&n);
    for (int d = 0; d < 7; d++) omp_unset_nest_lock(&n);
    int t1 = omp_test_nest_lock(&n);
    omp_unset_nest_lock(&n);
    if (t6 != 6 || t7 != 7 || t1 != 1) depth_ok = 0;
    CHECK("nest_lock.test_returns_nesting_count", depth_ok, "after 5 sets: test gave %d, %d (want 6, 7); on a free "
                                                            "lock %d (want 1)",
          t6, t7, t1);

    int flag = 0, held2 = -1, held1 = -1, after = 0, after2 = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            omp_set_nest_lock(&n);
            omp_set_nest_lock(&n);
            __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
            wait_for(&flag, 2);
            omp_unset_nest_lock(&n); /* still held, depth 1 */
            __atomic_store_n(&flag, 3, __ATOMIC_RELEASE);
            wait_for(&flag, 4);
            omp_unset_nest_lock(&n); /* released */
            __atomic_store_n(&flag, 5, __ATOMIC_RELEASE);
        } else {
            wait_for(&flag, 1);
            int any = 0;
            for (int k = 0; k < 50; k++) any |= omp_test_nest_lock(&n);
            held2 = any;
            __atomic_store_n(&flag, 2, __ATOMIC_RELEASE);
            wait_for(&flag, 3);
            any = 0;
            for (int k = 0; k < 50; k++) any |= omp_test_nest_lock(&n);
            held1 = any;
            __atomic_store_n(&flag, 4, __ATOMIC_RELEASE);
            wait_for(&flag, 5);
            int tries = 0;
            while (!(after = omp_test_nest_lock(&n)) && ++tries < 1000) sched_yield();
            if (after) {
                after2 = omp_test_nest_lock(&n);
                omp_unset_nest_lock(&n);
                omp_unset_nest_lock(&n);
            }
        }
    }
    CHECK("nest_lock.other_thread_excluded", held2 == 0 && held1 == 0,
          "another thread acquired a held nest lock (depth 2: %d, depth 1: %d)", held2, held1);
    CHECK("nest_lock.acquire_after_release", after == 1 && after2 == 2,
          "after release omp_test_nest_lock gave %d then %d (want 1, 2)", after, after2);

    /* recursive acquisition under contention */
    counter = 0;
    int overlap = 0, nt = 0;
#pragma omp parallel
    {
#pragma omp single
        nt = omp_get_num_threads();
        for (int k = 0; k < 1000; k++) {
            omp_set_nest_lock(&n);
            omp_set_nest_lock(&n);
            if (omp_test_nest_lock(&n) != 3) overlap = 2;
            if (++inside != 1) overlap = 1;
            long v = counter;
            if ((k & 63) == 0) sched_yield();
            counter = v + 1;
            inside--;
            omp_unset_nest_lock(&n);
            omp_unset_nest_lock(&n);
            omp_unset_nest_lock(&n);
        }
    }
    omp_destroy_nest_lock(&n);
    CHECK("nest_lock.mutual_exclusion", counter == 1000L * nt && !overlap, "total %ld want %ld, code %d", counter,
          1000L * nt, overlap);
}

static void many_locks(void) {
    enum { NL = 1000, PER = 4000 };
    static omp_lock_t locks[NL];
    static long bucket[NL];
    static long want[NL];
    int ok = 1;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < NL; i++) omp_init_lock(&locks[i]);
        memset(bucket, 0, sizeof bucket);
        memset(want, 0, sizeof want);
        int nt = 1;
#pragma omp parallel
        {
            int me = omp_get_thread_num();
#pragma omp single
            nt = omp_get_num_threads();
            for (int k = 0; k < PER; k++) {
                int b = (k * 7 + me * 13) % NL;
                omp_set_lock(&locks[b]);
                long v = bucket[b];
                if ((k & 511) == 0) sched_yield();
                bucket[b] = v + 1;
                omp_unset_lock(&locks[b]);
            }
        }
        for (int me = 0; me < nt; me++)
            for (int k = 0; k < PER; k++) want[(k * 7 + me * 13) % NL]++;
        for (int i = 0; i < NL; i++) ok &= bucket[i] == want[i];
        for (int i = 0; i < NL; i++) omp_destroy_lock(&locks[i]);
    }
    CHECK("locks.array_of_1000", ok, "a bucket total differs (lost update or lock interference)");

    /* Packed neighbours are independent: holding locks[i] leaves i-1 and i+1 free. */
    for (int i = 0; i < 16; i++) omp_init_lock(&locks[i]);
    int indep = 1;
    for (int i = 1; i < 15; i++) {
        omp_set_lock(&locks[i]);
        int a = omp_test_lock(&locks[i - 1]);
        if (a) omp_unset_lock(&locks[i - 1]);
        int b = omp_test_lock(&locks[i + 1]);
        if (b) omp_unset_lock(&locks[i + 1]);
        omp_unset_lock(&locks[i]);
        indep &= a && b;
    }
    for (int i = 0; i < 16; i++) omp_destroy_lock(&locks[i]);
    CHECK("locks.packed_neighbours_independent", indep, "setting one lock affected its neighbour in an array");

    static omp_nest_lock_t nl[64];
    for (int i = 0; i < 64; i++) omp_init_nest_lock(&nl[i]);
    int nindep = 1;
    for (int i = 1; i < 63; i++) {
        omp_set_nest_lock(&nl[i]);
        omp_set_nest_lock(&nl[i]);
        int a = omp_test_nest_lock(&nl[i - 1]);
        int b = omp_test_nest_lock(&nl[i + 1]);
        if (a) omp_unset_nest_lock(&nl[i - 1]);
        if (b) omp_unset_nest_lock(&nl[i + 1]);
        nindep &= a == 1 && b == 1;
        omp_unset_nest_lock(&nl[i]);
        omp_unset_nest_lock(&nl[i]);
    }
    for (int i = 0; i < 64; i++) omp_destroy_nest_lock(&nl[i]);
    CHECK("nest_locks.packed_neighbours_independent", nindep, "nest locks in an array interfere");
}

/* Canaries around the lock storage must never change. */
static void canaries(void) {
    struct {
        uint32_t before[4];
        omp_lock_t l;
        uint32_t after[4];
    } s;
    struct {
        uint64_t before[2];
        omp_nest_lock_t n;
        uint64_t after[2];
    } t;
    for (int k = 0; k < 4; k++) s.before[k] = s.after[k] = 0xA5A5A5A5u + k;
    for (int k = 0; k < 2; k++) t.before[k] = t.after[k] = 0x5A5A5A5A5A5A5A5Aull + k;
    for (int round = 0; round < 3; round++) {
        omp_init_lock(&s.l);
        omp_init_nest_lock(&t.n);
#pragma omp parallel num_threads(3)
        for (int k = 0; k < 200; k++) {
            omp_set_lock(&s.l);
            omp_unset_lock(&s.l);
            if (omp_test_lock(&s.l)) omp_unset_lock(&s.l);
            omp_set_nest_lock(&t.n);
            omp_set_nest_lock(&t.n);
            omp_unset_nest_lock(&t.n);
            omp_unset_nest_lock(&t.n);
            if (omp_test_nest_lock(&t.n)) omp_unset_nest_lock(&t.n);
        }
        omp_destroy_lock(&s.l);
        omp_destroy_nest_lock(&t.n);
    }
    int ok = 1;
    for (int k = 0; k < 4; k++) ok &= s.before[k] == 0xA5A5A5A5u + k && s.after[k] == 0xA5A5A5A5u + k;
    CHECK("lock.stays_inside_its_4_bytes", ok, "memory next to an omp_lock_t was modified");
    ok = 1;
    for (int k = 0; k < 2; k++)
        ok &= t.before[k] == 0x5A5A5A5A5A5A5A5Aull + k && t.after[k] == 0x5A5A5A5A5A5A5A5Aull + k;
    CHECK("nest_lock.stays_inside_its_16_bytes", ok, "memory next to an omp_nest_lock_t was modified");

    /* Locks in heap memory that is freed and reused. */
    int heap_ok = 1;
    for (int round = 0; round < 20; round++) {
        omp_lock_t *hl = malloc(sizeof *hl * 3);
        omp_nest_lock_t *hn = malloc(sizeof *hn * 3);
        for (int i = 0; i < 3; i++) {
            omp_init_lock(&hl[i]);
            omp_init_nest_lock(&hn[i]);
        }
        omp_set_lock(&hl[1]);
        int a = omp_test_lock(&hl[0]), c = omp_test_lock(&hl[2]);
        heap_ok &= a && c;
        if (a) omp_unset_lock(&hl[0]);
        omp_unset_lock(&hl[1]);
        if (c) omp_unset_lock(&hl[2]);
        int n1 = omp_test_nest_lock(&hn[1]), n2 = n1 ? omp_test_nest_lock(&hn[1]) : 0;
        heap_ok &= n1 == 1 && n2 == 2;
        if (n2) omp_unset_nest_lock(&hn[1]);
        if (n1) omp_unset_nest_lock(&hn[1]);
        for (int i = 0; i < 3; i++) {
            omp_destroy_lock(&hl[i]);
            omp_destroy_nest_lock(&hn[i]);
        }
        memset(hl, 0xFF, sizeof *hl * 3);
        free(hl);
        free(hn);
    }
    CHECK("lock.heap_reuse", heap_ok, "locks in freed-and-reused heap memory misbehaved");
}

int main(void) {
    check_begin("locks");
    sizes();
    exclusion();
    test_lock_semantics();
    nest_lock_semantics();
    many_locks();
    canaries();
    return check_done();
}
