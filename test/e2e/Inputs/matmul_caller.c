/* Calls `matmul` (f32 128x32 times 32x128) of a Tessel object through
 * MLIR's C interface on small integer-valued inputs, so every sum is exact
 * in any order and the printed numbers are the same on every CPU. */
#include <stdint.h>
#include <stdio.h>

typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} MemRef2xF32;

void _mlir_ciface_matmul(MemRef2xF32 *x, MemRef2xF32 *y, MemRef2xF32 *z);

static float x[128 * 32], y[32 * 128], z[128 * 128];

int main(void) {
  for (int i = 0; i < 128 * 32; ++i) {
    x[i] = (float)(i * 7 % 13 - 6);
    y[i] = (float)(i * 5 % 11 - 5);
  }
  MemRef2xF32 a = {x, x, 0, {128, 32}, {32, 1}};
  MemRef2xF32 b = {y, y, 0, {32, 128}, {128, 1}};
  MemRef2xF32 c = {z, z, 0, {128, 128}, {128, 1}};
  _mlir_ciface_matmul(&a, &b, &c);
  double weighted = 0;
  for (int i = 0; i < 128 * 128; ++i)
    weighted += (double)z[i] * (i % 7 + 1);
  printf("z[0][0] = %.1f, z[127][127] = %.1f, weighted sum = %.1f\n", z[0],
         z[128 * 128 - 1], weighted);
  return 0;
}
