/*
 * os.c - memory from the operating system (through the platform seam,
 * prim/) or from a host-supplied source, with the copy's OS counters.
 */
#include "internal.h"

/* `size` bytes aligned to `alignment` (a power of two >= OS_PAGE). */
static void *os_alloc_aligned(size_t size, size_t alignment) {
  relaxed_store(&copy.os_used, true);
  if (copy.os_source.alloc) return copy.os_source.alloc(copy.os_source.ctx, size, alignment);
  void *p = prim_map_aligned(size, alignment);
  if (p) atomic_fetch_add(&copy.os_maps, 1);
  return p;
}

static void os_free(void *p, size_t size) {
  if (copy.os_source.alloc) {
    copy.os_source.free(copy.os_source.ctx, p, size);
    return;
  }
  prim_unmap(p, size);
  atomic_fetch_add(&copy.os_unmaps, 1);
}

/* Give the physical pages back; the range stays accessible and reads as zero.
 * Returns false when the memory cannot be purged (host-supplied source). */
static bool os_purge(void *p, size_t size) {
  if (copy.os_source.alloc) return false;
  prim_purge(p, size);
  atomic_fetch_add(&copy.purges, 1);
  return true;
}

static uint64_t now_ms(void) {
  return prim_now_ms();
}
