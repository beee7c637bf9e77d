/*
 * purger.c - the copy's purger thread: gives back the free memory whose
 * purge delay has passed while the program does not call the copy (sleeps,
 * waits for input, computes in its own memory). Without it a purge that is
 * merely due waits for the program's next slow path, which an idle program
 * never takes.
 *
 * Lifetime. The thread starts lazily, the first time a purge is pending
 * (purger_poll, at points where the calling thread holds no lock of the
 * copy and its heap is consistent: starting a thread may allocate, from this
 * very copy when it is the override), so a copy that never frees never has
 * one. It sleeps on a condition variable until the copy's earliest purge
 * deadline (copy.purge_hint, below), or until woken when a nearer one appears
 * (purger_note). copy_shutdown() stops and joins it (nsalloc_shutdown,
 * nsalloc_unload, the module's destructor at dlclose and at exit): no
 * thread runs the module's code once it is unloaded. A fork() child has no
 * such thread, and starts none by itself: in the child of a multi-threaded
 * process POSIX allows only async-signal-safe calls until exec, and
 * ThreadSanitizer kills a child that creates a thread. The child purges from
 * its own calls (segment_cache_trim bounds its cache again) unless it sets
 * purge_thread=1, which allows a start again. It never starts in a copy with a host-supplied
 * memory source (os_purge gives nothing back there), with purge_thread=0, or
 * on Windows (prim_thread_start, windows.c).
 *
 * Its name is the copy's prefix followed by "purge" (demo_a_purge; Linux
 * shows the first 15 bytes): top, gdb and /proc tell which copy a thread
 * serves, and the tests count it by name (test_threads_named), unmixed
 * with the threads the host, the sanitizers or qemu run.
 *
 * What it purges: the cached and abandoned segments under the copy's lock
 * (first collecting the blocks other threads freed into abandoned ones:
 * segment_sweep_abandoned), and the free slices of every heap's normal
 * segments under each segment's slices_lock (segment_copy_purge), so an
 * owner that is claiming slices never has them purged under its feet.
 */
#include "internal.h"

#define PURGER_THREAD_NAME NSALLOC_PREFIX_STRING "purge"

/* IDLE: may start. STOPPING: one purger_stop() is joining it (a second
 * join of the same thread never returns). OFF: never starts (it failed to,
 * or this is a fork() child) until purge_thread is set to 1 again. */
enum purger_state { PURGER_IDLE, PURGER_STARTING, PURGER_RUNNING, PURGER_STOPPING, PURGER_OFF };

static struct {
  prim_lock_t lock; /* stop and the waits on `wake` */
  prim_cond_t wake; /* a nearer deadline, or stop */
  prim_thread_t thread;
  _Atomic(int) state; /* enum purger_state (read unlocked by purger_poll) */
  bool stop;
} purger = {.lock = PRIM_LOCK_INIT, .wake = PRIM_COND_INIT};

/* The copy's earliest purge deadline is a wake hint: prim_clock_ms() modulo
 * 2^32 (0 stands for none), so that it is a lock-free atomic on every target
 * (a 64-bit one takes libatomic calls on 32-bit MIPS or PowerPC). Hints are
 * compared as signed differences, which is exact while they lie within 2^31
 * ms of the clock; purger_note therefore never sets one more than
 * PURGE_HINT_HORIZON_MS ahead. A hint earlier than the true deadline costs a
 * pass that finds nothing due, and segment_copy_purge sets the next one from
 * the segments' own 64-bit deadlines. */
#define PURGE_HINT_HORIZON_MS ((uint64_t)1 << 30) /* 12.4 days */

static uint32_t purge_hint_of(uint64_t ms) {
  uint32_t hint = (uint32_t)ms;
  return hint ? hint : 1; /* 0 means none: a millisecond late instead */
}

/* Milliseconds until the hinted purge is due: 0 when it is, PRIM_WAIT_FOREVER
 * when there is none. */
static uint64_t purger_hint_wait(uint64_t now) {
  uint32_t hint = relaxed_load(&copy.purge_hint);
  if (!hint) return PRIM_WAIT_FOREVER;
  int32_t ahead = (int32_t)(hint - (uint32_t)now);
  return ahead > 0 ? (uint64_t)ahead : 0;
}

static void purger_main(void *unused) {
  (void)unused;
  prim_lock(&purger.lock);
  while (!purger.stop) {
    uint64_t now = prim_clock_ms(), wait = purger_hint_wait(now);
    if (wait == 0) {
      prim_unlock(&purger.lock);
      segment_copy_purge(false, now);
      prim_lock(&purger.lock);
    } else {
      prim_cond_wait_ms(&purger.wake, &purger.lock, wait);
    }
  }
  prim_unlock(&purger.lock);
}

/* May purger_start start the thread (the copy's side of it)? */
static bool purger_allowed(void) {
  return copy_option(NSALLOC_OPTION_PURGE_THREAD) && !copy.os_source.alloc &&
         !relaxed_load(&copy.shut_down);
}

static noinline void purger_start(void) {
  if (!purger_allowed()) return;
  prim_lock(&purger.lock);
  bool start = relaxed_load(&purger.state) == PURGER_IDLE;
  if (start) relaxed_store(&purger.state, PURGER_STARTING);
  prim_unlock(&purger.lock);
  if (!start) return; /* another thread (or this one, re-entered from pthread_create) starts it */
  bool started = prim_thread_start(&purger.thread, PURGER_THREAD_NAME, purger_main, NULL);
  prim_lock(&purger.lock);
  relaxed_store(&purger.state, started ? PURGER_RUNNING : PURGER_OFF);
  prim_unlock(&purger.lock);
}

/* Does the thread run, or will the next purger_poll start it (the copy's
 * first free: the purge it schedules is the first one pending)? Then what
 * is cached now is purged once its delay passed. A start that fails turns
 * the state OFF, and later calls answer false. */
static bool purger_running(void) {
  int state = relaxed_load(&purger.state);
  return state == PURGER_RUNNING || state == PURGER_STARTING ||
         (state == PURGER_IDLE && purger_allowed());
}

/* Start the purger when a purge is pending and it never ran. Call with no
 * lock of the copy held, after every path that may schedule the copy's first
 * purge: a free, malloc's slow path, realloc of a huge block, heap_destroy
 * and thread exit (core.idle_after_*: each of the last three once left an
 * idle program holding all it had released). */
static inline void purger_poll(void) {
  if (unlikely(relaxed_load(&purger.state) == PURGER_IDLE) && relaxed_load(&copy.purge_hint))
    purger_start();
}

/* Make `due` (a purge deadline, 0: none) count in the copy's earliest one;
 * wake the purger when that comes nearer. Any thread, any lock held but the
 * purger's own. */
static void purger_note(uint64_t due) {
  if (!due) return;
  uint64_t horizon = prim_clock_ms() + PURGE_HINT_HORIZON_MS;
  uint32_t hint = purge_hint_of(due < horizon ? due : horizon);
  uint32_t at = relaxed_load(&copy.purge_hint);
  do {
    if (at && (int32_t)(at - hint) <= 0) return;
  } while (!atomic_compare_exchange_weak(&copy.purge_hint, &at, hint));
  /* STARTING too: the new thread may already wait, for a hint it read
   * before this one (none at all: then without a timeout), and every later
   * hint, being later, would wake nobody (core.purger_start_wakes). */
  int state = relaxed_load(&purger.state);
  if (state != PURGER_RUNNING && state != PURGER_STARTING) return;
  prim_lock(&purger.lock);
  prim_cond_wake(&purger.wake);
  prim_unlock(&purger.lock);
}

/* Stop the thread and wait for it to return. Call with no lock of the copy
 * held: the thread may be waiting for the copy's lock. Any number of threads
 * may call it at once (purge_thread=0, nsalloc_shutdown, the destructor):
 * one joins the thread, the others wait until it has (core.purger_stops_once;
 * two joins of one thread hung the second for good). */
static void purger_stop(void) {
  prim_lock(&purger.lock);
  for (int state;
       (state = relaxed_load(&purger.state)) == PURGER_STARTING || state == PURGER_STOPPING;) {
    prim_unlock(&purger.lock);
    prim_yield();
    prim_lock(&purger.lock);
  }
  bool running = relaxed_load(&purger.state) == PURGER_RUNNING;
  if (running) {
    relaxed_store(&purger.state, PURGER_STOPPING);
    purger.stop = true;
    prim_cond_wake(&purger.wake);
  }
  prim_unlock(&purger.lock);
  if (!running) return;
  prim_thread_join(&purger.thread);
  prim_lock(&purger.lock);
  purger.stop = false;
  relaxed_store(&purger.state, PURGER_IDLE);
  prim_unlock(&purger.lock);
}

/* purge_delay_ms set from -1 to `delay` (no lock held). Slices freed while
 * it was -1 are due already but were never noted (segment_schedule_purge),
 * and a program that only freed then started no purger: a pass after the
 * new delay purges them. (Set to -1, passes purge nothing, whatever
 * deadlines are pending: segment_copy_purge.) */
static void purge_delay_resumed(long delay) {
  purger_note(prim_clock_ms() + (uint64_t)delay);
  purger_poll();
}

/* purge_thread set: 0 stops the thread; 1 allows a start again. */
static void purger_option_set(bool on) {
  if (!on) {
    purger_stop();
    return;
  }
  prim_lock(&purger.lock);
  if (relaxed_load(&purger.state) == PURGER_OFF) relaxed_store(&purger.state, PURGER_IDLE);
  prim_unlock(&purger.lock);
}

/* fork() child: the thread did not come along, and its lock and condition
 * variable may have been in use by it. */
static void purger_forget(void) {
  static const prim_lock_t lock_init = PRIM_LOCK_INIT;
  static const prim_cond_t cond_init = PRIM_COND_INIT;
  purger.lock = lock_init;
  purger.wake = cond_init;
  purger.stop = false;
  relaxed_store(&purger.state, PURGER_OFF);
}
