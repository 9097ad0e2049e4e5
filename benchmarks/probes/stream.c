// STREAM-style bandwidth probe: the machine's sustainable memory bandwidth
// with all cores (OpenMP), for the memory-bound targets. Prints one JSON
// line per kernel with the best and median rate over repeated runs, in
// GB/s counted the STREAM way (bytes the kernel names, no write-allocate).
//   clang-22 -O3 -march=native -fopenmp stream.c -o stream && ./stream
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 24)  // 64 MiB per array: elementwise_16m's arrays
// The read-only sum reads sum_64m's 256 MiB: over 64 MiB a read-only
// stream still gained from this VM's caches (136 GB/s at 64 MiB against
// 74-82 GB/s at 256 MiB to 1 GiB, Zen 5 host, one minute).
#define SUM_N (1L << 26)
#define REPEATS 15

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *name, double bytes, double *times) {
  qsort(times, REPEATS, sizeof(double), compare);
  printf("{\"probe\": \"%s\", \"best_gbs\": %.2f, \"median_gbs\": %.2f}\n", name, bytes / times[0] / 1e9,
         bytes / times[REPEATS / 2] / 1e9);
}

int main(void) {
  float *a = aligned_alloc(64, N * sizeof(float));
  float *b = aligned_alloc(64, N * sizeof(float));
  float *c = aligned_alloc(64, N * sizeof(float));
  float *d = aligned_alloc(64, N * sizeof(float));
  float *big = aligned_alloc(64, SUM_N * sizeof(float));
#pragma omp parallel for
  for (long i = 0; i < N; i++) {
    a[i] = 1.0f; b[i] = 2.0f; c[i] = 0.5f; d[i] = 0.0f;
  }
#pragma omp parallel for
  for (long i = 0; i < SUM_N; i++) big[i] = 1.0f;
  double triad[REPEATS], fma4[REPEATS], reduce[REPEATS];
  volatile float sink = 0;
  for (int r = 0; r < REPEATS; r++) {
    double t = omp_get_wtime();
#pragma omp parallel for
    for (long i = 0; i < N; i++) a[i] = b[i] + 3.0f * c[i];
    triad[r] = omp_get_wtime() - t;

    // The x*y+w shape: three reads and a write.
    t = omp_get_wtime();
#pragma omp parallel for
    for (long i = 0; i < N; i++) d[i] = a[i] * b[i] + c[i];
    fma4[r] = omp_get_wtime() - t;

    // A read-only sum, the sum workload's shape.
    t = omp_get_wtime();
    float s = 0;
#pragma omp parallel for simd reduction(+ : s)
    for (long i = 0; i < SUM_N; i++) s += big[i];
    reduce[r] = omp_get_wtime() - t;
    sink = s;
  }
  (void)sink;
  report("triad", 3.0 * N * sizeof(float), triad);
  report("mul_add", 4.0 * N * sizeof(float), fma4);
  report("sum", 1.0 * SUM_N * sizeof(float), reduce);
  free(a); free(b); free(c); free(d); free(big);
  return 0;
}
