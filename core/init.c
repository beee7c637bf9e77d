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
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .once = PTHREAD_ONCE_INIT,
};

/* The copy's lock. fork() in a multi-threaded process: the prepare handler
 * takes it, so the child never inherits it held by a thread that does not
 * exist there, and the parent and child handlers release it. Prepare handlers
 * registered before this copy's run after its own and may allocate (glibc
 * runs them in reverse order of registration): the forking thread, which then
 * holds the lock (fork_holder), passes through copy_lock() until the fork is
 * over. No other thread can be inside the lock meanwhile, and the forking
 * thread is not (fork() is not called from inside the copy). */
static void copy_lock(void) {
  if (relaxed_load(&copy.fork_holder) != thread_id()) pthread_mutex_lock(&copy.lock);
}
static void copy_unlock(void) {
  if (relaxed_load(&copy.fork_holder) != thread_id()) pthread_mutex_unlock(&copy.lock);
}

static void fork_prepare(void) {
  pthread_mutex_lock(&copy.lock);
  relaxed_store(&copy.fork_holder, thread_id());
}
static void fork_parent(void) {
  relaxed_store(&copy.fork_holder, 0);
  pthread_mutex_unlock(&copy.lock);
}
/* In the child only the forking thread exists. A remote free that was between
 * raising TF_NOTIFYING and clearing it (page.c) never finishes there, and the
 * page's owner would wait for it forever: finish it on the lost thread's
 * behalf. Page descriptors are read-only here and live in segment headers,
 * so even a page list another thread was changing at fork() is safe to walk. */
static void fork_child(void) {
  for (segment_t *seg = copy.segments; seg; seg = seg->copy_next) {
    size_t index = 1;
    for (page_t *page; seg->kind == SEGMENT_NORMAL && (page = segment_next_page(seg, &index));)
      if (relaxed_load(&page->thread_free) & TF_NOTIFYING) page_notify_owner(page);
  }
  relaxed_store(&copy.fork_holder, 0);
  pthread_mutex_unlock(&copy.lock);
}

static void copy_init_once(void) {
  options_init();
  copy.key_live = pthread_key_create(&copy.thread_key, thread_done) == 0;
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void copy_init(void) {
  pthread_once(&copy.once, copy_init_once);
}

void nsalloc_shutdown(void) {
  if (atomic_exchange(&copy.shut_down, true)) return;
  copy_lock();
  if (copy.key_live) pthread_key_delete(copy.thread_key);
  copy.key_live = false;
  segment_t *cached = copy.cache;
  copy.cache = NULL;
  copy.cache_count = 0;
  copy_unlock();
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
  copy_lock();
  unload_collect_unused(&unused);
  copy_unlock();
  while (unused) {
    segment_t *next = unused->list_next;
    segment_unmap(unused);
    unused = next;
  }
}

/* Initialise when the module is loaded, not at first use: a first use from
 * inside another library's fork prepare handler could not register the
 * copy's own fork handlers (the C library holds its handler list then). */
__attribute__((constructor)) static void copy_load(void) {
  copy_init();
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
