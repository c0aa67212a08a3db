/* Worker stacks: without OMP_STACKSIZE every team member gets the default
 * thread stack (the stack rlimit, as under libgomp), so a region that puts a
 * few MiB on each thread's stack runs; OMP_STACKSIZE raises it further, and
 * so does libgomp's GOMP_STACKSIZE when OMP_STACKSIZE is unset: with
 * EXPECT_STACK_MB=n every worker (not the initial thread, whose stack is the
 * process's) puts n - 2 MiB on its stack.
 * Each thread fills and sums its own 4 MiB stack array, in a region and in
 * tasks. (Assumes the usual 8 MiB stack rlimit, which the runner leaves.) */
#include "check.h"
#include <string.h>

#define BIG (4u << 20)

static long fill_and_sum(unsigned char seed) {
    volatile unsigned char big[BIG];
    memset((unsigned char *)big, seed, BIG);
    long s = 0;
    for (unsigned i = 0; i < BIG; i += 4096) s += big[i];
    return s;
}

int main(void) {
    check_begin("stack");
    long want = (long)(BIG / 4096) * 3, bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        if (fill_and_sum(3) != want) bad++;
    }
    CHECK("stack.region_4MiB_per_thread", bad == 0, "%ld threads summed wrongly", bad);
    bad = 0;
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < 8; t++) {
#pragma omp task shared(bad)
        if (fill_and_sum(3) != want) {
#pragma omp atomic
            bad++;
        }
    }
    CHECK("stack.tasks_4MiB", bad == 0, "%ld tasks summed wrongly", bad);
    long mb = env_long("EXPECT_STACK_MB", 0);
    if (mb > 2) {
        int workers = 0, wrong = check_worker_stacks(mb, 0, &workers);
        CHECK("stack.env_size_per_worker", wrong == 0 && workers > 0, "%d of %d workers summed wrongly", wrong,
              workers);
    }
    return check_done();
}
