/* herd_lapack_calls(name) looked up at run time, -1 when libherd_lapack.so is
 * not loaded: solve.f90 is built against the system LAPACK only. */
#include <dlfcn.h>
#include <stdint.h>

int64_t calls_through_herd(const char *name) {
  int64_t (*f)(const char *) = (int64_t(*)(const char *))dlsym(RTLD_DEFAULT, "herd_lapack_calls");
  return f ? f(name) : -1;
}
