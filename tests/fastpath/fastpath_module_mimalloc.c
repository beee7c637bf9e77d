/*
 * fastpath_module_mimalloc.c - the loops of fastpath_module.c over mimalloc
 * bundled the way an extension bundles it (../shared/peers/<version>/
 * libmimalloc-bundled.a linked with --exclude-libs,ALL): the yardstick for
 * the counts in docs/performance.md, measured by the same fastpath_count.sh.
 */
#include <mimalloc.h>

#define MODULE_API __attribute__((visibility("default"), noinline))

MODULE_API void fastpath_mallocs(void **blocks, unsigned count, size_t size) {
  for (unsigned i = 0; i < count; i++)
    blocks[i] = mi_malloc(size);
}

MODULE_API void fastpath_frees(void **blocks, unsigned count) {
  for (unsigned i = 0; i < count; i++)
    mi_free(blocks[i]);
}
