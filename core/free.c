/*
 * free.c - giving blocks back.
 *
 * nsalloc_free's fast path serves the common case in a handful of
 * instructions: a block of this copy (segment map), freed by the thread that
 * owns its page, that is a block start (page_is_block_start) and not already
 * free (its tag). Everything else - NULL, foreign and invalid pointers,
 * frees from other threads, huge blocks, a page becoming empty - takes
 * free_checked().
 */
#include "internal.h"

/* Push onto the owner's local list. Caller: the page's owner (or the thread
 * using the page's first-class heap). */
static inline void free_local(segment_t *seg, page_t *page, block_t *block) {
  block->tag = (uintptr_t)page;
  block->next = page->local_free;
  page->local_free = block;
  if (unlikely(--page->used == 0)) page_retire_if_unused(relaxed_load(&seg->heap), page);
}

/* Push onto the page's thread_free list; notify the owner when the page is
 * parked (see page.c for why the segment stays valid meanwhile). */
static void free_remote(page_t *page, block_t *block) {
  block->tag = (uintptr_t)page;
  uintptr_t old = relaxed_load(&page->thread_free), desired;
  do {
    block->next = (block_t *)(old & TF_PTR_MASK);
    uintptr_t flags = (old & TF_FULL) ? TF_NOTIFYING : (old & TF_NOTIFYING);
    desired = ((old & ~(TF_PTR_MASK | TF_FULL | TF_NOTIFYING)) + TF_COUNT_ONE) | flags |
              (uintptr_t)block;
  } while (!atomic_compare_exchange_weak_explicit(&page->thread_free, &old, desired,
                                                  memory_order_release, memory_order_relaxed));
  if (!(old & TF_FULL)) return; /* not parked, or another free is notifying */
  segment_t *seg = segment_of(page);
  atomic_store(&seg->full_page_freed, 1);
  heap_t *heap = atomic_load(&seg->heap);
  if (heap) atomic_store(&heap->full_page_freed, 1);
  atomic_fetch_and(&page->thread_free, ~TF_NOTIFYING);
}

/* The general free: classifies p and routes it. `local_heap` is the heap the
 * caller is known to be using (heap_free), or NULL. */
static noinline void free_checked(void *p, heap_t *local_heap, enum api_op op) {
  if (!p) return;
  page_t *page;
  enum locate_result where = locate(p, &page);
  if (where == LOCATE_FOREIGN) {
    foreign_free(op, p);
    return;
  }
  if (where != LOCATE_OWN) {
    invalid_pointer(op, p, where);
    return;
  }
  if (relaxed_load(&page->kind) == PAGE_HUGE) {
    segment_huge_free(segment_of(page));
    return;
  }
  segment_t *seg = segment_of(page);
  if (relaxed_load(&page->owner) == thread_id() ||
      (local_heap && relaxed_load(&seg->heap) == local_heap))
    free_local(seg, page, p);
  else
    free_remote(page, p);
}

void nsalloc_free(void *p) {
  uintptr_t addr = (uintptr_t)p;
  size_t unit = addr >> SEGMENT_SHIFT;
  if (likely(unit < MAP_ENTRIES && relaxed_load(&segment_map[unit]) == 1)) {
    segment_t *seg = (segment_t *)(addr & ~(uintptr_t)SEGMENT_MASK);
    page_t *page = seg->page_of[(addr >> SLICE_SHIFT) & (SLICE_COUNT - 1)];
    block_t *block = p;
    if (likely(relaxed_load(&page->owner) == thread_id() && page_is_block_start(page, p) &&
               block->tag != (uintptr_t)page)) {
      free_local(seg, page, block);
      return;
    }
  }
  free_checked(p, NULL, OP_FREE);
}

void nsalloc_free_sized(void *p, size_t size) {
  (void)size; /* the page knows the size; nothing to gain from trusting the caller */
  free_checked(p, NULL, OP_FREE_SIZED);
}

void nsalloc_heap_free(nsalloc_heap_t *heap, void *p) { free_checked(p, heap, OP_HEAP_FREE); }
