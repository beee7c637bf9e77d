/*
 * override.c - the override library: the standard C allocation names on top
 * of one nsalloc copy, for LD_PRELOAD and whole-program benchmarks.
 *
 * Pointers this copy does not own (the dynamic loader's early blocks, blocks
 * from before a late preload) are forwarded to the C library's own allocator,
 * except a block of another nsalloc copy (a module's private copy), which
 * glibc would take for its own: that aborts, naming both copies (policy.c).
 */
#define _GNU_SOURCE 1 /* before the first system header: see nsalloc.c */
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>

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
/* glibc 2.36's memalign, which aligned_alloc aliases: alignments up to 16 are
 * malloc's, beyond SIZE_MAX / 2 + 1 are EINVAL, and any other alignment that is
 * not a power of two is rounded up to one. (The prefixed API rejects them with
 * EINVAL instead.) */
static void *glibc_memalign(size_t alignment, size_t size) {
  if (alignment <= MIN_ALIGN) return nsalloc_malloc(size);
  if (alignment > SIZE_MAX / 2 + 1) {
    errno = EINVAL;
    return NULL;
  }
  size_t rounded = MIN_ALIGN * 2;
  while (rounded < alignment)
    rounded <<= 1;
  return nsalloc_aligned_alloc(rounded, size);
}
EXPORT void *aligned_alloc(size_t alignment, size_t size) {
  return glibc_memalign(alignment, size);
}
EXPORT void *memalign(size_t alignment, size_t size) {
  return glibc_memalign(alignment, size);
}
EXPORT int posix_memalign(void **out, size_t alignment, size_t size) {
  return nsalloc_posix_memalign(out, alignment, size);
}
EXPORT void *valloc(size_t size) {
  return nsalloc_memalign(os_page_size(), size);
}
EXPORT void *pvalloc(size_t size) {
  size_t page = os_page_size(), rounded;
  if (__builtin_add_overflow(size, page - 1, &rounded)) {
    errno = ENOMEM;
    return NULL;
  }
  return nsalloc_memalign(page, size ? rounded & ~(page - 1) : page);
}
EXPORT size_t malloc_usable_size(void *p) {
  return nsalloc_usable_size(p);
}

/* ---- glibc's introspection and tuning, answered for this copy's memory ---- */
#if defined(__GLIBC__) /* struct mallinfo2 and friends are glibc's own */

/* All of nsalloc's memory is reported as the one "arena": system bytes are
 * the bytes that may be resident (committed), in-use bytes those of live
 * blocks. nsalloc has no separately mmap'd chunks, fastbins or top chunk, so
 * those fields are 0. Memory from before a late preload stays glibc's and is
 * not counted. */
EXPORT struct mallinfo2 mallinfo2(void) {
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  struct mallinfo2 info = {0};
  info.arena = stats.committed_bytes;
  info.uordblks = stats.in_use_bytes;
  info.fordblks = stats.committed_bytes - stats.in_use_bytes;
  return info;
}
/* The old interface: int fields, truncated as glibc truncates them. */
EXPORT struct mallinfo mallinfo(void) {
  struct mallinfo2 wide = mallinfo2();
  struct mallinfo info = {0};
  info.arena = (int)wide.arena;
  info.uordblks = (int)wide.uordblks;
  info.fordblks = (int)wide.fordblks;
  return info;
}
/* Returns free memory to the OS: the calling thread's empty pages and free
 * slices, the empty segment cache, and what exited threads left behind.
 * (Other live threads' free slices are purged by their own threads, after
 * purge_delay_ms.) 1 when memory was released, as glibc's. */
EXPORT int malloc_trim(size_t pad) {
  (void)pad; /* there is no heap top to keep padding at */
  uint64_t before = relaxed_load(&copy.purges) + relaxed_load(&copy.os_unmaps);
  nsalloc_collect(true);
  return relaxed_load(&copy.purges) + relaxed_load(&copy.os_unmaps) != before;
}
/* glibc's format, so that tools reading it keep working. */
EXPORT void malloc_stats(void) {
  struct mallinfo2 info = mallinfo2();
  fprintf(stderr,
          "Arena 0:\nsystem bytes     = %10zu\nin use bytes     = %10zu\n"
          "Total (incl. mmap):\nsystem bytes     = %10zu\nin use bytes     = %10zu\n"
          "max mmap regions = %10d\nmax mmap bytes   = %10d\n",
          info.arena, info.uordblks, info.arena, info.uordblks, 0, 0);
}
/* glibc's tunables (M_MMAP_THRESHOLD, M_ARENA_MAX, ...) describe a layout
 * nsalloc does not have: report every one as not applied (0), as mimalloc
 * does, rather than pretend. nsalloc's own options are in NSALLOC_OPTIONS. */
EXPORT int mallopt(int param, int value) {
  (void)param;
  (void)value;
  return 0;
}
#endif /* __GLIBC__ */
