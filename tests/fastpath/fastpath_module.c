/*
 * fastpath_module.c - a loadable module with a private copy whose exported
 * loop does nothing but small malloc/free pairs on the owning thread, so
 * callgrind can count the instructions of each fast path as users get it
 * (TLS through TLSDESC, calls within the module).
 */
#include "nsalloc.h"

#define MODULE_API __attribute__((visibility("default")))

/* `batch` live blocks per round keep the pairs from always hitting one slot. */
MODULE_API void fastpath_run(unsigned rounds, unsigned batch, size_t size) {
  void *blocks[64];
  for (unsigned r = 0; r < rounds; r++) {
    for (unsigned i = 0; i < batch; i++)
      blocks[i] = nsalloc_malloc(size);
    for (unsigned i = 0; i < batch; i++)
      nsalloc_free(blocks[i]);
  }
}
