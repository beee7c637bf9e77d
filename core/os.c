/*
 * os.c - memory from the operating system (through the platform seam,
 * prim/prim.h) or from a host-supplied source; the clock.
 *
 * OS pages and OS_PAGE. OS_PAGE (4 KiB) is the core's own rounding and
 * carving unit; the OS page size is read at run time and may be larger
 * (16 KiB, 64 KiB). Every OS page size divides SLICE_SIZE for the default
 * and larger segment shifts, so slices, segments and their alignment are
 * whole OS pages. What needs the run-time size: mapping sizes are rounded up
 * to it here, huge objects are rounded to it (so a cached huge segment can be
 * purged whole), and a purge that does not cover whole OS pages
 * is refused (returns false, the caller keeps the range resident) rather than
 * rounded, since rounding would discard a neighbour's data.
 */
#include "internal.h"

#include <stdlib.h>

static _Atomic(size_t) os_page_cached;

/* The OS page size (read once). */
static size_t os_page_size(void) {
  size_t size = relaxed_load(&os_page_cached);
  if (unlikely(size == 0)) {
    size = prim_page_size();
    relaxed_store(&os_page_cached, size);
  }
  return size;
}

/* `size` bytes aligned to `alignment` (a power of two >= SEGMENT_SIZE). */
static void *os_alloc_aligned(size_t size, size_t alignment) {
  relaxed_store(&copy.os_used, true);
  if (copy.os_source.alloc) return copy.os_source.alloc(copy.os_source.ctx, size, alignment);
  size_t page = os_page_size();
  if (size > SIZE_MAX - page) return NULL;
  void *p = prim_map_aligned(align_up(size, page), alignment > page ? alignment : page);
  if (p) atomic_fetch_add(&copy.os_maps, 1);
  return p;
}

/* Advise a fresh range for transparent huge pages; host-supplied memory is
 * the host's to advise. Returns whether large pages may back it. */
static bool os_advise_huge_pages(void *p, size_t size) {
  return !copy.os_source.alloc && prim_hint_huge_pages(p, align_up(size, os_page_size()));
}

/* Whether a fresh segment gets the advice under a huge-page option's mode:
 * 0 never, 2 always, 1 once the copy has seen a second thread
 * (copy.multi_threaded). A single-threaded program keeps 4 KiB pages and its
 * resident set what it was: the advice makes memory resident 2 MiB at a
 * time, wherever a byte of it is touched. */
static bool os_huge_pages_wanted(nsalloc_option_t option) {
  long mode = copy_option(option);
  return mode == 2 || (mode == 1 && relaxed_load(&copy.multi_threaded));
}

/* A new huge segment, before its header is written (huge_pages): writing a
 * 20 MiB block then costs about 15 faults rather than 5,126. Not in a
 * single-threaded program by default: one that touches a big buffer
 * sparsely (xz's buffers) would hold it in 2 MiB units, the header's unit
 * of every block included. */
static void os_hint_huge_block(void *p, size_t size) {
  if (os_huge_pages_wanted(NSALLOC_OPTION_HUGE_PAGES)) (void)os_advise_huge_pages(p, size);
}

/* A fresh normal segment, before its header is written (a written page
 * would keep its first 2 MiB in 4 KiB pages; segment_huge_pages). Small
 * blocks are carved a page at a time, so without the advice every 4 KiB of
 * a segment is one fault: threads that churn through segments pay hundreds
 * per MiB, where a 2 MiB page is one. Returns whether large pages may back
 * it. */
static bool os_hint_normal_segment(void *p) {
  return os_huge_pages_wanted(NSALLOC_OPTION_SEGMENT_HUGE_PAGES) &&
         os_advise_huge_pages(p, SEGMENT_SIZE);
}

static void os_free(void *p, size_t size) {
  if (copy.os_source.alloc) {
    copy.os_source.free(copy.os_source.ctx, p, size);
    return;
  }
  prim_unmap(p, align_up(size, os_page_size()));
  atomic_fetch_add(&copy.os_unmaps, 1);
}

/* Can os_move succeed? Only on mapped memory of the copy's own, on Linux. */
static bool os_moves_pages(void) {
  return PRIM_MOVES_PAGES && !copy.os_source.alloc;
}

/* Move `size` bytes of pages from `src` to `dst` (prim_move's contract). When
 * they cannot move, `src` is unmapped all the same, its bytes first copied
 * when `keep` (a live block's): the caller has taken the range from the
 * segment that held it, so nothing else would give it back. When `dst` may
 * have been taken by another mapping, the copy stops: every way on would
 * write to memory that may be someone else's. */
static void os_move(void *dst, void *src, size_t size, bool keep) {
  enum prim_move_result result = prim_move(dst, src, size);
  if (result == PRIM_MOVE_DONE) return;
  if (result == PRIM_MOVE_LOST) {
    nsalloc_message("moving pages from " ADDRESS_FORMAT " to " ADDRESS_FORMAT
                    " failed, and the OS may have released the destination, which another "
                    "mapping may then hold; aborting",
                    (uintptr_t)src, (uintptr_t)dst);
    abort();
  }
  if (keep) memcpy(dst, src, size);
  prim_unmap(src, size);
}

/* Give the physical pages back; the range stays mapped (and reads as zero:
 * PRIM_PURGE_ZEROES).
 * Returns false when the memory is not purged: a host-supplied source, or a
 * range that is not whole OS pages (a 32 KiB slice on a 64 KiB-page kernel). */
static bool os_purge(void *p, size_t size) {
  size_t mask = os_page_size() - 1;
  if (copy.os_source.alloc || ((uintptr_t)p & mask) || (size & mask)) return false;
  if (!prim_purge(p, size)) return false;
  atomic_fetch_add(&copy.purges, 1);
  return true;
}
