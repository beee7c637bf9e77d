/* other_copy.c - compiled with NSALLOC_PREFIX=o_: see other_copy.h. */
#include "other_copy.h"

#include "nsalloc.h"

void *other_malloc(size_t size) {
  return nsalloc_malloc(size);
}
void *other_aligned_alloc(size_t alignment, size_t size) {
  return nsalloc_aligned_alloc(alignment, size);
}
void *other_realloc(void *p, size_t size) {
  return nsalloc_realloc(p, size);
}
void other_free(void *p) {
  nsalloc_free(p);
}
size_t other_usable_size(const void *p) {
  return nsalloc_usable_size(p);
}
bool other_owns(const void *p) {
  return nsalloc_owns(p);
}
