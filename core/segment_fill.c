/*
 * segment_fill.c - a new huge segment built out of the resident memory of
 * cached segments, so a program that frees and allocates big blocks of
 * changing sizes reuses the pages it already faulted in (os_moves_pages:
 * Linux).
 *
 * The unit of reuse is HUGE_UNIT (half a segment: 2 MiB by default). A huge
 * segment is a whole number of units (segment_huge_alloc), a normal segment
 * two; the pages of a unit are moved, not copied (prim_move: mremap), into
 * the same place in the new segment's fresh mapping.
 *
 * Why whole units. The kernel moves a range only when it lies in one
 * mapping (before Linux 6.17), and every move splits the mappings at its
 * ends. The invariant: in every segment of the copy, two mappings meet only
 * at a multiple of HUGE_UNIT from the segment's start. Fresh segments are
 * one mapping each (segments are SEGMENT_SIZE aligned, a multiple of the
 * unit); purges (madvise) and the huge-page advice over a whole segment
 * split nothing; a move takes one unit at a unit boundary to one at a unit
 * boundary. So each unit moved lies in a single mapping, and the moves
 * keep the invariant.
 *
 * Which memory (fill_select). Every resident cached segment with no more
 * units than still needed gives all of them and is no segment any more (its
 * unit 0, header included, moves too: the new segment's header is written
 * over it); the smallest resident huge segment with more units than needed
 * then gives the rest from its end and stays cached, smaller
 * (segment_shrink); purged segments that fit whole fill what is left. A
 * normal segment is never split: its header describes SEGMENT_SIZE.
 */
#include "internal.h"

/* At most this many segments feed one new segment; beyond, fresh pages. */
#define FILL_SOURCES 16

typedef struct fill_source_s {
  uint8_t *base;       /* the segment's start */
  size_t first, count; /* it gives its units [first, first + count) */
  bool whole;          /* all of them: it is no segment any more */
} fill_source_t;

/* Make a cached huge segment `size` bytes (fewer whole units; the units past
 * it are about to move away): the segment map, its signature, huge_extent
 * and the statistics forget them. Lock held. */
static void segment_shrink(segment_t *seg, size_t size) {
  size_t before = slices_bytes(seg, ~seg->decommitted & SLICES_ALL);
  segment_map_shrink(seg, size);
  atomic_fetch_sub(&copy.reserved, seg->size - size);
  seg->size = size;
  if (seg->huge_extent > size) seg->huge_extent = size;
  signature_write(seg);
  stats_committed(-(ptrdiff_t)(before - slices_bytes(seg, ~seg->decommitted & SLICES_ALL)));
}

/* Take into src[] the cached segments, `resident` ones or purged ones, of
 * at most `*need` units each (all their units), counting them off *need;
 * returns the new count of sources. Lock held. */
static size_t fill_take_whole(size_t *need, bool resident, fill_source_t *src, size_t n) {
  for (segment_t **link = &copy.cache; *link && *need && n < FILL_SOURCES - 1;) {
    segment_t *seg = *link;
    size_t have = seg->size / HUGE_UNIT;
    if (have > *need || resident != ((~seg->decommitted & SLICES_ALL) != 0)) {
      link = &seg->list_next;
      continue;
    }
    *link = seg->list_next;
    copy.cache_count--;
    segment_forget(seg);
    src[n++] = (fill_source_t){(uint8_t *)seg, 0, have, true};
    *need -= have;
  }
  return n;
}

/* Choose and take the cached memory for `units` units into src[]; returns
 * how many sources. The resident segments that fit whole first, then the
 * rest from the end of the smallest resident huge one that is larger. Last,
 * purged segments that fit whole: their units move as they are (no page to
 * fault in either way), and the cache sheds them instead of keeping a
 * header and a mapping for each until it ages out: a purged huge segment
 * serves no other request here but one of its exact size. Lock held. */
static size_t fill_select(size_t units, fill_source_t *src) {
  size_t need = units, n = fill_take_whole(&need, true, src, 0);
  segment_t *larger = NULL;
  for (segment_t *seg = copy.cache; seg && need; seg = seg->list_next)
    if (seg->kind == SEGMENT_HUGE && seg->size / HUGE_UNIT > need &&
        !(seg->decommitted & SLICES_ALL) && (!larger || seg->size < larger->size))
      larger = seg;
  if (larger) {
    size_t keep = larger->size / HUGE_UNIT - need;
    src[n++] = (fill_source_t){(uint8_t *)larger, keep, need, false};
    segment_shrink(larger, keep * HUGE_UNIT);
    need = 0;
  }
  n = fill_take_whole(&need, false, src, n);
  if (n) copy.cache_used_ms = prim_clock_ms();
  return n;
}

/* Move the resident pages of cached segments into `dest`, a fresh mapping
 * of `size` bytes (whole units) that is not a segment yet, from its first
 * unit on. Returns the units moved: 0 where pages do not move or no cached
 * segment is resident, when `dest` is still all fresh. */
static size_t segment_fill_from_cache(uint8_t *dest, size_t size) {
  if (!os_moves_pages()) return 0;
  fill_source_t src[FILL_SOURCES];
  copy_lock();
  size_t n = fill_select(size / HUGE_UNIT, src);
  copy_unlock();
  for (size_t i = 0; i < n; i++)
    if (src[i].whole) segment_uncount((segment_t *)src[i].base);
  /* The moves run without the lock: whole sources are no longer the copy's,
   * and a shrunk one's moved units lie past its size, which nobody else
   * touches (another fill may shrink it further, taking other units).
   * A whole source's units cover all of it (every segment is whole units),
   * so once they moved (or, failing, were unmapped: os_move) nothing of it
   * is left mapped. */
  size_t moved = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t u = src[i].first; u < src[i].first + src[i].count; u++)
      os_move(dest + moved++ * HUGE_UNIT, src[i].base + u * HUGE_UNIT, HUGE_UNIT, false);
  return moved;
}

/* realloc's growth of a huge block, which only the caller may touch. In
 * place while the segment's units hold the new size. Else, where pages
 * move, a new segment of the size asked whose first units are the old
 * segment's, moved: the block keeps its offset, so its bytes are neither
 * copied nor faulted in again (should a move fail, that unit is copied);
 * the rest is filled from the cache. NULL (the block untouched) elsewhere,
 * for a block aligned past its first slice, or when nothing is mapped. */
static page_t *segment_huge_grow(heap_t *heap, page_t *page, size_t size) {
  segment_t *old = segment_of(page);
  size_t offset = (size_t)(page->start - (uint8_t *)old);
  if (size > PTRDIFF_MAX - offset - SEGMENT_SIZE) return NULL;
  size_t usable = align_up(size, os_page_size()), total = offset + usable;
  if (total <= old->size) { /* segment_huge_fit counts the regrown tail as committed */
    segment_huge_fit(old, total);
    stats_page_bytes((ptrdiff_t)(usable - relaxed_load(&page->block_size)));
    relaxed_store(&page->block_size, usable);
    return page;
  }
  if (!os_moves_pages() || offset != SLICE_SIZE) return NULL;
  size_t size_new = align_up(total, HUGE_UNIT), size_old = old->size;
  uint8_t *dest = segment_map_fresh(size_new, SEGMENT_SIZE);
  if (!dest) return NULL;
  stats_page_bytes(-(ptrdiff_t)relaxed_load(&page->block_size));
  copy_lock();
  segment_forget(old);
  copy_unlock();
  segment_uncount(old);
  for (size_t u = 0; u < size_old / HUGE_UNIT; u++)
    os_move(dest + u * HUGE_UNIT, (uint8_t *)old + u * HUGE_UNIT, HUGE_UNIT, true);
  segment_fill_from_cache(dest + size_old, size_new - size_old);
  segment_t *seg = (segment_t *)dest;
  segment_register(seg, size_new, SEGMENT_HUGE, true);
  return segment_huge_page(heap, seg, offset, usable);
}
