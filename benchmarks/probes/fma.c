// Peak FMA probe: independent chains of vector FMAs on every core (OpenMP),
// at the widest vector the compiler targets (-march=native). Prints the
// best and median GFLOP/s over repeated runs (an FMA is two FLOPs).
//   clang-22 -O3 -march=native -mprefer-vector-width=512 -fopenmp fma.c -o fma && ./fma
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define LANES 16     // one AVX-512 register of f32; narrower targets split it
#ifndef CHAINS
#define CHAINS 24    // independent accumulators: FMA latency times two ports, and more
#endif               // (-DCHAINS=6 for 16-register AVX2: 12 ymm, no spills)
#define STEPS 20000000L
#define REPEATS 7

typedef float vec __attribute__((vector_size(LANES * sizeof(float))));

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(void) {
  double rates[REPEATS];
  volatile float sink = 0;
  for (int r = 0; r < REPEATS; r++) {
    double t = omp_get_wtime();
    int threads = 1;
#pragma omp parallel
    {
#pragma omp single
      threads = omp_get_num_threads();
      vec acc[CHAINS], x, y;
      for (int k = 0; k < LANES; k++) { x[k] = 0.999999f; y[k] = 1e-7f; }
      for (int c = 0; c < CHAINS; c++) acc[c] = x * (float)c;
      for (long i = 0; i < STEPS; i++) {
#pragma clang loop unroll(full)
        for (int c = 0; c < CHAINS; c++) acc[c] = __builtin_elementwise_fma(acc[c], x, y);
      }
      float s = 0;
      for (int c = 0; c < CHAINS; c++) s += acc[c][0];
#pragma omp atomic
      sink += s;
    }
    double elapsed = omp_get_wtime() - t;
    rates[r] = 2.0 * LANES * CHAINS * STEPS * threads / elapsed / 1e9;
  }
  (void)sink;
  qsort(rates, REPEATS, sizeof(double), compare);
  printf("{\"probe\": \"fma\", \"best_gflops\": %.1f, \"median_gflops\": %.1f}\n", rates[REPEATS - 1],
         rates[REPEATS / 2]);
  return 0;
}
