/*
 * os.c - memory from the operating system (or from a host-supplied source).
 */
#include "internal.h"

#include <sys/mman.h>
#include <time.h>

/* No MAP_NORESERVE: like glibc's own mmap'd chunks, a request the kernel's
 * overcommit policy deems impossible (malloc(1 TiB) on a 24 GiB machine under
 * the default heuristic) fails here with ENOMEM instead of succeeding and
 * meeting the OOM killer later. */
static void *os_map(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  atomic_fetch_add(&copy.os_maps, 1);
  return p;
}

static void os_unmap(void *p, size_t size) {
  munmap(p, size);
  atomic_fetch_add(&copy.os_unmaps, 1);
}

/* `size` bytes aligned to `alignment` (a power of two >= OS_PAGE). */
static void *os_alloc_aligned(size_t size, size_t alignment) {
  relaxed_store(&copy.os_used, true);
  if (copy.os_source.alloc) return copy.os_source.alloc(copy.os_source.ctx, size, alignment);
  if (size > SIZE_MAX - alignment) return NULL;
  /* Over-allocate, then trim the misaligned head and the unused tail. */
  uint8_t *raw = os_map(size + alignment);
  if (!raw) return NULL;
  uint8_t *aligned = (uint8_t *)align_up((uintptr_t)raw, alignment);
  size_t head = (size_t)(aligned - raw), tail = alignment - head;
  if (head) munmap(raw, head);
  if (tail) munmap(aligned + size, tail);
  return aligned;
}

static void os_free(void *p, size_t size) {
  if (copy.os_source.alloc)
    copy.os_source.free(copy.os_source.ctx, p, size);
  else
    os_unmap(p, size);
}

/* Give the physical pages back; the range stays mapped and reads as zero
 * (Linux MADV_DONTNEED on private anonymous memory; callers rely on that, see
 * segment_t.decommitted). Returns false when the memory cannot be purged
 * (host-supplied source). */
static bool os_purge(void *p, size_t size) {
  if (copy.os_source.alloc) return false;
  madvise(p, size, MADV_DONTNEED);
  atomic_fetch_add(&copy.purges, 1);
  return true;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
