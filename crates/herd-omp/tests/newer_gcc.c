/* A program as gcc 13 / 14 would link it: it references entry points at the
 * symbol versions those compilers' libgomp defines (OMP_5.1.1, OMP_5.2,
 * OMP_5.2.1, GOMP_5.1.2), which gcc 12's libgomp lacks.  Linked against
 * herd's libgomp.so.1 by symbol_versions.sh, it must load (the dynamic linker
 * refuses a program whose version nodes the library does not define) and
 * the host implementations must answer as libgomp does without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__asm__(".symver v_in_explicit_task, omp_in_explicit_task@OMP_5.2");
__asm__(".symver v_get_mapped_ptr, omp_get_mapped_ptr@OMP_5.1.1");
__asm__(".symver v_target_is_accessible, omp_target_is_accessible@OMP_5.1.1");
__asm__(".symver v_target_memset, omp_target_memset@OMP_5.2.1");
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
    printf("summary newer_gcc: %d failed\n", failed);
    return failed != 0;
}
