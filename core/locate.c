/*
 * locate.c - classify a pointer handed to free/realloc/usable_size.
 *
 * The segment map answers "is it this copy's?" without reading the pointer's
 * memory. Only for this copy's own memory does the classification go on to the
 * page: a valid pointer is the start of a carved block that is not free.
 */
#include "internal.h"

static enum locate_result locate(const void *p, page_t **page_out) {
  segment_t *seg = segment_map_lookup(p);
  if (!seg) return LOCATE_FOREIGN;
  if (seg->kind == SEGMENT_HUGE) {
    page_t *page = &seg->pages[1];
    if (relaxed_load(&page->kind) != PAGE_HUGE) return LOCATE_UNALLOCATED;
    if ((const uint8_t *)p != page->start) return LOCATE_INTERIOR;
    *page_out = page;
    return LOCATE_OWN;
  }
  page_t *page = seg->page_of[((uintptr_t)p - (uintptr_t)seg) >> SLICE_SHIFT];
  if (relaxed_load(&page->kind) == 0) return LOCATE_UNALLOCATED;
  uint64_t position = block_position(page, p);
  /* A large page's one block spans it, even when grown past its size at birth. */
  if (position >= page->div_magic || (position && relaxed_load(&page->kind) == PAGE_LARGE))
    return LOCATE_INTERIOR;
  /* A block position, but not carved yet (or the partial block at the end). */
  if (position >= relaxed_load(&page->carved_limit)) return LOCATE_UNALLOCATED;
  if (((const block_t *)p)->tag == (uintptr_t)page) return LOCATE_DOUBLE_FREE;
  *page_out = page;
  return LOCATE_OWN;
}

static size_t page_usable_size(const page_t *page) {
  return relaxed_load(&page->block_size);
}
