// tasks_cpp.cpp — the `cpyfn` argument of GOMP_task / GOMP_taskloop.
//
// For firstprivate of a C++ object with a user copy constructor, g++ passes a
// non-null cpyfn to GOMP_task: the data block holds a *pointer* to the
// original, and cpyfn copy-constructs the task's copy (checked with
// -fdump-tree-omplower: `main._omp_cpyfn.N` calls `C::C (&dst->c, src->c)`).
// The runtime must call cpyfn(task_buffer, data) at task creation, into the
// buffer the task will use (arg_size bytes aligned to arg_align), and must not
// move the object afterwards.  The task body destroys the copy.
// Checked here: the copy constructor ran from the original at creation time
// (later changes to the original are not seen), the copy lives where it was
// constructed (self pointer), it is aligned, constructions and destructions
// balance, for deferred, undeferred (if(0)) and taskloop tasks.
#include "check.h"

#include <cstdint>

static int copies, ctors, dtors;

struct alignas(64) Tracked {
    int v;
    const Tracked *from;  // the object this one was copy-constructed from
    const Tracked *self;  // `this` at construction time
    long payload[20];
    explicit Tracked(int x) : v(x), from(nullptr), self(this) {
        for (int k = 0; k < 20; k++) payload[k] = x * 100 + k;
        __atomic_fetch_add(&ctors, 1, __ATOMIC_RELAXED);
    }
    Tracked(const Tracked &o) : v(o.v), from(&o), self(this) {
        for (int k = 0; k < 20; k++) payload[k] = o.payload[k];
        __atomic_fetch_add(&copies, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&ctors, 1, __ATOMIC_RELAXED);
    }
    ~Tracked() { __atomic_fetch_add(&dtors, 1, __ATOMIC_RELAXED); }
    Tracked &operator=(const Tracked &) = delete;
    bool intact(int x) const {
        for (int k = 0; k < 20; k++)
            if (payload[k] != x * 100 + k) return false;
        return v == x;
    }
};

static int bad_value, bad_from, bad_self, bad_align, ran;

static void judge(const Tracked &c, const Tracked *orig, int want) {
    if (!c.intact(want)) __atomic_store_n(&bad_value, 1, __ATOMIC_RELAXED);
    if (c.from != orig) __atomic_store_n(&bad_from, 1, __ATOMIC_RELAXED);
    if (c.self != &c) __atomic_store_n(&bad_self, 1, __ATOMIC_RELAXED);
    if (reinterpret_cast<std::uintptr_t>(&c) % 64 != 0) __atomic_store_n(&bad_align, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
}

static void reset() { copies = ctors = dtors = bad_value = bad_from = bad_self = bad_align = ran = 0; }

static void report(const char *what, int want_ran) {
    char nm[120];
    snprintf(nm, sizeof nm, "cpyfn.%s.value_at_creation", what);
    CHECK(nm, !bad_value && ran == want_ran, "bad_value %d, %d tasks ran (want %d)", bad_value, ran, want_ran);
    snprintf(nm, sizeof nm, "cpyfn.%s.copy_constructed_from_original", what);
    CHECK(nm, !bad_from, "the task's copy was not copy-constructed from the original object");
    snprintf(nm, sizeof nm, "cpyfn.%s.not_moved_after_construction", what);
    CHECK(nm, !bad_self, "the task's copy is not at the address where it was constructed");
    snprintf(nm, sizeof nm, "cpyfn.%s.aligned", what);
    CHECK(nm, !bad_align, "the task's copy is not 64-byte aligned (arg_align)");
    snprintf(nm, sizeof nm, "cpyfn.%s.ctor_dtor_balance", what);
    CHECK(nm, ctors == dtors && copies >= want_ran, "%d constructions (%d copies), %d destructions", ctors, copies,
          dtors);
}

int main() {
    check_begin("tasks_cpp");

    reset();
#pragma omp parallel
#pragma omp single
    {
        for (int k = 0; k < 50; k++) {
            Tracked c(k);
#pragma omp task firstprivate(c, k)
            {
                for (volatile int s = 0; s < 2000; s = s + 1) {
                }
                judge(c, c.from, k);
            }
            // The task must not see these changes.
            c.v = -1;
            c.payload[3] = -1;
        }
    }
    report("deferred", 50);

    // The copy must come from the object that was firstprivate'd.
    reset();
    const Tracked *orig_addr = nullptr;
#pragma omp parallel
#pragma omp single
    {
        Tracked c(7);
        orig_addr = &c;
#pragma omp task firstprivate(c) shared(orig_addr)
        judge(c, orig_addr, 7);
#pragma omp taskwait
    }
    report("source_address", 1);

    // Undeferred: the runtime still has to run cpyfn (libgomp copies into a
    // stack buffer).  LLVM libomp 14 calls the task function on the raw data
    // block without calling cpyfn, so under libomp this part is not run (its
    // task body would read an object that was never constructed) and is
    // reported as xfail.
    if (check_is_libomp()) {
        check_known("cpyfn.undeferred_if0", 0, 1, "not run under libomp (GOMP_task with if(0) ignores cpyfn)");
    } else {
        reset();
#pragma omp parallel
#pragma omp single
        {
            for (int k = 0; k < 20; k++) {
                Tracked c(k + 1000);
#pragma omp task if (0) firstprivate(c, k)
                judge(c, c.from, k + 1000);
            }
        }
        report("undeferred_if0", 20);
    }

    reset();
    {
        Tracked c(55);
#pragma omp task firstprivate(c)
        judge(c, c.from, 55);
#pragma omp taskwait
    }
    report("outside_parallel", 1);

    // taskloop: each generated task gets its own copy through cpyfn.
    reset();
#pragma omp parallel
#pragma omp single
    {
        Tracked c(3);
#pragma omp taskloop firstprivate(c) num_tasks(8)
        for (int i = 0; i < 64; i++) judge(c, c.from, 3);
    }
    // (64 iterations judged; every task made one copy.)
    {
        CHECK("cpyfn.taskloop.value", !bad_value && ran == 64, "bad_value %d ran %d", bad_value, ran);
        CHECK("cpyfn.taskloop.not_moved_after_construction", !bad_self, "copy moved after construction");
        CHECK("cpyfn.taskloop.aligned", !bad_align, "copy not 64-byte aligned");
        CHECK("cpyfn.taskloop.ctor_dtor_balance", ctors == dtors && copies >= 8,
              "%d constructions (%d copies), %d destructions", ctors, copies, dtors);
    }
    return check_done();
}
