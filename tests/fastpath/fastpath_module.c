/*
 * fastpath_module.c - a loadable module with a private copy that exports its
 * loops: one only allocates, one only frees (small blocks, owning thread),
 * and a second pair for blocks that another thread frees (the producer's
 * mallocs, the consumer's remote frees). callgrind counts the inclusive
 * instructions of the calls each loop makes (bench/callgrind_calls.py), so
 * the count needs nothing but these exported names: no debug information,
 * any compiler, any build type. The calls are made as users make them: TLS
 * through TLSDESC, calls within the module.
 */
#if defined(FASTPATH_MIMALLOC)
/* The yardstick: the same loops over mimalloc bundled the way an extension
 * bundles it (libmimalloc-bundled.a linked with --exclude-libs,ALL). */
#include <mimalloc.h>
#define nsalloc_malloc mi_malloc
#define nsalloc_free   mi_free
#else
#include "nsalloc.h"
#endif

#define MODULE_API __attribute__((visibility("default"), noinline))

/* The loops themselves, inlined into each exported caller: the callers'
 * names are what tells the counts apart. */
static inline __attribute__((always_inline)) void malloc_loop(void **blocks, unsigned count,
                                                              size_t size) {
  for (unsigned i = 0; i < count; i++)
    blocks[i] = nsalloc_malloc(size);
}

static inline __attribute__((always_inline)) void free_loop(void **blocks, unsigned count) {
  for (unsigned i = 0; i < count; i++)
    nsalloc_free(blocks[i]);
}

MODULE_API void fastpath_mallocs(void **blocks, unsigned count, size_t size) {
  malloc_loop(blocks, count, size);
}

MODULE_API void fastpath_frees(void **blocks, unsigned count) {
  free_loop(blocks, count);
}

/* Producer -> consumer: the producer's mallocs (they collect the remote
 * frees, amortised) and the consumer's frees, every one remote. */
MODULE_API void fastpath_producer_mallocs(void **blocks, unsigned count, size_t size) {
  malloc_loop(blocks, count, size);
}

MODULE_API void fastpath_remote_frees(void **blocks, unsigned count) {
  free_loop(blocks, count);
}
