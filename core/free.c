/*
 * free.c - giving blocks back.
 *
 * The fast path (live_block_page, an owner-key compare, then free_local or
 * the remote push) serves the common cases in a few dozen instructions: a
 * live block start of this copy (segment map, page, divisibility, tag), in a
 * page whose owner key is the caller's (the thread id for a default heap, the
 * heap's address for a first-class heap), or in another heap's page that is
 * not parked (free_fast). A parked page goes through free_block; only what
 * the fast check could not classify - NULL, foreign and invalid pointers,
 * huge blocks - takes the full free_checked().
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

/* The owner's free left `page` without allocated blocks, and the page is
 * not kept on its queue as it is (free_local, page->empty_slow): retire it
 * unless it is in use again. Out of line: it keeps the fast path's
 * registers. */
static noinline void free_local_emptied(page_t *page) {
  page_retire_if_unused(relaxed_load(&segment_of(page)->heap), page);
  purger_poll();
}

/* Push onto the local list. Caller: the thread using the page's heap;
 * `queued` when the page is known to be on its bin queue (in_full 0): a
 * page found through its owner key is (free_fast), since every page that
 * leaves its queue gets key 0 before its owner returns to its caller
 * (page_settle parks it; large pages are parked from birth; adoption and
 * heap_find_page settle at once). */
static inline void free_local(page_t *page, block_t *block, bool queued) {
  block->tag = (uintptr_t)page;
  block->next = page->local_free;
  page->local_free = block;
  uint32_t used = page_used(page) - 1;
  page_used_set(page, used);
  /* The only page of its bin, carved little, stays as it is (page.c): one
   * byte kept by the queue and the carving tells, without loading the heap.
   * A malloc/free pair in a loop empties it on every free. */
  uintptr_t off_queue = queued ? 0 : page->in_full;
  if (unlikely(used == 0) && (page->empty_slow | off_queue) != 0) free_local_emptied(page);
}

/* Push onto the page's thread_free list. A page that is parked (TF_FULL:
 * off its queue, page.c) must be brought back by its owner: with `notify`,
 * the push clears TF_FULL and notifies the owner (see page.c for why the
 * segment stays valid meanwhile); without, a parked page is left alone and
 * false returned, for the slow path (a parked page of the caller's own heap
 * is unparked there, not pushed onto). Inline: without `notify` it is the
 * tail of the fast path for a block of another heap, one CAS. */
static inline bool free_remote(page_t *page, block_t *block, bool notify) {
  /* Before the CAS publishes the block: once it does, the owner may take it
   * and clear the tag. */
  block->tag = (uintptr_t)page;
  uintptr_t pushed = thread_free_bits(page, block) + TF_COUNT_ONE; /* the new head, one more */
  uintptr_t old = relaxed_load(&page->thread_free), desired;
  do {
    if (!notify && (old & TF_FULL)) return false;
    block->next = thread_free_head(page, old);
    /* old less its head is the count and the flags (no other bit is ever
     * set); adding TF_FULL to it turns TF_FULL into TF_NOTIFYING, since the
     * two are never set together (TF_FULL is set only on an empty list,
     * TF_NOTIFYING only on a non-empty one, which the owner does not collect
     * while it is set: page.c). The count cannot carry out: it never exceeds
     * a page's block count. */
    uintptr_t head = old & TF_HEAD_MASK;
    /* Hides from the compiler that `head` is old masked, which it would
     * otherwise turn old - head back into a second mask (a 64-bit constant
     * to load): one instruction fewer. */
    __asm__("" : "+r"(head));
    desired = old + (notify ? old & TF_FULL : 0) + pushed - head;
  } while (!atomic_compare_exchange_weak_explicit(&page->thread_free, &old, desired,
                                                  memory_order_release, memory_order_relaxed));
  /* Without `notify`, old has no TF_FULL here (tested before the CAS). */
  if (notify && (old & TF_FULL))
    page_notify_owner(page); /* else: not parked, or another free notifies */
  return true;
}

/* Free the live block p of `page` for a caller using `local_heap` (its
 * default heap, or the heap of heap_free): locally when the page belongs to
 * that heap - a parked page going back on its queue first - else remotely. */
static void free_block(page_t *page, void *p, heap_t *local_heap) {
  if (relaxed_load(&segment_of(page)->heap) != local_heap) {
    free_remote(page, p, true);
    purger_poll(); /* a free into an exited thread's segment may be the first purge pending */
    return;
  }
  if (page->in_full && relaxed_load(&page->kind) == PAGE_BINNED) page_unpark(local_heap, page);
  free_local(page, p, false);
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
static noinline void free_slow_default(void *p, page_t *page, enum api_op op, void *forward_ctx) {
  free_slow(p, page, thread_heap(), op, forward_ctx);
}

/* The fast paths of a free by a caller whose pages carry the owner key
 * `key`: p is a live block start (live_block_page, checked once), and then
 *  - the page's owner key is `key`: the caller's heap owns the page, a local
 *    push;
 *  - else, unless the page has TF_FULL, a remote push, without asking which
 *    heap is the caller's (for the default heap, a TLS descriptor call).
 * A page of the caller's heap has another key only while it is parked (key
 * 0: binned pages off their queue, and large pages, parked from birth;
 * page.c, heap.c), and a parked page has TF_FULL until the first remote
 * free onto it clears it and notifies the owner. So a page without TF_FULL
 * and with another key is another heap's, or the caller's own parked page
 * already flagged for its owner's sweep (heap_sweep_full_pages): a push onto
 * its thread_free is collected by that sweep, as any remote free is. The key
 * and the setting of TF_FULL are the owner's alone: a key read just before
 * it changes is the old owner's, and a page parked after its word was read
 * makes the CAS fail and is seen on the retry.
 * Returns false, with *page_out p's page or NULL, when neither applies: NULL,
 * foreign, invalid and huge pointers, and pages with TF_FULL (of any heap),
 * which the slow path classifies and routes (the owner's own parked page is
 * unparked there; another heap's is pushed onto with the notify). */
static inline bool free_fast(void *p, uintptr_t key, page_t **page_out) {
  page_t *page = live_block_page(p);
  *page_out = page;
  if (unlikely(page == NULL)) return false;
  if (likely(fast_load(uintptr_t, &page->owner) == key)) {
    free_local(page, p, true);
    return true;
  }
  return free_remote(page, p, false);
}

/* free() on the default heap; `op` names the call in diagnostics. forward_ctx
 * NULL stands for the registered ctx, read only by the forward itself:
 * loading it here would cost the fast path an instruction. */
static force_inline void free_default(void *p, enum api_op op, void *forward_ctx) {
  page_t *page;
  if (unlikely(!free_fast(p, prim_thread_id(), &page))) free_slow_default(p, page, op, forward_ctx);
}

void nsalloc_free(void *p) {
  free_default(p, OP_FREE, NULL);
}

void nsalloc_forwarding_free(void *p, void *forward_ctx) {
  free_default(p, OP_FREE, forward_ctx);
}

void nsalloc_free_sized(void *p, size_t size) {
  (void)size; /* the page knows the size; nothing to gain from trusting the caller */
  free_default(p, OP_FREE_SIZED, NULL);
}

void nsalloc_heap_free(nsalloc_heap_t *heap, void *p) {
  page_t *page;
  if (unlikely(!free_fast(p, (uintptr_t)heap, &page))) free_slow(p, page, heap, OP_HEAP_FREE, NULL);
}
