/* Peak double-precision FMA rate of one core with AVX-512: 12 independent
 * chains of _mm512_fmadd_pd (16 flops each), enough to hide the FMA latency.
 * The ceiling for any DGEMM on this machine (issue 15's 2-core numbers):
 *   gcc -O2 -mavx512f -o /tmp/fma_peak bench/c/fma_peak.c
 *   /tmp/fma_peak; (/tmp/fma_peak & /tmp/fma_peak; wait)   # one core, both cores
 * Only for CPUs with AVX-512F (grep -c avx512f /proc/cpuinfo). */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
int main(){
  __m512d a[12]; __m512d m=_mm512_set1_pd(1.0000001), c=_mm512_set1_pd(1e-9);
  for(int i=0;i<12;i++) a[i]=_mm512_set1_pd(i);
  long iters=200000000;
  struct timespec t0,t1; clock_gettime(CLOCK_MONOTONIC,&t0);
  for(long k=0;k<iters;k++){
    #pragma GCC unroll 12
    for(int i=0;i<12;i++) a[i]=_mm512_fmadd_pd(a[i],m,c);
  }
  clock_gettime(CLOCK_MONOTONIC,&t1);
  double s=(t1.tv_sec-t0.tv_sec)+(t1.tv_nsec-t0.tv_nsec)*1e-9;
  double sum=0; for(int i=0;i<12;i++) sum+=_mm512_reduce_add_pd(a[i]);
  printf("%.1f GFLOP/s (one thread, AVX-512 FMA) %g\n", iters*12.0*16/s/1e9, sum);
}
