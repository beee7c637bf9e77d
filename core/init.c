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

/* The exit gate. A thread's exit runs thread_done (heap.c) from the C
 * library's key destructors, and it may do so while another thread runs the
 * module's last dlclose() or nsalloc_unload(): a host that closed its own
 * handles before its threads exit is within its rights. Releasing the copy's
 * memory under an exit that is walking its heap's segments would crash the
 * exit (or the release). So an exit goes through copy_exit_begin(), and a
 * release first closes the gate and waits for the exits already inside. The
 * two sides are a Dekker pair: each writes its own variable and then reads
 * the other's, both sequentially consistent, so at least one sees the other.
 * An exit turned away leaves its heap to the release, which returns its
 * unused segments like every other heap's.
 *
 * fork() waits at the same gate: a child forked in the middle of another
 * thread's abandonment would inherit a half-abandoned heap (a segment both on
 * the heap's list and on the abandoned list), so fork_prepare() holds new
 * exits back and waits for the ones inside before it takes the lock.
 * exit_in_progress marks the thread that is inside its own exit, so that a
 * fork() or a release from inside it (a host memory source's callback) does
 * not wait for itself.
 *
 * What no module can close: between the C library's check that the key is
 * still live and the call into thread_done, and between copy_exit_end() and
 * thread_done's return, the releasing thread may delete the key and the
 * loader unmap the module's code. That window is a few instructions, not the
 * whole of a heap's abandonment (docs/architecture.md, "Thread exits against
 * unloading", on why a loader pin does not close it). */
static _Thread_local bool exit_in_progress PRIM_TLS_ATTR;

static bool copy_exit_begin(void) {
  for (;;) {
    atomic_fetch_add(&copy.exits_inside, 1);
    if (atomic_load(&copy.exits_closed)) {
      atomic_fetch_sub(&copy.exits_inside, 1);
      return false;
    }
    if (atomic_load(&copy.forks_pending) == 0) break;
    atomic_fetch_sub(&copy.exits_inside, 1);
    while (atomic_load(&copy.forks_pending) != 0)
      prim_yield();
  }
  exit_in_progress = true;
  return true;
}

static void copy_exit_end(void) {
  exit_in_progress = false;
  atomic_fetch_sub(&copy.exits_inside, 1);
}

/* Wait until the only exit inside the gate, if any, is the calling thread's. */
static void copy_exits_drain(void) {
  while (atomic_load(&copy.exits_inside) != (size_t)exit_in_progress)
    prim_yield();
}

static void copy_exits_close(void) {
  atomic_store(&copy.exits_closed, true);
  copy_exits_drain();
}

/* The copy's lock. fork() in a multi-threaded process: the prepare handler
 * takes it, so the child never inherits it held by a thread that does not
 * exist there, and the parent and child handlers release it. Prepare handlers
 * registered before this copy's run after its own and may allocate (glibc
 * runs them in reverse order of registration): the forking thread, which then
 * holds the lock (fork_holder), passes through copy_lock() until the fork is
 * over. No other thread can be inside the lock meanwhile, and the forking
 * thread is not (fork() is not called from inside the copy). */
static void copy_lock(void) {
  if (relaxed_load(&copy.fork_holder) != prim_thread_id()) prim_lock(&copy.lock);
}
static void copy_unlock(void) {
  if (relaxed_load(&copy.fork_holder) != prim_thread_id()) prim_unlock(&copy.lock);
}

static void fork_prepare(void) {
  atomic_fetch_add(&copy.forks_pending, 1);
  copy_exits_drain();
  prim_lock(&copy.lock);
  relaxed_store(&copy.fork_holder, prim_thread_id());
}
static void fork_parent(void) {
  relaxed_store(&copy.fork_holder, 0);
  prim_unlock(&copy.lock);
  atomic_fetch_sub(&copy.forks_pending, 1);
}
/* In the child only the forking thread exists. A remote free that was between
 * raising TF_NOTIFYING and clearing it (page.c) never finishes there, and the
 * page's owner would wait for it forever: finish it on the lost thread's
 * behalf. Page descriptors live in segment headers, so even a page list
 * another thread was changing at fork() is safe to walk. The gate: the only
 * exit inside it is the forking thread's own, if any (fork_prepare drained
 * the others); a release that was waiting at it belongs to a thread the child
 * does not have, so a running copy's gate opens again (a copy already shut
 * down opens it when it starts again). */
static void fork_child(void) {
  atomic_store(&copy.forks_pending, 0);
  atomic_store(&copy.exits_inside, (size_t)exit_in_progress);
  if (relaxed_load(&copy.running)) atomic_store(&copy.exits_closed, false);
  purger_forget();
  for (segment_t *seg = copy.segments; seg; seg = seg->copy_next) {
    /* A thread the child does not have may have held it: what it was
     * changing belongs to a heap nobody uses again. */
    atomic_store(&seg->slices_lock, 0);
    size_t index = 1;
    for (page_t *page; seg->kind == SEGMENT_NORMAL && (page = segment_next_page(seg, &index));)
      if (relaxed_load(&page->thread_free) & TF_NOTIFYING) page_notify_owner(page);
  }
  relaxed_store(&copy.fork_holder, 0);
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
  prim_at_exit(copy_at_exit);
}

/* (Re)start the copy: a thread-exit key and a new epoch, so threads whose
 * heaps predate a shutdown register with the new key (copy_thread_join).
 * A copy shut down by its host (nsalloc_shutdown or nsalloc_unload) starts
 * again when used: on musl dlclose never unloads, so a reload reuses the
 * image. After the module's destructor it never does: the key's destructor
 * would point into unmapped code. */
static noinline void copy_start(void) {
  prim_once(&copy.once, copy_init_once);
  copy_lock();
  if (!relaxed_load(&copy.running) && !copy.unloaded) {
    copy.key_live = prim_key_create(&copy.thread_key, thread_done);
    relaxed_store(&copy.epoch, relaxed_load(&copy.epoch) + 1);
    relaxed_store(&copy.shut_down, false);
    atomic_store(&copy.exits_closed, false);
    atomic_store_explicit(&copy.running, true, memory_order_release);
  }
  copy_unlock();
}

static void copy_init(void) {
  if (unlikely(!atomic_load_explicit(&copy.running, memory_order_acquire))) copy_start();
}

/* Make the calling thread's default heap known to the current thread-exit
 * key, so its exit returns the heap's memory. */
static void copy_thread_join(heap_t *heap) {
  copy_init();
  copy_lock();
  if (copy.key_live) prim_key_set(copy.thread_key, heap);
  heap->epoch = relaxed_load(&copy.epoch);
  copy_unlock();
}

/* No later thread exit calls into this module (but see the window above
 * copy_exit_begin). */
static void copy_key_delete(void) {
  copy_lock();
  if (copy.key_live) prim_key_delete(copy.thread_key);
  copy.key_live = false;
  copy_unlock();
}

/* Delete the thread-exit key (no later thread exit calls into this module)
 * and unmap the cached segments. Static, and called by the destructor
 * directly: with several exported copies of one prefix in a process, the
 * public name may resolve to another copy. */
static void copy_shutdown(void) {
  purger_stop(); /* before the lock, which the purger may be waiting for */
  copy_key_delete();
  copy_lock();
  if (!relaxed_load(&copy.running)) {
    copy_unlock();
    return;
  }
  relaxed_store(&copy.running, false);
  relaxed_store(&copy.shut_down, true); /* segment_release caches nothing from now on */
  copy_unlock();
  segment_cache_drop();
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

/* Return every segment without a live block. The key goes first, so that no
 * exit enters the copy after the gate is drained: one that did (it began
 * during the purger's join, which lay between the two) was not waited for,
 * and was exposed to the unmap for as long as it ran inside the module.
 * Then the gate, then the shutdown, with no exit inside. */
static void copy_release_unused(void) {
  copy_key_delete();
  copy_exits_close();
  copy_shutdown();
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

void nsalloc_unload(void) {
  copy_release_unused();
}

/* Start when the module is loaded, not at first use: a first use from inside
 * another library's fork prepare handler could not register the copy's own
 * fork handlers (the C library holds its handler list then). */
PRIM_MODULE_CONSTRUCTOR static void copy_load(void) {
  copy_init();
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
  copy_lock();
  copy.unloaded = true;
  copy_unlock();
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
