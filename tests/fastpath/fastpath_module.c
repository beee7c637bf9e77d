/*
 * fastpath_module.c - a loadable module with a private copy that exports two
 * loops: one only allocates, one only frees (small blocks, owning thread).
 * callgrind counts the inclusive instructions of the calls each loop makes
 * (bench/callgrind_calls.py), so the count needs nothing but these two
 * exported names: no debug information, any compiler, any build type. The
 * calls are made as users make them: TLS through TLSDESC, calls within the
 * module.
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

MODULE_API void fastpath_mallocs(void **blocks, unsigned count, size_t size) {
  for (unsigned i = 0; i < count; i++)
    blocks[i] = nsalloc_malloc(size);
}

MODULE_API void fastpath_frees(void **blocks, unsigned count) {
  for (unsigned i = 0; i < count; i++)
    nsalloc_free(blocks[i]);
}
