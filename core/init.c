/*
 * init.c - the copy's lifetime: one-time initialisation, fork, shutdown and
 * unload, and the identification record.
 */
#include "internal.h"

#include <stdlib.h>

#if defined(NSALLOC_EXPORTS) && !defined(NSALLOC_PRIVATE)
#define ID_VISIBILITY "default"
#else
#define ID_VISIBILITY "hidden"
#endif

/* Identifies this copy in a binary, stripped or not (nsalloc-audit reads it). */
__attribute__((used)) static const char id_record[] =
    "NSALLOC-ID:1 prefix=" NSALLOC_PREFIX_STRING " version=" NSALLOC_VERSION_STRING
    " visibility=" ID_VISIBILITY " tls=" PRIM_TLS_NAME;

static copy_state_t copy = {
    .lock = PRIM_LOCK_INIT,
    .once = PRIM_ONCE_INIT,
};

/* fork() in a multi-threaded process: hold the copy's lock across it so the
 * child never inherits it locked by a thread that does not exist there. */
static void fork_prepare(void) {
  prim_lock(&copy.lock);
}
static void fork_parent(void) {
  prim_unlock(&copy.lock);
}
static void fork_child(void) {
  prim_unlock(&copy.lock);
}

/* Set when the process exits (an exit handler). At dlclose it is not set:
 * a module's destructors run before the exit handlers it registered (glibc
 * runs those from the module's own finaliser, after its destructors), and
 * where the order were the other way round the destructor would take the
 * conservative path below. */
static _Atomic(bool) process_exiting;

static void copy_at_exit(void) {
  relaxed_store(&process_exiting, true);
}

/* Once per process image: what outlives a shutdown. */
static void copy_init_once(void) {
  options_init();
  prim_atfork(fork_prepare, fork_parent, fork_child);
  atexit(copy_at_exit);
}

/* (Re)start the copy: a thread-exit key and a new epoch, so threads whose
 * heaps predate a shutdown register with the new key (copy_thread_join).
 * A copy shut down by its host (nsalloc_shutdown or nsalloc_unload) starts
 * again when used: on musl dlclose never unloads, so a reload reuses the
 * image. After the module's destructor it never does: the key's destructor
 * would point into unmapped code. */
static noinline void copy_start(void) {
  prim_once(&copy.once, copy_init_once);
  prim_lock(&copy.lock);
  if (!relaxed_load(&copy.running) && !copy.unloaded) {
    copy.key_live = prim_key_create(&copy.thread_key, thread_done);
    relaxed_store(&copy.epoch, relaxed_load(&copy.epoch) + 1);
    relaxed_store(&copy.shut_down, false);
    atomic_store_explicit(&copy.running, true, memory_order_release);
  }
  prim_unlock(&copy.lock);
}

static void copy_init(void) {
  if (unlikely(!atomic_load_explicit(&copy.running, memory_order_acquire))) copy_start();
}

/* Make the calling thread's default heap known to the current thread-exit
 * key, so its exit returns the heap's memory. */
static void copy_thread_join(heap_t *heap) {
  copy_init();
  prim_lock(&copy.lock);
  if (copy.key_live) prim_key_set(copy.thread_key, heap);
  heap->epoch = relaxed_load(&copy.epoch);
  prim_unlock(&copy.lock);
}

/* Delete the thread-exit key (no later thread exit calls into this module)
 * and unmap the cached segments. Static, and called by the destructor
 * directly: with several exported copies of one prefix in a process, the
 * public name may resolve to another copy. */
static void copy_shutdown(void) {
  prim_lock(&copy.lock);
  if (!relaxed_load(&copy.running)) {
    prim_unlock(&copy.lock);
    return;
  }
  if (copy.key_live) prim_key_delete(copy.thread_key);
  copy.key_live = false;
  relaxed_store(&copy.running, false);
  relaxed_store(&copy.shut_down, true);
  segment_t *cached = copy.cache;
  copy.cache = NULL;
  copy.cache_count = 0;
  prim_unlock(&copy.lock);
  while (cached) {
    segment_t *next = cached->list_next;
    segment_unmap(cached);
    cached = next;
  }
}

void nsalloc_shutdown(void) {
  copy_shutdown();
}

/* Detach every segment without a live block from its heap (or from the
 * abandoned list) onto `out`, and take its (empty) pages off the heap's
 * queues, so the copy stays consistent: a late free into a remaining segment
 * (a resource destructor after a NIF's unload) still works. Lock held; no
 * thread allocates from the copy any more, by contract. */
static void unload_collect_unused(segment_t **out) {
  for (heap_t *heap = copy.heaps; heap; heap = heap->next) {
    for (segment_t *seg = heap->segments, *next; seg; seg = next) {
      next = seg->heap_next;
      if (segment_has_live_blocks(seg)) continue;
      segment_unlink_heap(heap, seg);
      relaxed_store(&seg->heap, NULL);
      seg->list_next = *out;
      *out = seg;
    }
    for (size_t bin = 0; bin < BIN_COUNT; bin++)
      for (page_t *page = heap->bins[bin].first, *next; page; page = next) {
        next = page->next;
        if (!relaxed_load(&segment_of(page)->heap)) page_queue_remove(heap, page);
      }
  }
  for (segment_t **link = &copy.abandoned; *link;) {
    segment_t *seg = *link;
    if (segment_has_live_blocks(seg)) {
      link = &seg->list_next;
      continue;
    }
    *link = seg->list_next;
    atomic_fetch_sub(&copy.abandoned_count, 1);
    seg->list_next = *out;
    *out = seg;
  }
}

/* Return every segment without a live block (shutdown first). */
static void copy_release_unused(void) {
  copy_shutdown();
  segment_t *unused = NULL;
  prim_lock(&copy.lock);
  unload_collect_unused(&unused);
  prim_unlock(&copy.lock);
  while (unused) {
    segment_t *next = unused->list_next;
    segment_unmap(unused);
    unused = next;
  }
}

void nsalloc_unload(void) {
  copy_release_unused();
}

/* Runs at dlclose() of the module holding this copy, and at exit. At
 * dlclose no thread may run the module's code any more (the host's
 * contract), so the empty segments of every heap are returned, as
 * nsalloc_unload() does: threads that outlive the module would otherwise
 * keep them for good. At exit other threads may still be allocating from
 * the copy, so only the key is deleted and the cache unmapped. */
PRIM_MODULE_DESTRUCTOR static void copy_unload(void) {
  if (relaxed_load(&process_exiting))
    copy_shutdown();
  else
    copy_release_unused();
  prim_lock(&copy.lock);
  copy.unloaded = true;
  prim_unlock(&copy.lock);
}

const char *nsalloc_version(void) {
  return NSALLOC_VERSION_STRING;
}
const char *nsalloc_prefix(void) {
  return NSALLOC_PREFIX_STRING;
}

int nsalloc_set_os_source(const nsalloc_os_source_t *source) {
  if (!source || !source->alloc || !source->free) return EINVAL;
  if (relaxed_load(&copy.os_used)) return EBUSY;
  copy.os_source = *source;
  return 0;
}
