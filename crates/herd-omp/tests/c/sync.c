/* sync.c — barrier, critical (unnamed and named), atomic (including the
 * long double and __int128 forms for which gcc calls GOMP_atomic_start /
 * GOMP_atomic_end: no lock-free 16-byte compare-and-swap without -mcx16;
 * gcc 12 rejects `omp atomic` on _Complex types, so they cannot be tested), single (+nowait, +copyprivate), master, masked, flush.
 * Mutual exclusion is checked with deliberately racy read-yield-write
 * counters, which lose updates quickly if exclusion is broken.
 */
#include "check.h"
#include <sched.h>

#define MAXT 64

/* Every thread writes its slot, barrier, every thread reads all slots. */
static void barrier_phases(void) {
    static int slot[MAXT];
    int bad = 0, nt = 0;
    const int phases = 300;
#pragma omp parallel
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
        nt = n;
        for (int p = 0; p < phases; p++) {
            slot[me] = p * 1000 + me;
#pragma omp barrier
            for (int j = 0; j < n; j++)
                if (slot[j] != p * 1000 + j) __atomic_store_n(&bad, p + 1, __ATOMIC_RELAXED);
#pragma omp barrier
        }
    }
    CHECK("barrier.phases", bad == 0, "with %d threads, phase %d: a thread saw a stale slot after the barrier", nt,
          bad - 1);

    /* Barrier in a team of 8 (more threads than cores) with uneven arrival. */
    int counter = 0;
    bad = 0;
#pragma omp parallel num_threads(8)
    {
        for (int p = 0; p < 50; p++) {
            if ((omp_get_thread_num() + p) % 3 == 0) check_spin(2000);
#pragma omp atomic
            counter++;
#pragma omp barrier
            int c;
#pragma omp atomic read
            c = counter;
            if (c != 8 * (p + 1)) __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
#pragma omp barrier
        }
    }
    CHECK("barrier.uneven_arrival_8", bad == 0 && counter == 400, "bad=%d counter=%d (want 400)", bad, counter);
}

static volatile long crit_plain, crit_a, crit_b, crit_inside;

static void criticals(void) {
    const int per = 3000;
    int nt = 0, overlap = 0;
    crit_plain = crit_a = crit_b = 0;
#pragma omp parallel
    {
#pragma omp single
        nt = omp_get_num_threads();
        for (int k = 0; k < per; k++) {
#pragma omp critical
            {
                long v = crit_plain;
                if (++crit_inside != 1) overlap = 1;
                if ((k & 127) == 0) sched_yield();
                crit_inside--;
                crit_plain = v + 1;
            }
#pragma omp critical(alpha)
            {
                long v = crit_a;
                if ((k & 255) == 1) sched_yield();
                crit_a = v + 1;
            }
#pragma omp critical(beta)
            {
                long v = crit_b;
                if ((k & 255) == 2) sched_yield();
                crit_b = v + 2;
            }
        }
    }
    CHECK("critical.unnamed", crit_plain == (long)nt * per && !overlap, "total %ld want %ld, overlap=%d", crit_plain,
          (long)nt * per, overlap);
    CHECK("critical.named_alpha", crit_a == (long)nt * per, "total %ld want %ld", crit_a, (long)nt * per);
    CHECK("critical.named_beta", crit_b == 2L * nt * per, "total %ld want %ld", crit_b, 2L * nt * per);

    /* The same name in two different functions/places is the same lock. */
    long shared = 0;
#pragma omp parallel num_threads(4)
    {
        for (int k = 0; k < 1000; k++) {
            if (omp_get_thread_num() % 2) {
#pragma omp critical(gamma)
                {
                    long v = shared;
                    if ((k & 63) == 0) sched_yield();
                    shared = v + 1;
                }
            } else {
#pragma omp critical(gamma)
                {
                    long v = shared;
                    if ((k & 63) == 5) sched_yield();
                    shared = v + 1;
                }
            }
        }
    }
    CHECK_EQ("critical.same_name_two_sites", shared, 4000);
}

static void atomics(void) {
    const int per = 2000;
    int nt = 0;
    int ai = 0;
    long al = 0;
    double ad = 0;
    long double ald = 0;
    __int128 a128 = 0;
    static char seen_i[MAXT * 2000], seen_ld[MAXT * 2000];
    int dup = 0, dup_ld = 0;
#pragma omp parallel
    {
#pragma omp single
        nt = omp_get_num_threads();
        for (int k = 0; k < per; k++) {
#pragma omp atomic update
            al += 3;
#pragma omp atomic
            ad += 0.5;
#pragma omp atomic
            ald += 1.0L;
#pragma omp atomic
            a128 += ((__int128)1 << 64) + 1;
            int old;
#pragma omp atomic capture
            old = ai++;
            if (old >= 0 && old < MAXT * 2000) {
                if (__atomic_fetch_add(&seen_i[old], 1, __ATOMIC_RELAXED)) __atomic_store_n(&dup, 1, __ATOMIC_RELAXED);
            } else {
                __atomic_store_n(&dup, 2, __ATOMIC_RELAXED);
            }
            long double oldld;
#pragma omp atomic capture
            {
                oldld = ald;
                ald += 0.0L; /* capture form on long double (GOMP_atomic_start/end) */
            }
            (void)oldld;
        }
    }
    CHECK_EQ("atomic.int_capture_total", ai, nt * per);
    CHECK("atomic.int_capture_unique", !dup, "a captured old value repeated (code %d)", dup);
    CHECK_EQ("atomic.long_update", al, 3L * nt * per);
    CHECK("atomic.double_update", ad == 0.5 * nt * per, "got %.17g want %g", ad, 0.5 * nt * per);
    CHECK("atomic.long_double_update", ald == (long double)nt * per, "got %Lg want %d", ald, nt * per);
    CHECK("atomic.int128_update", a128 == (((__int128)nt * per) << 64) + nt * per,
          "got hi %lld lo %llu, want %d each", (long long)(a128 >> 64), (unsigned long long)a128, nt * per);

    /* long double capture: every captured value distinct. */
    long double cap = 0;
#pragma omp parallel
    {
        for (int k = 0; k < per; k++) {
            long double v;
#pragma omp atomic capture
            v = cap += 1.0L;
            long iv = (long)v - 1;
            if (iv >= 0 && iv < MAXT * 2000) {
                if (__atomic_fetch_add(&seen_ld[iv], 1, __ATOMIC_RELAXED)) __atomic_store_n(&dup_ld, 1, __ATOMIC_RELAXED);
            } else {
                __atomic_store_n(&dup_ld, 2, __ATOMIC_RELAXED);
            }
        }
    }
    CHECK("atomic.long_double_capture", !dup_ld && cap == (long double)nt * per, "dup=%d total %Lg", dup_ld, cap);

    /* atomic read/write: readers never see a torn value. */
    long double wld = 1.0L;
    __int128 w128 = 1;
    long wl = 0x1111111111111111L;
    double wd = 1.0;
    int torn = 0;
#pragma omp parallel num_threads(4)
    {
        int me = omp_get_thread_num();
        for (int k = 0; k < 3000; k++) {
            if (me == 0) {
                long double x = (k & 1) ? 1.0L : -3.25L;
                __int128 y = (k & 1) ? (__int128)1 : -((__int128)1 << 70) + 12345;
                long z = (k & 1) ? 0x1111111111111111L : 0x2222222222222222L;
                double w = (k & 1) ? 1.0 : -2.0;
#pragma omp atomic write
                wld = x;
#pragma omp atomic write
                w128 = y;
#pragma omp atomic write
                wl = z;
#pragma omp atomic write
                wd = w;
                (void)x, (void)y, (void)z, (void)w; /* gcc 12 -Wunused-but-set false positive */
            } else {
                long double x;
                __int128 y;
                long z;
                double w;
#pragma omp atomic read
                x = wld;
#pragma omp atomic read
                y = w128;
#pragma omp atomic read
                z = wl;
#pragma omp atomic read
                w = wd;
                int t = 0;
                if (x != 1.0L && x != -3.25L) t |= 1;
                if (y != (__int128)1 && y != -((__int128)1 << 70) + 12345) t |= 2;
                if (z != 0x1111111111111111L && z != 0x2222222222222222L) t |= 4;
                if (w != 1.0 && w != -2.0) t |= 8;
                if (t) __atomic_fetch_or(&torn, t, __ATOMIC_RELAXED);
            }
        }
    }
    CHECK("atomic.read_write_not_torn", torn == 0, "torn mask %d (1 long double, 2 __int128, 4 long, 8 double)", torn);
}

static void singles(void) {
    enum { NS = 400 };
    static int once[NS];
    int bad = 0, after_ok = 1;
    int v = 0;
#pragma omp parallel
    {
        /* single with its implicit barrier: everybody sees the write. */
        for (int r = 0; r < 20; r++) {
#pragma omp single
            v = r + 1;
            if (v != r + 1) __atomic_store_n(&after_ok, 0, __ATOMIC_RELAXED);
#pragma omp barrier
        }
        /* Many single nowait constructs in a row. */
        for (int s = 0; s < NS; s++) {
#pragma omp single nowait
            __atomic_fetch_add(&once[s], 1, __ATOMIC_RELAXED);
        }
    }
    for (int s = 0; s < NS; s++)
        if (once[s] != 1) bad = s + 1;
    CHECK("single.barrier_visibility", after_ok, "a thread did not see the single's write after it");
    CHECK("single.nowait_exactly_once", bad == 0, "single nowait #%d ran %d times", bad - 1, bad ? once[bad - 1] : 0);

    /* copyprivate: int, double, 64-byte struct. */
    struct big {
        long w[8];
    };
    int cbad = 0, who_bad = 0;
#pragma omp parallel
    {
        for (int r = 0; r < 30; r++) {
            int i;
            double d;
            struct big b;
            int src;
#pragma omp single copyprivate(i, d, b, src)
            {
                src = omp_get_thread_num();
                i = r * 1000 + src;
                d = r * 0.5 + src;
                for (int k = 0; k < 8; k++) b.w[k] = (long)r << 32 | (k * 16 + src);
            }
            if (src < 0 || src >= omp_get_num_threads()) __atomic_store_n(&who_bad, 1, __ATOMIC_RELAXED);
            if (i != r * 1000 + src || d != r * 0.5 + src) __atomic_store_n(&cbad, 1, __ATOMIC_RELAXED);
            for (int k = 0; k < 8; k++)
                if (b.w[k] != ((long)r << 32 | (k * 16 + src))) __atomic_store_n(&cbad, 2, __ATOMIC_RELAXED);
        }
    }
    CHECK("copyprivate.int_double_struct64", cbad == 0 && !who_bad,
          "a thread did not receive the single thread's values (code %d, who_bad %d)", cbad, who_bad);
    CHECK("copyprivate.sizeof_struct", sizeof(struct big) == 64, "sizeof %zu", sizeof(struct big));
}

static void master_masked(void) {
    int mcount = 0, mbad = 0, f1count = 0, f1bad = 0, nt = 0;
#pragma omp parallel
    {
#pragma omp single
        nt = omp_get_num_threads();
        for (int r = 0; r < 10; r++) {
#pragma omp master
            {
                __atomic_fetch_add(&mcount, 1, __ATOMIC_RELAXED);
                if (omp_get_thread_num() != 0) __atomic_store_n(&mbad, 1, __ATOMIC_RELAXED);
            }
#pragma omp masked filter(1)
            {
                __atomic_fetch_add(&f1count, 1, __ATOMIC_RELAXED);
                if (omp_get_thread_num() != 1) __atomic_store_n(&f1bad, 1, __ATOMIC_RELAXED);
            }
#pragma omp masked
            {
                __atomic_fetch_add(&mcount, 1, __ATOMIC_RELAXED);
                if (omp_get_thread_num() != 0) __atomic_store_n(&mbad, 1, __ATOMIC_RELAXED);
            }
        }
    }
    CHECK("master_masked.thread0", mcount == 20 && !mbad, "count %d (want 20) bad %d", mcount, mbad);
    CHECK("masked.filter1", f1count == (nt > 1 ? 10 : 0) && !f1bad, "count %d with %d threads, bad %d", f1count, nt,
          f1bad);
}

/* Message passing through flush + an atomic flag (OpenMP 5.0 memory model). */
static void flush_handoff(void) {
    int data[16];
    int flag = 0, bad = 0;
#pragma omp parallel num_threads(2) shared(data, flag, bad)
    {
        for (int r = 1; r <= 200; r++) {
            if (omp_get_thread_num() == 0) {
                for (int k = 0; k < 16; k++) data[k] = r * 100 + k;
#pragma omp flush
#pragma omp atomic write
                flag = r;
            } else {
                int f;
                long spins = 0;
                do {
#pragma omp atomic read
                    f = flag;
                    if (++spins % 64 == 0) sched_yield();
                } while (f != r);
#pragma omp flush
                for (int k = 0; k < 16; k++)
                    if (data[k] != r * 100 + k) bad = 1;
            }
#pragma omp barrier
        }
    }
    CHECK("flush.handoff", bad == 0, "consumer saw stale data after flush");
}

int main(void) {
    check_begin("sync");
    barrier_phases();
    criticals();
    atomics();
    singles();
    master_masked();
    flush_handoff();
    return check_done();
}
