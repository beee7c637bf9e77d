/*
 * free.c - giving blocks back.
 *
 * The fast path (live_block_page, an owner-key compare, free_local) serves
 * the common case in a few dozen instructions: a live block start of this
 * copy (segment map, page, divisibility, tag), in a page whose owner key is
 * the caller's (the thread id for a default heap, the heap's address for a
 * first-class heap). A live block of another owner goes straight to the
 * remote free; only what the fast check could not classify - NULL, foreign
 * and invalid pointers, huge blocks - takes the full free_checked().
 */
#include "internal.h"

/* The page of p when p is a live block start in a binned or large page of
 * this copy, else NULL (then locate() tells what p is). The segment map is
 * read first, so a foreign p is rejected without touching its memory; then
 * one comparison rejects interior pointers, blocks not carved yet and the
 * page's partial tail (block_position()), before the tag is read. The
 * fields other threads write are read with fast_load() (internal.h). */
static inline page_t *live_block_page(const void *p) {
  uintptr_t addr = (uintptr_t)p;
  size_t unit = addr >> SEGMENT_SHIFT;
  if (unlikely(unit >= MAP_ENTRIES || fast_load(uint8_t, &segment_map[unit]) != 1)) return NULL;
  /* The segment from the map index, already in a register: one shift. The
   * empty asm hides that `unit` came from addr; otherwise the compiler
   * rebuilds the segment address from addr with a copy and a mask, one
   * instruction more on every free. */
  __asm__("" : "+r"(unit));
  segment_t *seg = (segment_t *)(unit << SEGMENT_SHIFT);
  page_t *page = seg->page_of[(addr >> SLICE_SHIFT) & (SLICE_COUNT - 1)];
  if (unlikely(block_position(page, p) >= fast_load(size_t, &page->carved_limit) ||
               ((const block_t *)p)->tag == (uintptr_t)page))
    return NULL;
  return page;
}

/* The owner's free left `page` without allocated blocks, and the page is not
 * the only one of its bin (free_local): retire it unless it is in use again.
 * Out of line: it keeps the fast path's registers. */
static noinline void free_local_emptied(page_t *page) {
  page_retire_if_unused(relaxed_load(&segment_of(page)->heap), page);
  purger_poll();
}

/* Push onto the local list. Caller: the thread using the page's heap. */
static inline void free_local(page_t *page, block_t *block) {
  block->tag = (uintptr_t)page;
  block->next = page->local_free;
  page->local_free = block;
  uint32_t used = page_used(page) - 1;
  page_used_set(page, used);
  /* The only page of its bin stays (page.c): a queued page without
   * neighbours is that page, which the links tell without loading the heap.
   * A malloc/free pair in a loop empties it on every free. */
  if (unlikely(used == 0) && (page->in_full || page->prev || page->next)) free_local_emptied(page);
}

/* Push onto the page's thread_free list; notify the owner when the page is
 * parked (see page.c for why the segment stays valid meanwhile). */
static void free_remote(page_t *page, block_t *block) {
  block->tag = (uintptr_t)page;
  uintptr_t head = thread_free_bits(page, block);
  uintptr_t old = relaxed_load(&page->thread_free), desired;
  do {
    block->next = thread_free_head(page, old);
    uintptr_t flags = (old & TF_FULL) ? TF_NOTIFYING : (old & TF_NOTIFYING);
    desired = ((old & ~(TF_HEAD_MASK | TF_FULL | TF_NOTIFYING)) + TF_COUNT_ONE) | flags | head;
  } while (!atomic_compare_exchange_weak_explicit(&page->thread_free, &old, desired,
                                                  memory_order_release, memory_order_relaxed));
  if (old & TF_FULL) page_notify_owner(page); /* else: not parked, or another free notifies */
}

/* Free the live block p of `page` for a caller using `local_heap` (its
 * default heap, or the heap of heap_free): locally when the page belongs to
 * that heap - a parked page going back on its queue first - else remotely. */
static void free_block(page_t *page, void *p, heap_t *local_heap) {
  if (relaxed_load(&segment_of(page)->heap) != local_heap) {
    free_remote(page, p);
    return;
  }
  if (page->in_full && relaxed_load(&page->kind) == PAGE_BINNED) page_unpark(local_heap, page);
  free_local(page, p);
}

/* The general free: classifies p with locate() and routes it. A foreign p
 * goes to the forward hooks with `forward_ctx`. */
static noinline void free_checked(void *p, heap_t *local_heap, enum api_op op, void *forward_ctx) {
  if (!p) return;
  page_t *page;
  enum locate_result where = locate(p, &page);
  if (where == LOCATE_FOREIGN)
    foreign_free(op, p, forward_ctx);
  else if (where != LOCATE_OWN)
    invalid_pointer(op, p, where);
  else if (relaxed_load(&page->kind) == PAGE_HUGE) {
    segment_huge_free(segment_of(page));
    purger_poll();
  } else
    free_block(page, p, local_heap);
}

/* Everything but the owner's fast path: `page` is p's page when the fast
 * check recognised a live block, else NULL. */
static noinline void free_slow(void *p, page_t *page, heap_t *local_heap, enum api_op op,
                               void *forward_ctx) {
  if (page)
    free_block(page, p, local_heap);
  else
    free_checked(p, local_heap, op, forward_ctx);
}

/* Out of line so that reaching the TLS heap costs the default free's fast
 * path no stack frame. */
static noinline void free_slow_default(void *p, page_t *page, void *forward_ctx) {
  free_slow(p, page, thread_heap(), OP_FREE, forward_ctx);
}

/* free() on the default heap. forward_ctx NULL stands for the registered
 * ctx, read only by the forward itself: loading it here would cost the fast
 * path an instruction. */
static inline void free_default(void *p, void *forward_ctx) {
  page_t *page = live_block_page(p);
  if (likely(page != NULL && fast_load(uintptr_t, &page->owner) == prim_thread_id()))
    free_local(page, p);
  else
    free_slow_default(p, page, forward_ctx);
}

void nsalloc_free(void *p) {
  free_default(p, NULL);
}

void nsalloc_forwarding_free(void *p, void *forward_ctx) {
  free_default(p, forward_ctx);
}

void nsalloc_free_sized(void *p, size_t size) {
  (void)size; /* the page knows the size; nothing to gain from trusting the caller */
  free_checked(p, thread_heap(), OP_FREE_SIZED, NULL);
}

void nsalloc_heap_free(nsalloc_heap_t *heap, void *p) {
  page_t *page = live_block_page(p);
  if (likely(page != NULL && fast_load(uintptr_t, &page->owner) == (uintptr_t)heap))
    free_local(page, p);
  else
    free_slow(p, page, heap, OP_HEAP_FREE, NULL);
}
