/*
 * heap.c - heaps: the thread default heap, first-class heaps, finding a page
 * for a request, thread exit (abandonment), adoption and collection.
 *
 * A heap owns normal segments. Only the thread using a heap touches its
 * queues, segment list and pages' local lists; other threads reach a heap's
 * pages only through thread_free and the full_page_freed flags. Heap
 * descriptors (a static pool, then metadata chunks) are recycled, never
 * unmapped, so a remote thread that raises a flag on a heap that has just been
 * deleted writes into a valid (if reused) descriptor: at worst one spurious
 * sweep.
 */
#include "internal.h"

#define META_CHUNK ((size_t)64 * 1024)

/* The heap of a thread that has not allocated yet: every bin is empty, so the
 * first malloc takes the slow path, which creates the real heap. */
#define UNUSED_4  &unused_page, &unused_page, &unused_page, &unused_page
#define UNUSED_16 UNUSED_4, UNUSED_4, UNUSED_4, UNUSED_4
_Static_assert(DIRECT_COUNT == 65, "empty_heap.direct: one initialiser per entry (ISO C)");
static heap_t empty_heap = {.direct = {UNUSED_16, UNUSED_16, UNUSED_16, UNUSED_16, &unused_page}};

/* The thread's default heap: this copy's own thread-local variable (its TLS
 * model is set on it by PRIM_TLS_ATTR: global-dynamic, initial-exec only by
 * the build's opt-in). It holds the heap's distance from empty_heap, so that
 * its initial value is zero: the module's TLS block has no initialisation
 * image (.tbss only), and a thread whose block is handed over zeroed, without
 * the image, still finds empty_heap, not NULL. Under TSan that happened: with
 * the module loaded and closed over and over (core.exit_race), threads read
 * NULL from a variable initialised to &empty_heap in 3 of 6 runs
 * (docs/architecture.md). Reading it costs one instruction more. */
static _Thread_local uintptr_t tls_heap_distance PRIM_TLS_ATTR;

static inline heap_t *thread_heap(void) {
  return (heap_t *)((uintptr_t)&empty_heap + tls_heap_distance);
}
static inline void thread_heap_set(heap_t *heap) {
  tls_heap_distance = (uintptr_t)heap - (uintptr_t)&empty_heap;
}

/* Heap descriptors come first from a static pool, which goes away with the
 * module when it is unloaded (threads' default heaps are still registered
 * then, so their descriptors cannot be returned one by one); only when more
 * than HEAP_POOL heaps are live at once do they come from mmap'd chunks. */
#define HEAP_POOL 256
static heap_t heap_pool[HEAP_POOL];

static heap_t *heap_descriptor_alloc(void) {
  heap_t *heap = copy.free_heaps;
  if (heap) {
    copy.free_heaps = heap->next;
    return heap;
  }
  if (copy.heap_pool_used < HEAP_POOL) return &heap_pool[copy.heap_pool_used++];
  if (copy.meta_end - copy.meta_bump < (ptrdiff_t)sizeof(heap_t)) {
    void *chunk = prim_map_aligned(align_up(META_CHUNK, os_page_size()), os_page_size());
    if (!chunk) return NULL;
    copy.meta_bump = chunk;
    copy.meta_end = copy.meta_bump + META_CHUNK;
  }
  heap = (heap_t *)copy.meta_bump;
  copy.meta_bump += align_up(sizeof(heap_t), 64);
  return heap;
}

/* The first heap created on a thread other than the initial one marks the
 * copy multi-threaded (os_hint_normal_segment). The purger thread never
 * allocates, so it never counts; a host whose threads all allocate off the
 * initial thread (an Erlang scheduler) does. */
static heap_t *heap_create(uintptr_t owner) {
  if (!relaxed_load(&copy.multi_threaded) && !prim_in_initial_thread())
    relaxed_store(&copy.multi_threaded, true);
  copy_lock();
  heap_t *heap = heap_descriptor_alloc();
  if (heap) {
    memset(heap, 0, sizeof(*heap));
    for (size_t i = 0; i < DIRECT_COUNT; i++)
      heap->direct[i] = &unused_page;
    heap->owner = owner;
    heap->magic = HEAP_MAGIC;
    heap->next = copy.heaps;
    if (copy.heaps) copy.heaps->prev = heap;
    copy.heaps = heap;
  }
  copy_unlock();
  return heap;
}

/* Re-tag the huge segments of `heap` as belonging to `to` (NULL: nobody). */
static void heap_retag_huge(heap_t *heap, heap_t *to) {
  copy_lock();
  for (segment_t *seg = copy.segments; seg; seg = seg->copy_next)
    if (seg->kind == SEGMENT_HUGE && relaxed_load(&seg->heap) == heap)
      relaxed_store(&seg->heap, to);
  copy_unlock();
}

static void heap_descriptor_free(heap_t *heap) {
  copy_lock();
  if (heap->prev)
    heap->prev->next = heap->next;
  else
    copy.heaps = heap->next;
  if (heap->next) heap->next->prev = heap->prev;
  heap->magic = 0;
  heap->next = copy.free_heaps;
  copy.free_heaps = heap;
  copy_unlock();
}

static heap_t *heap_default(void) {
  heap_t *heap = thread_heap();
  if (likely(heap != &empty_heap)) return heap;
  copy_init();
  heap = heap_create(prim_thread_id());
  if (!heap) return NULL;
  /* Set first: joining may allocate (glibc's exit registration, under the
   * override), and that malloc must find this heap, not make another. */
  thread_heap_set(heap);
  copy_thread_join(heap);
  return heap;
}

/* Make `seg` (abandoned, or taken from a deleted heap) part of `heap`: every
 * page gets the new owner, is collected and settled (freed when empty, queued
 * when it has room, parked otherwise). Returns false when that emptied the
 * segment and released it: the caller must not touch it again. */
static bool heap_adopt_segment(heap_t *heap, segment_t *seg) {
  segment_link_heap(heap, seg);
  size_t index = 1;
  for (page_t *page; (page = segment_next_page(seg, &index)) != NULL;) {
    relaxed_store(&page->owner, heap->owner);
    page->in_full = 1; /* its old queue is gone */
    page->empty_slow &= (uint8_t)~EMPTY_LINKED;
    page_collect(page);
    if (page_settle(heap, page, true)) return false;
  }
  return true;
}

/* Bring parked pages that received remote frees back (flagged segments only,
 * or every segment when forced). */
static void heap_sweep_full_pages(heap_t *heap, bool force) {
  if (!force && !relaxed_load(&heap->full_page_freed)) return;
  atomic_store(&heap->full_page_freed, 0);
  for (segment_t *seg = heap->segments, *next; seg; seg = next) {
    next = seg->heap_next;
    if (!atomic_exchange(&seg->full_page_freed, 0) && !force) continue;
    size_t index = 1;
    for (page_t *page; (page = segment_next_page(seg, &index)) != NULL;) {
      if (!page->in_full || !page_pending_remote(page)) continue;
      page_collect(page);
      if (page_settle(heap, page, true)) break;
    }
  }
}

/* Collect every queued page; free the empty ones (force: the kept ones too,
 * and forget the spares). */
static void heap_collect_pages(heap_t *heap, bool force) {
  heap_sweep_full_pages(heap, force);
  if (force) page_spares_forget(heap, NULL);
  for (size_t bin = 0; bin < BIN_COUNT; bin++) {
    for (page_t *page = heap->bins[bin].first, *next; page; page = next) {
      next = page->next;
      page_collect(page);
      if (page_used(page) != 0) continue;
      if (force) {
        page_queue_remove(heap, page);
        segment_page_free(heap, page);
      } else {
        page_retire_if_unused(heap, page);
      }
    }
  }
  if (force) segment_release_kept(heap);
}

/* Purge what is due in the heap's own segments, and in the copy's cached
 * and abandoned ones (force: everything free). */
static void heap_purge_due(heap_t *heap, bool force) {
  if (!force && copy_option(NSALLOC_OPTION_PURGE_DELAY_MS) < 0) return; /* nothing goes back */
  uint64_t now = prim_clock_ms();
  if (force || (heap->purge_at_ms && now >= heap->purge_at_ms)) {
    heap->purge_at_ms = 0;
    for (segment_t *seg = heap->segments; seg; seg = seg->heap_next) {
      segment_lock(seg);
      segment_purge(seg, force, now);
      uint64_t due = seg->purge_at_ms;
      segment_unlock(seg);
      if (due && (!heap->purge_at_ms || due < heap->purge_at_ms)) heap->purge_at_ms = due;
    }
  }
  if (force || purger_hint_wait(now) == 0) segment_copy_purge(force, now);
}

/* Thread exit: return what is free, hand the rest to the copy. Every page
 * left holds live blocks and is parked (owner key 0, TF_FULL), as large
 * pages are from birth: the first free of one of its blocks, which can only
 * come from another thread now, notifies, and the purger collects the page
 * (segment_sweep_abandoned). Blocks freed after the exit would otherwise stay
 * resident until some thread adopted the segment. Runs as the copy's pthread
 * key destructor, with the heap as the key's value. */
static void heap_abandon(heap_t *heap) {
  heap_collect_pages(heap, true);
  for (size_t bin = 0; bin < BIN_COUNT; bin++)
    for (page_t *page; (page = heap->bins[bin].first) != NULL;) {
      page_queue_remove(heap, page);
      page_settle(heap, page, false);
    }
  for (segment_t *seg = heap->segments, *next; seg; seg = next) {
    next = seg->heap_next;
    segment_abandon(seg);
  }
  heap->segments = NULL;
  heap_retag_huge(heap, NULL);
  heap_descriptor_free(heap);
}

static void thread_done(void *value) {
  if (!copy_exit_begin()) return; /* the copy is being released, with this heap */
  heap_abandon(value);
  thread_heap_set(&empty_heap);
  purger_poll(); /* before copy_exit_end: an unload waits for this start, then joins it */
  copy_exit_end();
}

/* A page of `bin` with a free block: the queue's pages are collected in turn
 * (pages found full leave the queue), else a fresh page. */
static page_t *heap_find_page(heap_t *heap, size_t bin) {
  for (page_t *page = heap->bins[bin].first, *next; page; page = next) {
    next = page->next;
    page_collect(page);
    if (page->free || page_extend(page)) {
      if (heap->bins[bin].first != page) {
        page_queue_remove(heap, page);
        page_queue_push_front(heap, page);
      }
      return page;
    }
    page_queue_remove(heap, page);
    page->in_full = 1;
    page_settle(heap, page, true);
    if (!page->in_full) return page; /* a remote free slipped in: it is queued again */
  }
  page_t *spare = page_spare_take(heap, bin);
  if (spare) return spare;
  size_t block_size = bin_block_size(bin);
  page_t *page = segment_page_alloc(heap, block_size <= SMALL_PAGE_MAX ? 1 : MEDIUM_SLICES, 1);
  if (!page) return NULL;
  page_init(page, block_size, bin, heap->owner);
  page_extend(page);
  page_queue_push_front(heap, page);
  return page;
}

/* A single-block page spanning whole slices, aligned to `alignment`. Large
 * pages never sit on a queue: they are born in_full. */
static page_t *heap_large_page(heap_t *heap, size_t size, size_t alignment) {
  size_t slices = size ? align_up(size, SLICE_SIZE) >> SLICE_SHIFT : 1;
  size_t align_slices = alignment > SLICE_SIZE ? alignment >> SLICE_SHIFT : 1;
  page_t *page = segment_page_alloc(heap, slices, align_slices);
  if (!page) return NULL;
  page_init(page, slices << SLICE_SHIFT, BIN_COUNT, heap->owner);
  page->in_full = 1;
  relaxed_store(&page->thread_free, TF_FULL);
  relaxed_store(&page->owner, 0); /* parked from birth: frees take the checked path */
  page_extend(page);
  return page;
}

/* Everything malloc's fast path does not serve. With `zero`, the block comes
 * back zeroed (calloc): memory that never held data since the OS last zeroed
 * it (fresh or purged slices of a large or huge block) is not written, so a
 * big calloc costs no time and stays out of the resident set. The size comes
 * first: malloc receives it in the first argument register, so its fast path
 * reaches this call without moving it. */
static noinline void *heap_malloc_slow(size_t size, heap_t *heap, size_t alignment, bool zero) {
  if (heap == &empty_heap)
    heap = heap_default();
  else if (unlikely(heap->magic != HEAP_MAGIC))
    diagnose(OP_MALLOC, heap, "invalid heap", true);
  if (unlikely(!heap || size > PTRDIFF_MAX)) {
    errno = ENOMEM;
    return NULL;
  }
  if (unlikely(heap->epoch != relaxed_load(&copy.epoch) || relaxed_load(&copy.shut_down)) &&
      heap->owner != (uintptr_t)heap) /* a default heap from before a shutdown */
    copy_thread_join(heap);
  heap_sweep_full_pages(heap, false);
  purger_poll();
  /* A due purge is looked for (a clock read) on every 64th slow path only. */
  if ((heap->purge_at_ms || relaxed_load(&copy.purge_hint)) && (++heap->slow_paths & 63) == 0)
    heap_purge_due(heap, false);
  size_t bin = BIN_COUNT;
  if (alignment <= MIN_ALIGN) {
    if (size <= MEDIUM_MAX) bin = bin_of(size);
  } else if (size <= MEDIUM_MAX && alignment <= SLICE_SIZE) { /* pages start on slices */
    bin = bin_for_alignment(size, alignment);
  }
  page_t *page;
  if (bin < BIN_COUNT)
    page = heap_find_page(heap, bin);
  else if (size <= LARGE_MAX && alignment <= LARGE_MAX)
    page = heap_large_page(heap, size, alignment);
  else
    page = segment_huge_alloc(heap, size, alignment);
  if (!page) {
    errno = ENOMEM;
    return NULL;
  }
  if (relaxed_load(&page->kind) == PAGE_HUGE) {
    if (zero && !page->untouched) memset(page->start, 0, size);
    return page->start;
  }
  block_t *block = page_take(page, page->free);
  /* A large page's one block: carving wrote only its header, next = NULL
   * and the tag just cleared, so an untouched page's block is all zero. */
  if (zero && !(page->untouched && relaxed_load(&page->kind) == PAGE_LARGE)) memset(block, 0, size);
  return block;
}

/* ---- first-class heap API ----------------------------------------------- */

static heap_t *heap_checked(const nsalloc_heap_t *heap, enum api_op op) {
  if (!heap || heap->magic != HEAP_MAGIC || !heap_is_first_class(heap))
    diagnose(op, heap, "not a live first-class heap", true);
  return (heap_t *)heap;
}

nsalloc_heap_t *nsalloc_heap_new(void) {
  copy_init();
  heap_t *heap = heap_create(0);
  if (heap) heap->owner = (uintptr_t)heap; /* the owner key of its pages */
  return heap;
}

void nsalloc_heap_delete(nsalloc_heap_t *heap) {
  heap_checked(heap, OP_HEAP_DELETE);
  heap_t *target = heap_default();
  if (!target) diagnose(OP_HEAP_DELETE, heap, "no default heap to migrate blocks to", true);
  page_spares_forget(heap, NULL);
  for (segment_t *seg = heap->segments, *next; seg; seg = next) {
    next = seg->heap_next;
    heap_adopt_segment(target, seg);
  }
  heap->segments = NULL;
  heap_retag_huge(heap, target);
  heap_descriptor_free(heap);
}

void nsalloc_heap_destroy(nsalloc_heap_t *heap) {
  heap_checked(heap, OP_HEAP_DESTROY);
  for (segment_t *seg = heap->segments, *next; seg; seg = next) {
    next = seg->heap_next;
    segment_drop(seg);
  }
  heap->segments = NULL;
  for (;;) { /* huge blocks: find one under the lock, free it outside */
    segment_t *huge = NULL;
    copy_lock();
    for (segment_t *seg = copy.segments; seg && !huge; seg = seg->copy_next)
      if (seg->kind == SEGMENT_HUGE && relaxed_load(&seg->heap) == heap &&
          relaxed_load(&seg->pages[1].kind) == PAGE_HUGE)
        huge = seg;
    copy_unlock();
    if (!huge) break;
    segment_huge_free(huge);
  }
  heap_descriptor_free(heap);
  purger_poll();
}

void nsalloc_heap_collect(nsalloc_heap_t *heap, bool force) {
  heap_collect_pages(heap_checked(heap, OP_HEAP_COLLECT), force);
  heap_purge_due(heap, force);
}

bool nsalloc_heap_owns(const nsalloc_heap_t *heap, const void *p) {
  segment_t *seg = segment_map_lookup(p);
  return seg && relaxed_load(&seg->heap) == heap;
}

void nsalloc_collect(bool force) {
  heap_t *heap = heap_default();
  if (!heap) return;
  if (force) /* adopt what exited threads left, so its free pages go back too */
    for (segment_t *seg; (seg = segment_reclaim()) != NULL;)
      heap_adopt_segment(heap, seg);
  heap_collect_pages(heap, force);
  heap_purge_due(heap, force);
}
