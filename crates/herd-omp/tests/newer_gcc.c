/* A program as gcc 13 to 16 would link it: it references entry points at the
 * symbol versions those compilers' libgomp defines (OMP_5.1.1, OMP_5.2,
 * GOMP_5.1.2, GOMP_5.1.3, GOMP_6.0, GOMP_6.0.1), which gcc 12's libgomp
 * lacks, and OpenMP 2.5's nestable lock at its old version OMP_1.0.  Linked against
 * herd's libgomp.so.1 by symbol_versions.sh, it must load (the dynamic linker
 * refuses a program whose version nodes the library does not define) and
 * the host implementations must answer as libgomp does without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__asm__(".symver v_in_explicit_task, omp_in_explicit_task@OMP_5.2");
__asm__(".symver v_get_mapped_ptr, omp_get_mapped_ptr@OMP_5.1.1");
__asm__(".symver v_target_is_accessible, omp_target_is_accessible@OMP_5.1.1");
__asm__(".symver v_target_memset, omp_target_memset@GOMP_6.0.1");
__asm__(".symver v_interop, GOMP_interop@GOMP_5.1.3");
__asm__(".symver v_get_interop_int, omp_get_interop_int@GOMP_5.1.3");
__asm__(".symver v_get_interop_name, omp_get_interop_name@GOMP_5.1.3");
__asm__(".symver v_get_uid_from_device, omp_get_uid_from_device@GOMP_6.0");
__asm__(".symver v_get_device_from_uid, omp_get_device_from_uid@GOMP_6.0");
__asm__(".symver v_init_nest_lock_25, omp_init_nest_lock@OMP_1.0");
__asm__(".symver v_set_nest_lock_25, omp_set_nest_lock@OMP_1.0");
__asm__(".symver v_test_nest_lock_25, omp_test_nest_lock@OMP_1.0");
__asm__(".symver v_unset_nest_lock_25, omp_unset_nest_lock@OMP_1.0");
__asm__(".symver v_set_lock_25, omp_set_lock@OMP_1.0");
__asm__(".symver v_unset_lock_25, omp_unset_lock@OMP_1.0");
__asm__(".symver v_init_lock_25, omp_init_lock@OMP_1.0");
__asm__(".symver v_add_alloc, GOMP_add_alloc@GOMP_5.1.2");
__asm__(".symver v_is_alloc, GOMP_is_alloc@GOMP_5.1.2");
__asm__(".symver v_get_initial_device, omp_get_initial_device@OMP_4.5");
__asm__(".symver v_parallel, GOMP_parallel@GOMP_4.0");
__asm__(".symver v_task, GOMP_task@GOMP_2.0");
__asm__(".symver v_taskwait, GOMP_taskwait@GOMP_2.0");

int v_in_explicit_task(void);
void *v_get_mapped_ptr(const void *, int);
int v_target_is_accessible(const void *, size_t, int);
void *v_target_memset(void *, int, size_t, int);
void v_add_alloc(void *);
_Bool v_is_alloc(void *);
int v_get_initial_device(void);
void v_parallel(void (*)(void *), void *, unsigned, unsigned);
void v_task(void (*)(void *), void *, void (*)(void *, void *), long, long, _Bool, unsigned, void **, int, void *);
void v_taskwait(void);
void v_interop(int, int, void ***, const void *, const void *, int, void ***, int, void ***, unsigned, void **);
long v_get_interop_int(void *, int, int *);
const char *v_get_interop_name(void *, int);
const char *v_get_uid_from_device(int);
int v_get_device_from_uid(const char *);
void v_init_nest_lock_25(void *);
void v_set_nest_lock_25(void *);
int v_test_nest_lock_25(void *);
void v_unset_nest_lock_25(void *);
void v_init_lock_25(void *);
void v_set_lock_25(void *);
void v_unset_lock_25(void *);

/* OpenMP 2.5's nestable lock: 8 bytes, owner thread and count. */
static int nest25[2];
static int lock25;
static long counter;
static void locked_region(void *arg) {
    (void)arg;
    for (int i = 0; i < 10000; i++) {
        v_set_nest_lock_25(nest25);
        v_set_nest_lock_25(nest25);
        v_set_lock_25(&lock25);
        counter++;
        v_unset_lock_25(&lock25);
        v_unset_nest_lock_25(nest25);
        v_unset_nest_lock_25(nest25);
    }
}

static int failed;
static void check(const char *name, int ok) {
    printf("%s %s\n", ok ? "ok" : "FAIL", name);
    failed += !ok;
}

static void region(void *arg) { *(int *)arg = v_in_explicit_task(); }

static int *in_task_result;
static void task_body(void *arg) {
    (void)arg;
    *in_task_result = v_in_explicit_task();
}

int main(void) {
    int dev = v_get_initial_device();
    char buf[16];
    check("omp_in_explicit_task outside any task is 0", v_in_explicit_task() == 0);
    int in_implicit = -1;
    v_parallel(region, &in_implicit, 1, 0);
    check("omp_in_explicit_task in an implicit task is 0", in_implicit == 0);
    int in_task = -1;
    in_task_result = &in_task;
    v_task(task_body, NULL, NULL, 0, 1, 1, 0, NULL, 0, NULL); /* deferrable, no arguments */
    v_taskwait();
    check("omp_in_explicit_task in an explicit task is 1", in_task == 1);
    check("omp_get_mapped_ptr on the initial device is the pointer", v_get_mapped_ptr(buf, dev) == buf);
    check("omp_get_mapped_ptr on a device that does not exist is NULL", v_get_mapped_ptr(buf, dev + 5) == NULL);
    check("omp_target_is_accessible on the initial device", v_target_is_accessible(buf, 16, dev) == 1);
    memset(buf, 0, sizeof buf);
    check("omp_target_memset returns the pointer", v_target_memset(buf, 'x', 8, dev) == buf);
    check("omp_target_memset fills", buf[0] == 'x' && buf[7] == 'x' && buf[8] == 0);
    void *p = malloc(8);
    v_add_alloc(p);
    check("GOMP_is_alloc of a pointer GOMP_add_alloc recorded", v_is_alloc(p));
    check("GOMP_is_alloc forgets it", !v_is_alloc(p));
    check("GOMP_is_alloc of another pointer", !v_is_alloc(buf));
    free(p);

    void *obj = (void *)1, *gone = (void *)2;
    void **init[1] = {&obj}, **destroy[1] = {&gone};
    v_interop(-1, 1, init, NULL, NULL, 0, NULL, 1, destroy, 0, NULL);
    check("interop init on the host gives omp_interop_none", obj == NULL && gone == NULL);
    int rc = 0;
    v_get_interop_int(obj, -1, &rc);
    check("a query of omp_interop_none is omp_irc_empty", rc == -1);
    check("omp_get_interop_name(fr_id)", v_get_interop_name(obj, -1) && strcmp(v_get_interop_name(obj, -1), "fr_id") == 0);
    const char *uid = v_get_uid_from_device(-1);
    check("the initial device's uid is OMP_INITIAL_DEVICE", uid && strcmp(uid, "OMP_INITIAL_DEVICE") == 0);
    check("the uid maps back to omp_initial_device", v_get_device_from_uid(uid) == -1);
    check("another device has no uid", v_get_uid_from_device(dev + 3) == NULL);
    check("an unknown uid is omp_invalid_device", v_get_device_from_uid("gpu-0") == -4);

    v_init_nest_lock_25(nest25);
    v_init_lock_25(&lock25);
    check("an OpenMP 2.5 nestable lock nests", v_test_nest_lock_25(nest25) == 1 && v_test_nest_lock_25(nest25) == 2);
    v_unset_nest_lock_25(nest25);
    v_unset_nest_lock_25(nest25);
    check("and is free after as many unsets", nest25[0] == 0 && nest25[1] == 0);
    v_parallel(locked_region, NULL, 4, 0);
    check("OpenMP 2.5 locks exclude (4 threads x 10000)", counter == 40000);
    printf("summary newer_gcc: %d failed\n", failed);
    return failed != 0;
}
