/*
 * stats.c - statistics. Counters that change only on slow paths are kept as
 * copy-wide atomics; block counts are computed on demand by walking pages, so
 * the fast paths pay nothing for them. A walk reads other threads' pages
 * only through atomic fields (relaxed): it is a snapshot, exact when the copy
 * is quiescent.
 */
#include "internal.h"

static void stats_page_bytes(ptrdiff_t delta) {
  size_t now = atomic_fetch_add(&copy.page_bytes, (size_t)delta) + (size_t)delta;
  size_t peak = relaxed_load(&copy.peak_page_bytes);
  while (now > peak && !atomic_compare_exchange_weak(&copy.peak_page_bytes, &peak, now)) {
  }
}

static void stats_committed(ptrdiff_t delta) {
  atomic_fetch_add(&copy.committed, (size_t)delta);
}

/* Add the live blocks of one segment; returns its page bytes. */
static size_t stats_add_segment(nsalloc_stats_t *out, segment_t *seg) {
  size_t page_bytes = 0;
  out->segments++;
  for (size_t i = 1; i < SLICE_COUNT; i++) {
    page_t *page = &seg->pages[i];
    uint8_t kind = relaxed_load(&page->kind);
    if (!kind) continue;
    size_t used = page_used_snapshot(page);
    size_t pending = page_pending_remote(page);
    size_t blocks = used > pending ? used - pending : 0;
    size_t block_size = relaxed_load(&page->block_size);
    out->pages++;
    out->in_use_blocks += blocks;
    out->in_use_bytes += blocks * block_size;
    page_bytes +=
        kind == PAGE_HUGE ? block_size : (size_t)relaxed_load(&page->slice_count) << SLICE_SHIFT;
  }
  return page_bytes;
}

void nsalloc_stats(nsalloc_stats_t *out) {
  copy_init();
  memset(out, 0, sizeof(*out));
  copy_lock();
  for (segment_t *seg = copy.segments; seg; seg = seg->copy_next)
    stats_add_segment(out, seg);
  for (heap_t *heap = copy.heaps; heap; heap = heap->next)
    out->heaps++;
  copy_unlock();
  out->abandoned_segments = relaxed_load(&copy.abandoned_count);
  out->page_bytes = relaxed_load(&copy.page_bytes);
  out->peak_page_bytes = relaxed_load(&copy.peak_page_bytes);
  out->committed_bytes = relaxed_load(&copy.committed);
  out->reserved_bytes = relaxed_load(&copy.reserved);
  out->os_maps = relaxed_load(&copy.os_maps);
  out->os_unmaps = relaxed_load(&copy.os_unmaps);
  out->purges = relaxed_load(&copy.purges);
  out->foreign_pointers = relaxed_load(&copy.foreign);
  out->forwarded = relaxed_load(&copy.forwarded);
  out->invalid_pointers = relaxed_load(&copy.invalid);
}

/* Call from the thread using the heap: its segment list is walked unlocked. */
void nsalloc_heap_stats(const nsalloc_heap_t *heap, nsalloc_stats_t *out) {
  memset(out, 0, sizeof(*out));
  if (!heap) heap = thread_heap();
  if (heap == &empty_heap) return;
  for (segment_t *seg = heap->segments; seg; seg = seg->heap_next) {
    out->page_bytes += stats_add_segment(out, seg);
    segment_lock(seg); /* the purger may be purging its free slices */
    out->committed_bytes += (size_t)__builtin_popcountll(~seg->decommitted & SLICES_ALL)
                            << SLICE_SHIFT;
    segment_unlock(seg);
    out->reserved_bytes += seg->size;
  }
  copy_lock();
  for (segment_t *seg = copy.segments; seg; seg = seg->copy_next)
    if (seg->kind == SEGMENT_HUGE && relaxed_load(&seg->heap) == heap) {
      out->page_bytes += stats_add_segment(out, seg);
      out->committed_bytes += seg->huge_extent;
      out->reserved_bytes += seg->size;
    }
  copy_unlock();
  out->peak_page_bytes = out->page_bytes;
  out->heaps = 1;
}
