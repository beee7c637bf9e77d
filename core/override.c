/*
 * override.c - the override library: the standard C allocation names on top
 * of one nsalloc copy, for LD_PRELOAD and whole-program benchmarks.
 *
 * Pointers this copy does not own (the dynamic loader's early blocks, blocks
 * from before a late preload) are forwarded to the C library's own allocator.
 */
#include <stddef.h>

void __libc_free(void *p);
void *__libc_realloc(void *p, size_t size);

static void libc_free(void *ctx, void *p) {
  (void)ctx;
  __libc_free(p);
}
static void *libc_realloc(void *ctx, void *p, size_t size) {
  (void)ctx;
  return __libc_realloc(p, size);
}
#define NSALLOC_DEFAULT_FORWARD                                                                    \
  { NULL, libc_free, libc_realloc, NULL }
#include "nsalloc.c"

#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t size) {
  return nsalloc_malloc(size);
}
EXPORT void *calloc(size_t count, size_t size) {
  return nsalloc_calloc(count, size);
}
EXPORT void *realloc(void *p, size_t size) {
  return nsalloc_realloc(p, size);
}
EXPORT void free(void *p) {
  nsalloc_free(p);
}
EXPORT void *aligned_alloc(size_t alignment, size_t size) {
  return nsalloc_aligned_alloc(alignment, size);
}
EXPORT void *memalign(size_t alignment, size_t size) {
  return nsalloc_memalign(alignment, size);
}
EXPORT int posix_memalign(void **out, size_t alignment, size_t size) {
  return nsalloc_posix_memalign(out, alignment, size);
}
EXPORT void *valloc(size_t size) {
  return nsalloc_memalign(os_page_size(), size);
}
EXPORT void *pvalloc(size_t size) {
  size_t page = os_page_size();
  return nsalloc_memalign(page, size ? align_up(size, page) : page);
}
EXPORT size_t malloc_usable_size(void *p) {
  return nsalloc_usable_size(p);
}
