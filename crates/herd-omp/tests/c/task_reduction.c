/* task_reduction.c — OpenMP 5.0 task reductions, every form gcc 12 emits:
 * taskgroup task_reduction with in_reduction tasks (created by one thread and
 * run by others; created by every thread in its own taskgroup), nested
 * taskgroups (different and the same variable), several variables and
 * operators (+ * max min && || & | ^), array sections, a user-defined
 * reduction whose initializer reads omp_orig, a task passing its private copy
 * on to in_reduction children, an orphaned taskgroup; taskloop reduction
 * (default, grainsize(strict:), num_tasks(strict:), unsigned long long, simd,
 * no iterations) and taskloop in_reduction; reduction(task, ...) on parallel,
 * parallel for, for (dynamic, ordered, unsigned long long), sections and
 * scope, nested team-wide + taskgroup reductions, and parallel reduction(task)
 * in nested regions. Every result is checked
 * against the serial value.
 */
#include "check.h"
#include <stdint.h>

#define NT 200
typedef unsigned long long ull;

static long tri(long n) { return n * (n - 1) / 2; } /* 0 + 1 + ... + n-1 */

/* ---- taskgroup task_reduction, tasks from one thread ---------------------- */

static void taskgroup_single(void) {
    long s = 0;
    double m = -1.0;
    int threads_used = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup task_reduction(+ : s) task_reduction(max : m)
        for (int i = 0; i < NT; i++) {
#pragma omp task in_reduction(+ : s) in_reduction(max : m)
            {
                s += i;
                if (i * 0.5 > m) m = i * 0.5;
                __atomic_fetch_or(&threads_used, 1 << (omp_get_thread_num() & 15), __ATOMIC_RELAXED);
                check_spin(200);
            }
        }
    }
    CHECK_EQ("taskgroup: + over tasks of one creator", s, tri(NT));
    CHECK("taskgroup: max over tasks", m == (NT - 1) * 0.5, "got %g", m);
    CHECK("taskgroup: tasks ran", threads_used != 0, "%d", threads_used);
}

/* ---- every thread its own taskgroup -------------------------------------- */

static void taskgroup_each_thread(void) {
    long s = 0;
    int nth = 1;
#pragma omp parallel shared(s)
    {
#pragma omp single
        nth = omp_get_num_threads();
        long mine = 0;
#pragma omp taskgroup task_reduction(+ : mine)
        for (int i = 0; i < 50; i++) {
#pragma omp task in_reduction(+ : mine)
            mine += i;
        }
#pragma omp atomic
        s += mine;
    }
    CHECK_EQ("taskgroup: one per thread", s, nth * tri(50));
}

/* ---- several operators, arrays ------------------------------------------- */

#define NA 16
static void operators(void) {
    long sum = 0, prod = 1, mx = -1000, mn = 1000;
    int land = 1, lor = 0;
    unsigned band = ~0u, bor = 0, bxor = 0;
    long arr[NA];
    int sec[NA];
    for (int k = 0; k < NA; k++) arr[k] = 0, sec[k] = 100;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup task_reduction(+ : sum) task_reduction(* : prod) task_reduction(max : mx) \
    task_reduction(min : mn) task_reduction(&& : land) task_reduction(|| : lor) task_reduction(& : band) \
    task_reduction(| : bor) task_reduction(^ : bxor) task_reduction(+ : arr) task_reduction(+ : sec[2 : 8])
        for (int i = 1; i <= 20; i++) {
#pragma omp task in_reduction(+ : sum) in_reduction(* : prod) in_reduction(max : mx) in_reduction(min : mn) \
    in_reduction(&& : land) in_reduction(|| : lor) in_reduction(& : band) in_reduction(| : bor) \
        in_reduction(^ : bxor) in_reduction(+ : arr) in_reduction(+ : sec[2 : 8])
            {
                sum += i;
                if (i <= 10) prod *= i;
                if (i > mx) mx = i;
                if (i < mn) mn = i;
                land = land && (i > 0);
                lor = lor || (i == 17);
                band &= ~(1u << i);
                bor |= 1u << i;
                bxor ^= 1u << (i % 4);
                for (int k = 0; k < NA; k++) arr[k] += k * i;
                for (int k = 2; k < 10; k++) sec[k] += 1;
            }
        }
    }
    CHECK_EQ("ops: +", sum, 210);
    CHECK_EQ("ops: *", prod, 3628800);
    CHECK_EQ("ops: max", mx, 20);
    CHECK_EQ("ops: min", mn, 1);
    CHECK_EQ("ops: &&", land, 1);
    CHECK_EQ("ops: ||", lor, 1);
    unsigned want_and = ~0u, want_or = 0, want_xor = 0;
    for (int i = 1; i <= 20; i++) want_and &= ~(1u << i), want_or |= 1u << i, want_xor ^= 1u << (i % 4);
    CHECK_EQ("ops: &", band, want_and);
    CHECK_EQ("ops: |", bor, want_or);
    CHECK_EQ("ops: ^", bxor, want_xor);
    int arr_ok = 1, sec_ok = 1;
    for (int k = 0; k < NA; k++) {
        if (arr[k] != 210L * k) arr_ok = 0;
        if (sec[k] != ((k >= 2 && k < 10) ? 120 : 100)) sec_ok = 0;
    }
    CHECK("ops: whole array", arr_ok, "arr[3] = %ld", arr[3]);
    CHECK("ops: array section", sec_ok, "sec[1..3] = %d %d %d", sec[1], sec[2], sec[3]);
}

/* ---- nested taskgroups; copies passed on; user-defined ------------------- */

static void nested(void) {
    long a = 0, b = 0, c = 5;
    long same = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup task_reduction(+ : a) task_reduction(+ : same)
        {
            for (int i = 0; i < 10; i++) {
#pragma omp task in_reduction(+ : a)
                a += i;
            }
#pragma omp taskgroup task_reduction(+ : b) task_reduction(* : c) task_reduction(+ : same)
            {
                for (int i = 0; i < 10; i++) {
                    /* a from the outer group, b and c from the inner one */
#pragma omp task in_reduction(+ : a, b) in_reduction(* : c)
                    {
                        a += 100;
                        b += i;
                        if (i < 3) c *= 2;
                    }
                    /* the inner registration of `same` wins */
#pragma omp task in_reduction(+ : same)
                    same += 1;
                }
            }
            /* inner group combined into `same` (the outer's original): 10 */
#pragma omp task in_reduction(+ : same)
            same += 1000;
        }
    }
    CHECK_EQ("nested: outer var from inner group", a, tri(10) + 1000);
    CHECK_EQ("nested: inner +", b, tri(10));
    CHECK_EQ("nested: inner *", c, 40);
    CHECK_EQ("nested: same variable in both groups", same, 1010);
}

/* A task with in_reduction creates children with in_reduction on the same
 * variable: their remap receives the parent's private copy. */
static long tree_sum;
static void tree(int depth) {
#pragma omp task in_reduction(+ : tree_sum)
    {
        tree_sum += 1;
        if (depth > 0) {
            tree(depth - 1);
            tree(depth - 1);
        }
    }
}

static void passed_on(void) {
    tree_sum = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup task_reduction(+ : tree_sum)
    tree(8);
    CHECK_EQ("copy passed on: task tree with in_reduction", tree_sum, (1 << 9) - 1);
}

/* omp_orig in the initializer: gcc asks the runtime for the original. */
#pragma omp declare reduction(plus_orig : long : omp_out += omp_in) initializer(omp_priv = omp_orig - omp_orig)
static void user_defined(void) {
    long u = 7;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup task_reduction(plus_orig : u)
    for (int i = 0; i < 30; i++) {
#pragma omp task in_reduction(plus_orig : u)
        u += i;
    }
    CHECK_EQ("user-defined reduction reading omp_orig", u, 7 + tri(30));
}

static void orphaned(void) {
    long s = 3;
#pragma omp taskgroup task_reduction(+ : s)
    for (int i = 0; i < 10; i++) {
#pragma omp task in_reduction(+ : s)
        s += i;
    }
    CHECK_EQ("orphaned taskgroup (no parallel region)", s, 3 + tri(10));
}

/* ---- taskloop ------------------------------------------------------------- */

#define NL 10007
static void taskloops(void) {
    long s1 = 0, s2 = 0, s3 = 0, s5 = 0, s6 = 0, zero = 11;
    double p = 1.0;
    ull s4 = 0;
    int in_strict_grain = 1, in_strict_num = 1;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop reduction(+ : s1)
        for (long i = 0; i < NL; i++) s1 += i;
#pragma omp taskloop reduction(+ : s2) reduction(&& : in_strict_grain) grainsize(strict : 7)
        for (long i = 0; i < NL; i++) {
            s2 += i;
            in_strict_grain = in_strict_grain && 1;
        }
#pragma omp taskloop reduction(+ : s3) reduction(&& : in_strict_num) num_tasks(strict : 5)
        for (int i = 0; i < NL; i++) {
            s3 += i;
            in_strict_num = in_strict_num && (i >= 0);
        }
#pragma omp taskloop reduction(+ : s4) reduction(* : p) grainsize(100)
        for (ull i = 0; i < NL; i++) {
            s4 += i;
            if (i % 1000 == 0) p *= 2.0;
        }
#pragma omp taskloop simd reduction(+ : s5)
        for (int i = 0; i < NL; i++) s5 += i;
        int lo = 5, hi = 5;
#pragma omp taskloop reduction(+ : zero)
        for (int i = lo; i < hi; i++) zero += i;
#pragma omp taskgroup task_reduction(+ : s6)
        {
#pragma omp taskloop in_reduction(+ : s6) grainsize(50)
            for (int i = 0; i < 1000; i++) s6 += i;
#pragma omp task in_reduction(+ : s6)
            s6 += 1;
        }
    }
    CHECK_EQ("taskloop reduction", s1, tri(NL));
    CHECK_EQ("taskloop reduction grainsize(strict:)", s2, tri(NL));
    CHECK_EQ("taskloop reduction num_tasks(strict:)", s3, tri(NL));
    CHECK("taskloop && under strict", in_strict_grain && in_strict_num, "%d %d", in_strict_grain, in_strict_num);
    CHECK_EQ("taskloop reduction unsigned long long", s4, tri(NL));
    CHECK("taskloop reduction *", p == 2048.0, "got %g", p);
    CHECK_EQ("taskloop simd reduction", s5, tri(NL));
    CHECK_EQ("taskloop reduction, no iterations", zero, 11);
    CHECK_EQ("taskloop in_reduction", s6, tri(1000) + 1);
}

/* ---- reduction(task, ...) on team-wide constructs ------------------------ */

static void team_wide(void) {
    long x = 0, y = 0, z = 0, w = 0, v = 0, o = 0;
    long prod = 1;
    ull u = 0;
    int nth = 1;
#pragma omp parallel reduction(task, + : x) reduction(task, * : prod)
    {
#pragma omp single
        nth = omp_get_num_threads();
        x += 1; /* the implicit task's own copy */
        if (omp_get_thread_num() == 0) prod *= 3;
        for (int i = 0; i < 10; i++) {
#pragma omp task in_reduction(+ : x) in_reduction(* : prod)
            {
                x += i;
                if (i == 0) prod *= 2;
            }
        }
    }
    CHECK_EQ("parallel reduction(task, +)", x, nth + nth * tri(10));
    long want_prod = 3;
    for (int t = 0; t < nth; t++) want_prod *= 2;
    CHECK_EQ("parallel reduction(task, *) (one copy per member)", prod, want_prod);

#pragma omp parallel for reduction(task, + : y)
    for (int i = 0; i < 100; i++) {
#pragma omp task in_reduction(+ : y)
        y += i;
    }
    CHECK_EQ("parallel for reduction(task, +)", y, tri(100));

#pragma omp parallel
    {
#pragma omp for reduction(task, + : z) schedule(dynamic, 3)
        for (int i = 0; i < 100; i++) {
            z += 1;
#pragma omp task in_reduction(+ : z)
            z += i;
        }
#pragma omp for reduction(task, + : u) schedule(guided)
        for (ull i = 0; i < 100; i++) {
#pragma omp task in_reduction(+ : u)
            u += i;
        }
#pragma omp for ordered reduction(task, + : o) schedule(dynamic)
        for (int i = 0; i < 50; i++) {
#pragma omp task in_reduction(+ : o)
            o += i;
#pragma omp ordered
            o += 1;
        }
#pragma omp sections reduction(task, + : w)
        {
#pragma omp section
            {
#pragma omp task in_reduction(+ : w)
                w += 1;
            }
#pragma omp section
            {
                w += 10;
#pragma omp task in_reduction(+ : w)
                w += 100;
            }
        }
#pragma omp scope reduction(task, + : v)
        {
            v += 1;
#pragma omp task in_reduction(+ : v)
            v += 2;
        }
    }
    CHECK_EQ("for reduction(task, +) dynamic", z, 100 + tri(100));
    CHECK_EQ("for reduction(task, +) unsigned long long", u, tri(100));
    CHECK_EQ("for ordered reduction(task, +)", o, 50 + tri(50));
    CHECK_EQ("sections reduction(task, +)", w, 111);
    CHECK_EQ("scope reduction(task, +)", v, 3L * nth);
}

/* Tasks created at once by every member, multiplying into the region's
 * reduction: a task run by a member before that member's body initialised
 * its copy (to 1) would lose its factor. (A double: 2^(4·nth) is exact in
 * it up to 255 threads; a long overflowed from 16.) */
static void team_start(void) {
    int bad = 0;
    for (int rep = 0; rep < 200; rep++) {
        double prod = 1;
        int nth = 1;
#pragma omp parallel reduction(task, * : prod)
        {
            for (int i = 0; i < 4; i++) {
#pragma omp task in_reduction(* : prod)
                prod *= 2;
            }
            if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
        }
        double want = 1;
        for (int k = 0; k < 4 * nth; k++) want *= 2;
        if (prod != want) bad++;
    }
    CHECK_EQ("parallel reduction(task, *): tasks at the region's start", bad, 0);
}

/* parallel reduction(task) enclosing a for reduction(task) enclosing a
 * taskgroup task_reduction, tasks reducing into all three. */
static void team_nested(void) {
    long a = 0, b = 0, c = 0;
    int nth = 1;
#pragma omp parallel reduction(task, + : a)
    {
#pragma omp single
        nth = omp_get_num_threads();
#pragma omp for reduction(task, + : b) schedule(static)
        for (int i = 0; i < 40; i++) {
            long ci = 0; /* each thread's own taskgroup reduces its own variable */
#pragma omp taskgroup task_reduction(+ : ci)
            {
#pragma omp task in_reduction(+ : a, b, ci)
                {
                    a += 1;
                    b += i;
                    ci += 2;
                }
            }
#pragma omp atomic
            c += ci;
        }
    }
    CHECK_EQ("nested team-wide: parallel", a, 40);
    CHECK_EQ("nested team-wide: for", b, tri(40));
    CHECK_EQ("nested team-wide: taskgroup", c, 80);
    CHECK("nested team-wide: team", nth >= 1, "%d", nth);
}

/* parallel reduction(task) in nested regions (with OMP_MAX_ACTIVE_LEVELS=2,
 * inner teams of their own; else serialized, a team of one). */
static void nested_regions(void) {
    int outer = 0, ok = 0;
#pragma omp parallel num_threads(2)
    {
        long x = 0;
        int inner = 1;
#pragma omp parallel num_threads(2) reduction(task, + : x)
        {
#pragma omp single
            inner = omp_get_num_threads();
            for (int i = 0; i < 10; i++) {
#pragma omp task in_reduction(+ : x)
                x += i;
            }
        }
#pragma omp atomic
        outer += 1;
        if (x == inner * tri(10)) {
#pragma omp atomic
            ok += 1;
        }
    }
    CHECK_EQ("nested regions: parallel reduction(task) in each", ok, outer);
}

int main(void) {
    check_begin("task_reduction");
    for (int rep = 0; rep < 3; rep++) {
        taskgroup_single();
        taskgroup_each_thread();
        operators();
        nested();
        passed_on();
        user_defined();
        taskloops();
        team_wide();
        team_start();
        team_nested();
        nested_regions();
    }
    /* Last: libgomp 12 leaves the initial thread in the one-thread team it
     * makes for an orphaned task reduction, and a later parallel region with
     * task reductions can then hang under libgomp (the reference). */
    orphaned();
    return check_done();
}
