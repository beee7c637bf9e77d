/*
 * page.c - pages: carving blocks, collecting freed blocks, bin queues.
 *
 * A page has three free lists. `free` is what malloc pops. `local_free`
 * receives frees by the owner thread (no atomics). `thread_free` receives
 * frees from every other thread through a CAS push. Only the owner moves
 * blocks from the last two into `free` (page_collect), so `free` and
 * `local_free` are never touched concurrently.
 *
 * Pages with no block left to allocate leave their bin queue ("parked",
 * in_full) and carry TF_FULL in thread_free. The first remote free that
 * pushes onto a TF_FULL page clears TF_FULL and sets TF_NOTIFYING in the same
 * CAS, raises the segment's and the heap's full_page_freed flags so the owner
 * sweeps the page back, then clears TF_NOTIFYING. The owner never collects a
 * list while TF_NOTIFYING is set, and a page is freed only once all its blocks
 * are collected, so the notifying thread never touches a released segment.
 */
#include "internal.h"

static void page_init(page_t *page, size_t block_size, size_t bin, uintptr_t owner) {
  size_t count = relaxed_load(&page->slice_count);
  page->free = page->local_free = NULL;
  page->capacity = 0;
  page->reserved = (uint32_t)((count << SLICE_SHIFT) / block_size);
  /* floor(2^64 / block_size) + 1, so that E = block_size * M mod 2^64 >= 1
   * even for powers of two (see block_position()). */
  page->div_magic = UINT64_MAX / block_size + 1 + is_power_of_two(block_size);
  relaxed_store(&page->carved_limit, 0);
  page->bin = (uint8_t)bin;
  page->in_full = 0;
  page->empty_slow = 0;
  page->next = page->prev = NULL;
  relaxed_store(&page->thread_free, 0);
  page_used_set(page, 0);
  relaxed_store(&page->block_size, block_size);
  relaxed_store(&page->owner, owner);
  relaxed_store(&page->kind, bin < BIN_COUNT ? PAGE_BINNED : PAGE_LARGE);
}

/* Carve the next blocks (about one OS page worth, at least one) into `free`.
 * Carving lazily keeps untouched parts of a page out of the resident set,
 * and a page carved past its first extension and past PAGE_KEEP_CARVED is
 * not kept on its queue once empty (EMPTY_CARVED, page_retire_if_unused).
 * Carved blocks are tagged free (a free() of one is caught like a double
 * free), and carved_limit grows to cover them only once they are: until then
 * free() and usable_size() see them as unallocated. Returns false when the
 * page is fully carved. */
static bool page_extend(page_t *page) {
  size_t size = relaxed_load(&page->block_size);
  size_t count = size < OS_PAGE ? OS_PAGE / size : 1;
  if (count > page->reserved - page->capacity) count = page->reserved - page->capacity;
  if (count == 0) return false;
  uint8_t *first = page->start + (size_t)page->capacity * size;
  uint8_t *last = first + (count - 1) * size;
  block_t *block = (block_t *)first;
  for (uint8_t *next = first + size; (uint8_t *)block != last; next += size) {
    block->next = (block_t *)next;
    block->tag = (uintptr_t)page;
    block = (block_t *)next;
  }
  block->next = page->free;
  block->tag = (uintptr_t)page;
  page->free = (block_t *)first;
  page->capacity += (uint32_t)count;
  if (page->capacity > count && (size_t)page->capacity * size > PAGE_KEEP_CARVED)
    page->empty_slow |= EMPTY_CARVED;
  uint64_t stride = (uint64_t)size * page->div_magic;                    /* E of block_position() */
  relaxed_store(&page->carved_limit, (size_t)(page->capacity * stride)); /* <= the span */
  return true;
}

/* Takes `block`, the first block of page's free list (malloc). Owner only. */
static inline void *page_take(page_t *page, block_t *block) {
  page->free = block->next;
  page_used_set(page, page_used(page) + 1);
  block->tag = 0;
  return block;
}

/* Make blocks freed by other threads and by the owner allocatable. The
 * remote list becomes `free` itself when that is empty (the owner's frees stay
 * on local_free for the next collection), else it joins local_free; an empty
 * `free` then takes local_free. Owner only. */
static void page_collect(page_t *page) {
  uintptr_t old = atomic_load_explicit(&page->thread_free, memory_order_acquire);
  while (old & TF_HEAD_MASK) {
    if (old & TF_NOTIFYING) { /* a remote free is between its push and its notify */
      prim_yield();
      old = atomic_load_explicit(&page->thread_free, memory_order_acquire);
      continue;
    }
    if (!atomic_compare_exchange_weak_explicit(&page->thread_free, &old, old & TF_FULL,
                                               memory_order_acq_rel, memory_order_acquire))
      continue;
    block_t *head = thread_free_head(page, old);
    size_t count = old / TF_COUNT_ONE;
    page_used_set(page, page_used(page) - (uint32_t)count);
    if (!page->free) { /* the usual caller, malloc's slow path: no need to walk the list */
      page->free = head;
      return;
    }
    block_t *tail = head;
    for (size_t i = 1; i < count; i++)
      tail = tail->next;
    tail->next = page->local_free;
    page->local_free = head;
    break;
  }
  if (!page->free) {
    page->free = page->local_free;
    page->local_free = NULL;
  }
}

/* The second half of a remote free onto a parked page (TF_NOTIFYING set by
 * its CAS): raise the segment's and the heap's flags so the owner sweeps the
 * page back, then let the owner collect again. A segment on no heap is
 * abandoned (its thread exited): the purger is its owner for this
 * (segment_sweep_abandoned). */
static void page_notify_owner(page_t *page) {
  segment_t *seg = segment_of(page);
  atomic_store(&seg->full_page_freed, 1);
  heap_t *heap = atomic_load(&seg->heap);
  if (heap) atomic_store(&heap->full_page_freed, 1);
  atomic_fetch_and(&page->thread_free, ~TF_NOTIFYING);
  /* After the clear, which a sweep holding the copy's lock may be waiting
   * for: noting a pass touches no segment, only the copy's hint. */
  if (!heap) segment_abandoned_freed();
}

static size_t page_pending_remote(const page_t *page) {
  return relaxed_load(&page->thread_free) / TF_COUNT_ONE;
}

/* Keep heap->direct[] pointing at the first page of `bin` for every size the
 * direct table serves from that bin. */
static void heap_update_direct(heap_t *heap, size_t bin) {
  size_t size = bin_block_size(bin);
  if (size > DIRECT_MAX) return;
  page_t *first = heap->bins[bin].first;
  size_t lo = bin == 0 ? 0 : bin_block_size(bin - 1) / 16 + 1;
  for (size_t i = lo; i <= size / 16; i++)
    heap->direct[i] = first ? first : &unused_page;
}

/* EMPTY_LINKED is kept in step with the links, so that the free fast path
 * tests one byte, not both links: a page off its queue has it clear, and a
 * queued page has it while the queue holds another page too. */
static void page_queue_push_front(heap_t *heap, page_t *page) {
  page_queue_t *queue = &heap->bins[page->bin];
  page->prev = NULL;
  page->next = queue->first;
  if (queue->first) {
    queue->first->prev = page;
    queue->first->empty_slow |= EMPTY_LINKED;
    page->empty_slow |= EMPTY_LINKED;
  } else {
    queue->last = page;
  }
  queue->first = page;
  heap_update_direct(heap, page->bin);
}

/* Behind the others: a page coming back from parking has few free blocks, so
 * the page malloc is using now stays first. */
static void page_queue_push_back(heap_t *heap, page_t *page) {
  page_queue_t *queue = &heap->bins[page->bin];
  page->next = NULL;
  page->prev = queue->last;
  if (queue->last) {
    queue->last->next = page;
    queue->last->empty_slow |= EMPTY_LINKED;
    page->empty_slow |= EMPTY_LINKED;
  } else {
    queue->first = page;
  }
  queue->last = page;
  if (queue->first == page) heap_update_direct(heap, page->bin);
}

static void page_queue_remove(heap_t *heap, page_t *page) {
  page_queue_t *queue = &heap->bins[page->bin];
  page_t *prev = page->prev, *next = page->next;
  bool was_first = queue->first == page;
  if (prev) {
    prev->next = next;
    if (!next && !prev->prev) prev->empty_slow &= (uint8_t)~EMPTY_LINKED; /* alone now */
  } else {
    queue->first = next;
  }
  if (next) {
    next->prev = prev;
    if (!prev && !next->next) next->empty_slow &= (uint8_t)~EMPTY_LINKED;
  } else {
    queue->last = prev;
  }
  page->next = page->prev = NULL;
  page->empty_slow &= (uint8_t)~EMPTY_LINKED;
  if (was_first) heap_update_direct(heap, page->bin);
}

/* A parked binned page goes back on its queue, behind the others (it has, or
 * is about to get, a free block), and its owner key is restored, so local
 * frees take the fast path again. A remote free racing with the TF_FULL clear
 * merely notifies. (Large pages stay parked for life: their one block is all
 * they hold.) */
static void page_unpark(heap_t *heap, page_t *page) {
  page->in_full = 0;
  atomic_fetch_and(&page->thread_free, ~TF_FULL);
  relaxed_store(&page->owner, heap->owner);
  page_queue_push_back(heap, page);
}

/* Take an off-queue page and decide where it goes, given what was collected:
 * freed when empty, back on its queue when it can allocate and `requeue`,
 * else parked: TF_FULL set (retrying when a remote free slips in) and owner
 * key 0, so even the owner's frees take free_checked(), which unparks the
 * page. Returns true when freeing the page released its whole segment. Owner
 * only: the thread using `heap`, or for an abandoned segment (heap NULL, no
 * requeue) the holder of the copy's lock. */
static bool page_settle(heap_t *heap, page_t *page, bool requeue) {
  for (;;) {
    if (page_used(page) == 0) return segment_page_free(heap, page);
    if (requeue && relaxed_load(&page->kind) == PAGE_BINNED &&
        (page->free || page->capacity < page->reserved)) {
      page_unpark(heap, page);
      return false;
    }
    uintptr_t old = relaxed_load(&page->thread_free);
    if (!(old & TF_HEAD_MASK) &&
        atomic_compare_exchange_strong(&page->thread_free, &old, old | TF_FULL)) {
      page->in_full = 1;
      relaxed_store(&page->owner, 0);
      return false;
    }
    page_collect(page);
  }
}

/* The spare of `bin`, or NULL. A claim of its slices ends a spare without
 * clearing the pointer to its descriptor (segment_take_slices), which may
 * then describe a page claimed at the same slice, live or the spare of
 * another bin: a descriptor of another bin is no spare of this one, and one
 * of this bin is only while its slices' spare_of ids stay
 * (segment_spare_take). */
static page_t *page_spare_of(const heap_t *heap, size_t bin) {
  page_t *spare = heap->bins[bin].spare;
  return spare && spare->bin == bin ? spare : NULL;
}

/* Forget the spare of `bin`, if any: its slices stay free. */
static void page_spare_forget(heap_t *heap, size_t bin) {
  page_t *spare = page_spare_of(heap, bin);
  heap->bins[bin].spare = NULL;
  if (spare) segment_spare_forget(spare);
}

/* Forget every spare of `heap` whose slices are in `seg` (every spare: NULL),
 * before the segment leaves the heap (segment_unlink_heap) or the heap
 * gives its pages back (collect(true), thread exit, heap_delete). */
static void page_spares_forget(heap_t *heap, const segment_t *seg) {
  for (size_t bin = 0; bin < BIN_COUNT; bin++) {
    page_t *spare = heap->bins[bin].spare;
    if (spare && (!seg || segment_of(spare) == seg)) page_spare_forget(heap, bin);
  }
}

/* The bin's spare back on its queue with its free blocks, if its slices are
 * still free, unclaimed and resident (segment_spare_take), else NULL. Called
 * when the queue has no page that can allocate, before a new page is made. */
static page_t *page_spare_take(heap_t *heap, size_t bin) {
  page_t *page = page_spare_of(heap, bin);
  heap->bins[bin].spare = NULL; /* even stale: the page made next may reuse its descriptor */
  if (!page || !segment_spare_take(heap, page)) return NULL;
  page_collect(page);
  page_queue_push_front(heap, page);
  return page;
}

/* A page whose last block was just freed goes back to its segment, except the
 * only page of a bin: kept on its queue while it is carved little (empty_slow
 * 0), so that a malloc/free pair in a loop does not create and destroy a page
 * every time; else its slices go back but its blocks stay, as the bin's
 * spare (replacing an older one), which the bin's next page takes back
 * unless its slices were claimed or purged since. So an idle program keeps
 * at most PAGE_KEEP_CARVED resident per bin, and a bin filled and drained
 * in turn is neither carved nor faulted in again on every round.
 * nsalloc_collect(true) and thread exit release kept pages and forget
 * spares. Owner only. */
static void page_retire_if_unused(heap_t *heap, page_t *page) {
  if (page_used(page) != 0) return;
  if (!page->in_full) {
    if (!page->empty_slow) return;
    bool alone = !(page->empty_slow & EMPTY_LINKED);
    page_queue_remove(heap, page);
    if (alone) {
      page_spare_forget(heap, page->bin);
      heap->bins[page->bin].spare = page;
      segment_page_spare(heap, page);
      return;
    }
  }
  segment_page_free(heap, page);
}
