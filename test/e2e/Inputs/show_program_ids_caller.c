/* A C caller of a Tessel shared library: the C ABI is MLIR's C interface,
 * one `_mlir_ciface_<function>` per public function taking a pointer to a
 * memref descriptor per argument. */
#include <stdint.h>
#include <stdio.h>

typedef struct {
  int32_t *allocated; /* what was allocated (freed by the owner) */
  int32_t *aligned;   /* where the data starts */
  int64_t offset;     /* in elements, from `aligned` */
  int64_t sizes[2];
  int64_t strides[2]; /* in elements */
} MemRef2xI32;

void _mlir_ciface_show_program_ids(MemRef2xI32 *o);

int main(void) {
  int32_t data[8 * 6] = {0};
  MemRef2xI32 o = {data, data, 0, {8, 6}, {6, 1}};
  _mlir_ciface_show_program_ids(&o);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 6; ++j)
      printf("%s%d", j ? " " : "", data[i * 6 + j]);
    printf("\n");
  }
  return 0;
}
