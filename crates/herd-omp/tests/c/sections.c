/* sections.c — `sections` with 1, 3 and 9 sections (each exactly once, many
 * times in a row), `parallel sections` (GOMP_parallel_sections), lastprivate,
 * firstprivate, reduction, and nowait sections followed by a barrier.
 */
#include "check.h"

#define REPS 60
static int hits[REPS][9];
static int total;

static inline void hit(int r, int s) {
    __atomic_fetch_add(&hits[r][s], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&total, 1, __ATOMIC_RELAXED);
}

static void reset(void) {
    memset(hits, 0, sizeof hits);
    total = 0;
}

static void verify(const char *name, int nsec) {
    int ok = total == REPS * nsec;
    int br = -1, bs = -1;
    for (int r = 0; r < REPS; r++)
        for (int s = 0; s < 9; s++)
            if (hits[r][s] != (s < nsec)) {
                ok = 0;
                br = r;
                bs = s;
            }
    CHECK(name, ok, "total %d (want %d); rep %d section %d ran %d times", total, REPS * nsec, br, bs,
          br >= 0 ? hits[br][bs] : 0);
}

static void sections_basic(void) {
    reset();
#pragma omp parallel
    for (int r = 0; r < REPS; r++) {
#pragma omp sections
        {
#pragma omp section
            hit(r, 0);
        }
    }
    verify("sections.1", 1);

    reset();
#pragma omp parallel
    for (int r = 0; r < REPS; r++) {
#pragma omp sections
        {
#pragma omp section
            hit(r, 0);
#pragma omp section
            hit(r, 1);
#pragma omp section
            hit(r, 2);
        }
    }
    verify("sections.3", 3);

    reset();
#pragma omp parallel
    for (int r = 0; r < REPS; r++) {
#pragma omp sections
        {
#pragma omp section
            hit(r, 0);
#pragma omp section
            hit(r, 1);
#pragma omp section
            hit(r, 2);
#pragma omp section
            hit(r, 3);
#pragma omp section
            hit(r, 4);
#pragma omp section
            hit(r, 5);
#pragma omp section
            hit(r, 6);
#pragma omp section
            hit(r, 7);
#pragma omp section
            {
                check_spin(100);
                hit(r, 8);
            }
        }
    }
    verify("sections.9", 9);

    /* Same, more threads than cores. */
    reset();
#pragma omp parallel num_threads(6)
    for (int r = 0; r < REPS; r++) {
#pragma omp sections
        {
#pragma omp section
            hit(r, 0);
#pragma omp section
            hit(r, 1);
#pragma omp section
            hit(r, 2);
#pragma omp section
            hit(r, 3);
#pragma omp section
            hit(r, 4);
#pragma omp section
            hit(r, 5);
#pragma omp section
            hit(r, 6);
#pragma omp section
            hit(r, 7);
#pragma omp section
            hit(r, 8);
        }
    }
    verify("sections.9.six_threads", 9);
}

static void sections_nowait(void) {
    reset();
    int bad = 0;
#pragma omp parallel
    {
        for (int r = 0; r < REPS; r++) {
#pragma omp sections nowait
            {
#pragma omp section
                hit(r, 0);
#pragma omp section
                hit(r, 1);
#pragma omp section
                hit(r, 2);
#pragma omp section
                hit(r, 3);
            }
        }
#pragma omp barrier
        for (int r = 0; r < REPS; r++)
            for (int s = 0; s < 4; s++)
                if (__atomic_load_n(&hits[r][s], __ATOMIC_RELAXED) != 1) __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
    }
    verify("sections.nowait", 4);
    CHECK("sections.nowait_then_barrier", !bad, "after the barrier a thread saw a section not yet run");
}

static void parallel_sections(void) {
    for (int k = 1; k <= 5; k += 2) {
        reset();
        for (int r = 0; r < REPS; r++) {
#pragma omp parallel sections num_threads(k)
            {
#pragma omp section
                hit(r, 0);
#pragma omp section
                hit(r, 1);
#pragma omp section
                hit(r, 2);
#pragma omp section
                hit(r, 3);
#pragma omp section
                hit(r, 4);
            }
        }
        char name[64];
        snprintf(name, sizeof name, "parallel_sections.5.num_threads(%d)", k);
        verify(name, 5);
    }
    reset();
    for (int r = 0; r < REPS; r++) {
#pragma omp parallel sections
        {
#pragma omp section
            hit(r, 0);
#pragma omp section
            hit(r, 1);
        }
    }
    verify("parallel_sections.2.default_team", 2);
}

static void clauses(void) {
    int x = -1, bad = 0;
    int fp = 10, red = 0;
#pragma omp parallel
    {
#pragma omp sections lastprivate(x) firstprivate(fp) reduction(+ : red)
        {
#pragma omp section
            {
                x = 1;
                /* A thread may run several sections, in any order: its copy
                 * starts at 10 and only these sections change it. */
                if (fp != 10 && fp != 1 && fp != 3) __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
                fp = 1;
                red += 1;
            }
#pragma omp section
            {
                x = 2;
                check_spin(1000);
                if (fp != 10 && fp != 1 && fp != 3) __atomic_store_n(&bad, 2, __ATOMIC_RELAXED);
                red += 10;
            }
#pragma omp section
            {
                x = 3; /* lexically last: its value survives */
                if (fp != 10 && fp != 1 && fp != 3) __atomic_store_n(&bad, 3, __ATOMIC_RELAXED);
                fp = 3;
                red += 100;
            }
        }
    }
    CHECK_EQ("sections.lastprivate", x, 3);
    CHECK("sections.firstprivate", !bad && fp == 10, "bad=%d fp=%d", bad, fp);
    CHECK_EQ("sections.reduction", red, 111);

    x = -1;
#pragma omp parallel sections lastprivate(x) num_threads(3)
    {
#pragma omp section
        {
            check_spin(5000);
            x = 10;
        }
#pragma omp section
        x = 20;
#pragma omp section
        {
            x = 30;
        }
    }
    CHECK_EQ("parallel_sections.lastprivate", x, 30);
}

int main(void) {
    check_begin("sections");
    sections_basic();
    sections_nowait();
    parallel_sections();
    clauses();
    return check_done();
}
