/* The five entry points of LLVM's OpenMP runtime (libomp) that Tessel's
 * CPU code calls, for one thread: enough to run an object compiled for
 * another architecture under qemu-user, where no libomp of that
 * architecture is installed. A parallel region runs its outlined body once
 * as thread 0; a statically scheduled loop gives thread 0 every iteration
 * (or, chunked, the first chunk and a stride of one chunk: the loop then
 * visits every chunk). The numbers are the same as with any thread count:
 * Tessel's parallel loops are over independent grid programs. */
#include <stdarg.h>
#include <stdint.h>

typedef struct ident ident_t;
typedef void (*microtask_t)(int32_t *global_tid, int32_t *bound_tid, ...);

int32_t __kmpc_global_thread_num(ident_t *loc) {
  (void)loc;
  return 0;
}

void __kmpc_barrier(ident_t *loc, int32_t gtid) {
  (void)loc;
  (void)gtid;
}

void __kmpc_for_static_fini(ident_t *loc, int32_t gtid) {
  (void)loc;
  (void)gtid;
}

/* kmp_sch_static_chunked */
#define STATIC_CHUNKED 33

void __kmpc_for_static_init_8u(ident_t *loc, int32_t gtid, int32_t schedule,
                               int32_t *last, uint64_t *lower,
                               uint64_t *upper, int64_t *stride,
                               int64_t increment, int64_t chunk) {
  (void)loc;
  (void)gtid;
  (void)increment;
  *last = 1;
  if (schedule == STATIC_CHUNKED && chunk > 0) {
    uint64_t end = *lower + (uint64_t)chunk - 1;
    if (end < *upper)
      *upper = end;
    *stride = chunk;
  } else {
    *stride = (int64_t)(*upper - *lower + 1);
  }
}

void __kmpc_fork_call(ident_t *loc, int32_t argc, microtask_t body, ...) {
  (void)loc;
  void *a[8] = {0};
  va_list arguments;
  va_start(arguments, body);
  for (int32_t i = 0; i < argc && i < 8; ++i)
    a[i] = va_arg(arguments, void *);
  va_end(arguments);
  int32_t global_tid = 0, bound_tid = 0;
  /* Outlined bodies take their captured values as pointer arguments. */
  body(&global_tid, &bound_tid, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
       a[7]);
}
