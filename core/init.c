/*
 * init.c - the copy's lifetime: one-time initialisation, fork, shutdown and
 * unload, and the identification record.
 */
#include "internal.h"

#if defined(NSALLOC_PRIVATE)
#define ID_VISIBILITY "hidden"
#else
#define ID_VISIBILITY "default"
#endif
#ifndef NSALLOC_TLS_NAME /* set by the build from the TLS model it selects */
#define NSALLOC_TLS_NAME "global-dynamic"
#endif

/* Identifies this copy in a binary, stripped or not (nsalloc-audit reads it). */
__attribute__((used)) static const char id_record[] =
    "NSALLOC-ID:1 prefix=" NSALLOC_PREFIX_STRING " version=" NSALLOC_VERSION_STRING
    " visibility=" ID_VISIBILITY " tls=" NSALLOC_TLS_NAME;

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

static void copy_init_once(void) {
  options_init();
  copy.key_live = prim_key_create(&copy.thread_key, thread_done);
  prim_atfork(fork_prepare, fork_parent, fork_child);
}

static void copy_init(void) {
  prim_once(&copy.once, copy_init_once);
}

void nsalloc_shutdown(void) {
  if (atomic_exchange(&copy.shut_down, true)) return;
  prim_lock(&copy.lock);
  if (copy.key_live) prim_key_delete(copy.thread_key);
  copy.key_live = false;
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

void nsalloc_unload(void) {
  nsalloc_shutdown();
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

/* Runs at dlclose() of the module holding this copy (and at exit): after it,
 * no thread-exit callback can reach this module's code. */
__attribute__((destructor)) static void copy_unload(void) {
  nsalloc_shutdown();
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
