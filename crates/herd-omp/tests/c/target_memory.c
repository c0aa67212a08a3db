/* The device memory routines on the host, the only device without an
 * offload target: omp_target_alloc / _free / _is_present / _memcpy /
 * _memcpy_rect / _associate_ptr on the initial device answer as libgomp does
 * with no device (memory is host memory; other device numbers do not exist;
 * association needs a device: EINVAL). */
#include "check.h"
#include <errno.h>

int main(void) {
    check_begin("target_memory");
    int d = omp_get_initial_device();
    CHECK_EQ("omp_get_initial_device is omp_get_num_devices", d, omp_get_num_devices());
    CHECK("omp_is_initial_device", omp_is_initial_device(), "false");
    char *p = omp_target_alloc(100, d);
    CHECK("omp_target_alloc on the initial device", p != NULL, "NULL");
    CHECK("omp_target_alloc on a device that does not exist", omp_target_alloc(100, d + 3) == NULL, "non-NULL");
    CHECK("omp_target_is_present on the initial device", omp_target_is_present(p, d), "0");
    CHECK("omp_target_is_present on a device that does not exist", !omp_target_is_present(p, d + 3), "1");
    CHECK("omp_target_is_present of NULL", omp_target_is_present(NULL, d + 3), "0");
    char src[100];
    for (int i = 0; i < 100; i++) src[i] = (char)i;
    memset(p, 0, 100);
    CHECK_EQ("omp_target_memcpy", omp_target_memcpy(p, src, 50, 10, 5, d, d), 0);
    CHECK("omp_target_memcpy: offsets", p[9] == 0 && p[10] == 5 && p[59] == 54 && p[60] == 0, "p[10]=%d p[59]=%d",
          p[10], p[59]);
    CHECK_EQ("omp_target_memcpy to a device that does not exist", omp_target_memcpy(p, src, 50, 0, 0, d + 3, d),
             EINVAL);
    omp_target_free(p, d);

    CHECK_EQ("omp_target_memcpy_rect: dimensions supported",
             omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, d, d), 2147483647);
    int a[4][5], b[6][7];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 7; j++) b[i][j] = i * 10 + j;
    size_t vol[2] = {2, 3}, doff[2] = {1, 1}, soff[2] = {2, 3}, dd[2] = {4, 5}, sd[2] = {6, 7};
    int r = omp_target_memcpy_rect(a, b, sizeof(int), 2, vol, doff, soff, dd, sd, d, d);
    CHECK_EQ("omp_target_memcpy_rect", r, 0);
    int bad = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) {
            int in = i >= 1 && i < 3 && j >= 1 && j < 4;
            bad += a[i][j] != (in ? b[i + 1][j + 2] : 0);
        }
    CHECK("omp_target_memcpy_rect: the sub-volume and nothing else", bad == 0, "%d elements wrong", bad);
    CHECK_EQ("omp_target_memcpy_rect with 0 dimensions copies nothing",
             omp_target_memcpy_rect(a, b, 4, 0, vol, doff, soff, dd, sd, d, d), 0);
    CHECK_EQ("omp_target_associate_ptr on the host", omp_target_associate_ptr(src, a, 10, 0, d), EINVAL);
    CHECK_EQ("omp_target_disassociate_ptr on the host", omp_target_disassociate_ptr(src, d), EINVAL);

    /* from any thread of a team */
    int fails = 0;
#pragma omp parallel reduction(+ : fails)
    {
        int *q = omp_target_alloc(64, d);
        int v[16];
        for (int i = 0; i < 16; i++) v[i] = omp_get_thread_num() * 100 + i;
        fails += !q || omp_target_memcpy(q, v, sizeof v, 0, 0, d, d) != 0 || q[15] != v[15];
        omp_target_free(q, d);
    }
    CHECK_EQ("omp_target_alloc / omp_target_memcpy in a team", fails, 0);
    return check_done();
}
