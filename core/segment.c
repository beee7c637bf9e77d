/*
 * segment.c - segments: obtaining them, carving slices into pages, the empty
 * segment cache, purging, abandonment and reclaim.
 *
 * A normal segment belongs to one heap (seg->heap) and sits on that heap's
 * list and, unless full, on the heap's span list of its longest free run
 * (segment_page_alloc). Huge segments belong to no list but
 * the copy's; seg->heap only tags them for statistics and heap_destroy, and
 * any thread may free them. Every live segment (normal, huge, cached or
 * abandoned) is on copy.segments and registered in the segment map.
 */
#include "internal.h"

#define HEADER_BYTES align_up(sizeof(segment_t), OS_PAGE)

/* How long the purger waits before it tries again a segment whose owner was
 * changing its slices. */
#define PURGE_RETRY_MS 10

/* A cached segment stays resident while the cache is in use, but no longer
 * than this many purge delays after it was cached (segment_cache_expire). */
#define CACHE_HOLD_DELAYS 10

/* How many segments with a run long enough but no aligned start in it an
 * aligned request tries before it looks only where any segment fits
 * (segment_page_alloc). */
#define ALIGNED_MISFITS 8

/* The slices lock. A normal segment on a heap has two writers of its slice
 * state (free_slices, decommitted, purge_at_ms): the owner, which claims and
 * frees slices, and whoever purges its free slices - the owner itself, or
 * another thread in segment_copy_purge (the purger). Each holds the lock
 * while it reads and changes them, so no slice is purged between the
 * owner's claim and its first write. Held for a few instructions (or one
 * purge's madvise calls); the owner spins, the purger only tries. Segments
 * on no heap (cached, abandoned) are the copy's, under its lock. */
static void segment_lock(segment_t *seg) {
  while (atomic_exchange_explicit(&seg->slices_lock, 1, memory_order_acquire))
    prim_yield();
}
static bool segment_trylock(segment_t *seg) {
  return !atomic_exchange_explicit(&seg->slices_lock, 1, memory_order_acquire);
}
static void segment_unlock(segment_t *seg) {
  atomic_store_explicit(&seg->slices_lock, 0, memory_order_release);
}

/* Bytes covered by `mask` slices. A huge segment's body is one unit (bit 1)
 * that ends at huge_extent: a reused segment's tail past the block it now
 * holds was purged (segment_huge_fit). */
static size_t slices_bytes(const segment_t *seg, uint64_t mask) {
  if (seg->kind == SEGMENT_HUGE) return (mask & SLICES_ALL) ? seg->huge_extent - SLICE_SIZE : 0;
  return (size_t)__builtin_popcountll(mask) << SLICE_SHIFT;
}

/* The header of a segment just obtained from the OS (or the host's source).
 * `advised`: its memory was advised for huge pages (os_hint_normal_segment). */
static void segment_init_header(segment_t *seg, size_t size, enum segment_kind kind, bool advised) {
  memset(seg, 0, sizeof(*seg));
  for (size_t i = 0; i < SLICE_COUNT; i++)
    seg->page_of[i] = &unused_page;
  seg->size = seg->huge_extent = size;
  seg->kind = (uint8_t)kind;
  seg->free_slices = SLICES_ALL;
  /* Fresh mmap'd memory is not resident; host-supplied memory may be, and so
   * may advised memory: writing the header makes its first 2 MiB resident,
   * and any later first touch the 2 MiB around it, slices never claimed
   * included. Counted resident, every free slice is purged when due, so an
   * idle program still gives them back (the purge splits the large page).
   * The price: calloc zeroes a large block there, as in a reused slice. */
  seg->decommitted = !copy.os_source.alloc && !advised ? SLICES_ALL : 0;
  signature_write(seg);
}

/* Ready a cached segment for a new owner. Only its header needs resetting:
 * every way into the cache (segment_page_free of its last page,
 * segment_drop, segment_huge_free) has already given back each page, so
 * page_of[] names unused_page and every descriptor has kind 0, and page_init
 * or segment_huge_alloc rewrites a descriptor before it is used again. Its
 * size, kind, residency (decommitted) and place on copy.segments stay. (A
 * memset of the whole header, page descriptors included, would cost about a
 * thousand instructions on every reuse: a large malloc/free pair in a loop
 * empties and refills one segment each time.) Lock held. */
static void segment_reuse(segment_t *seg) {
  relaxed_store(&seg->heap, NULL);
  seg->heap_next = seg->heap_prev = seg->list_next = NULL;
  seg->free_slices = SLICES_ALL;
  seg->purge_at_ms = 0;
  relaxed_store(&seg->full_page_freed, 0);
}

/* A cached segment of the same kind, a fitting size and alignment, or NULL.
 * A normal segment must be exactly SEGMENT_SIZE: its header describes just
 * that much. Where pages move (os_moves_pages) a huge one must be exactly as
 * large and resident: any other resident memory in the cache is moved into
 * a new segment of the size asked (segment_fill_from_cache), and a purged
 * segment is no better than fresh memory. Elsewhere a huge one may be larger
 * than asked (segment_huge_fit purges the whole units it does not need): the
 * smallest resident one is taken first, since its pages need no new faults
 * and it leaves the least tail, else the smallest. Lock held. */
static segment_t *segment_cache_take(size_t size, size_t alignment, enum segment_kind kind) {
  bool exact = kind == SEGMENT_NORMAL || os_moves_pages();
  segment_t **best = NULL;
  bool best_resident = false;
  for (segment_t **link = &copy.cache; *link; link = &(*link)->list_next) {
    segment_t *seg = *link;
    bool resident = !(seg->decommitted & SLICES_ALL);
    if (seg->kind != kind || seg->size < size || (exact && seg->size != size) ||
        ((uintptr_t)seg & (alignment - 1)) || (kind == SEGMENT_HUGE && exact && !resident))
      continue;
    if (best &&
        (best_resident > resident || (best_resident == resident && seg->size >= (*best)->size)))
      continue;
    best = link;
    best_resident = resident;
    if (resident && exact) break; /* none is better */
  }
  if (!best) return NULL;
  segment_t *seg = *best;
  *best = seg->list_next;
  copy.cache_count--;
  return seg;
}

/* Make `size` bytes just mapped a segment of the copy: its header, the
 * statistics, copy.segments and the segment map. `filled`: some of its pages
 * were moved in (segment_fill.c), so it counts as resident, and dirty, up
 * to huge_extent = size; else it is fresh. */
static void segment_register(segment_t *seg, size_t size, enum segment_kind kind, bool filled) {
  /* Advised before the header is written: the header's first touch then
   * takes a large page too (os_hint_normal_segment, os_hint_huge_block). */
  bool advised = kind == SEGMENT_NORMAL && os_hint_normal_segment(seg);
  if (kind == SEGMENT_HUGE) os_hint_huge_block(seg, size);
  segment_init_header(seg, size, kind, advised);
  if (filled) seg->decommitted = 0;
  atomic_fetch_add(&copy.reserved, size);
  stats_committed((ptrdiff_t)(HEADER_BYTES + slices_bytes(seg, ~seg->decommitted & SLICES_ALL)));
  copy_lock();
  seg->copy_next = copy.segments;
  if (copy.segments) copy.segments->copy_prev = seg;
  copy.segments = seg;
  segment_map_set(seg);
  copy_unlock();
}

/* Unmap every cached segment; returns whether there was one. No lock held. */
static bool segment_cache_drop(void) {
  copy_lock();
  segment_t *cached = copy.cache;
  copy.cache = NULL;
  copy.cache_count = 0;
  copy_unlock();
  bool dropped = cached != NULL;
  while (cached) {
    segment_t *next = cached->list_next;
    segment_unmap(cached);
    cached = next;
  }
  return dropped;
}

/* Fresh memory for a segment. When the OS refuses it, the address space may
 * be full (a 32-bit process, RLIMIT_AS) of what the cache keeps mapped for
 * reuse: that goes back, and the OS is asked again, before the caller fails
 * with ENOMEM. No lock held. */
static void *segment_map_fresh(size_t size, size_t alignment) {
  void *p = os_alloc_aligned(size, alignment);
  if (!p && segment_cache_drop()) p = os_alloc_aligned(size, alignment);
  return p;
}

/* A segment of `size` bytes aligned to `alignment`, header initialised,
 * registered with the copy; from the cache when possible. */
static segment_t *segment_obtain(size_t size, size_t alignment, enum segment_kind kind) {
  copy_lock();
  segment_t *seg = segment_cache_take(size, alignment, kind);
  if (seg) { /* under the lock: the statistics walk reads headers */
    segment_reuse(seg);
    copy.cache_used_ms = prim_clock_ms();
  }
  copy_unlock();
  if (seg) return seg;
  seg = segment_map_fresh(size, alignment);
  if (!seg) return NULL;
  /* A huge segment at the usual alignment takes in the resident pages of
   * cached segments (its header is written into moved memory, if any). A
   * larger alignment places the block past unused units, not worth filling. */
  bool filled = kind == SEGMENT_HUGE && alignment <= SEGMENT_SIZE &&
                segment_fill_from_cache((uint8_t *)seg, size) > 0;
  segment_register(seg, size, kind, filled);
  return seg;
}

/* Return the resident free slices to the OS (force: now; else when due).
 * Caller: holds the segment's slices lock, or the copy's lock for a segment
 * on no heap. */
static void segment_purge(segment_t *seg, bool force, uint64_t now) {
  if (!force && (seg->purge_at_ms == 0 || now < seg->purge_at_ms)) return;
  /* Due: the deadline goes, even when the slices it was set for are in use
   * again and nothing is dirty now. A deadline left in the past would be
   * found due on every pass: the purger would spin. */
  seg->purge_at_ms = 0;
  uint64_t dirty = seg->free_slices & ~seg->decommitted, purged = 0;
  if (!dirty) return;
  if (seg->kind == SEGMENT_HUGE) {
    if (os_purge(slice_address(seg, 1), seg->huge_extent - SLICE_SIZE)) purged = dirty;
  } else {
    /* Each run is noted once it is purged, before the next may fail: a run
     * purged but not noted would read as resident and intact, and a spare
     * there would be taken back with zeroed free lists (page.c). */
    for (size_t i = 1; i < SLICE_COUNT;) {
      if (!(dirty >> i & 1)) {
        i++;
        continue;
      }
      size_t run = 1;
      while (i + run < SLICE_COUNT && (dirty >> (i + run) & 1))
        run++;
      if (!os_purge(slice_address(seg, i), run << SLICE_SHIFT)) {
        /* Linux zaps the run up to the page it refuses (one the program
         * mlock()ed) before it fails: what was there may be zero now. */
        seg->zapped |= slice_mask(i, run);
        break;
      }
      purged |= slice_mask(i, run);
      i += run;
    }
  }
  seg->decommitted |= purged;
  stats_committed(-(ptrdiff_t)slices_bytes(seg, purged));
}

/* Note that free slices of `seg` became resident garbage: purge them now, or
 * schedule it. The deadline moves on with every new free slice, so a segment
 * in use keeps its free slices resident and only one left alone for the
 * whole delay gives them back: a steady working set is not refaulted every
 * delay. Returns the deadline to note (0 when nothing is pending). With
 * purge_delay_ms=-1 the slices are marked due now but nothing is noted: no
 * pass purges while the option is -1, and once it is set to a delay again,
 * what was freed meanwhile goes back after that delay (purge_delay_resumed). */
static uint64_t segment_schedule_purge(segment_t *seg) {
  long delay = copy_option(NSALLOC_OPTION_PURGE_DELAY_MS);
  if (delay == 0) {
    segment_purge(seg, true, 0);
  } else if (delay < 0) {
    seg->purge_at_ms = prim_clock_ms();
    return 0;
  } else {
    seg->purge_at_ms = prim_clock_ms() + (uint64_t)delay;
  }
  return seg->purge_at_ms;
}

/* Take a segment off copy.segments and the segment map: no longer this
 * copy's, though still mapped. Lock held. */
static void segment_forget(segment_t *seg) {
  if (seg->copy_prev)
    seg->copy_prev->copy_next = seg->copy_next;
  else
    copy.segments = seg->copy_next;
  if (seg->copy_next) seg->copy_next->copy_prev = seg->copy_prev;
  segment_map_clear(seg);
}

/* Take a forgotten segment out of the copy's statistics and erase its
 * signature, before its memory goes (unmapped, or moved away). */
static void segment_uncount(segment_t *seg) {
  atomic_fetch_sub(&copy.reserved, seg->size);
  stats_committed(-(ptrdiff_t)(HEADER_BYTES + slices_bytes(seg, ~seg->decommitted & SLICES_ALL)));
  signature_erase(seg);
}

static void segment_unmap(segment_t *seg) {
  copy_lock();
  segment_forget(seg);
  copy_unlock();
  segment_uncount(seg);
  os_free(seg, seg->size);
}

/* Take the cached segments whose purge is due off the cache: the normal ones
 * onto *expired, to be unmapped, and the huge ones too where pages move
 * (os_moves_pages: a purged huge segment is only ever taken at its exact
 * size); elsewhere the huge ones are purged in place (segment_huge_fit
 * reuses a larger one's mapping). A forced pass
 * (collect(true)) purges every cached segment in place: it stays registered
 * and mapped, as a program that just collected may well allocate again. A normal
 * segment that sat in the cache for the whole purge delay is not worth its
 * mapping: its pages would fault in again anyway, and a purged segment still
 * keeps its header resident (two pages: 512 KiB for the 256 MiB an idle
 * program freed). The cache ages as a whole while it is in use: no cached
 * segment is due before the delay has passed since one was last put in or
 * taken out (copy.cache_used_ms), so a program that frees and allocates the
 * same bytes round after round takes them back resident however long a
 * round lasts - up to CACHE_HOLD_DELAYS delays after the segment was cached:
 * a program that takes one small segment now and then would otherwise keep
 * every other cached one resident for as long as it runs
 * (core.busy_cache_still_ages). Lock held. */
static void segment_cache_expire(bool force, uint64_t now, segment_t **expired) {
  uint64_t delay = (uint64_t)copy_option(NSALLOC_OPTION_PURGE_DELAY_MS);
  uint64_t busy_until = copy.cache_used_ms + delay;
  for (segment_t **link = &copy.cache; *link;) {
    segment_t *seg = *link;
    uint64_t due = seg->purge_at_ms; /* cached + delay */
    if (due && busy_until > due) {
      uint64_t held_until = due + (CACHE_HOLD_DELAYS - 1) * delay;
      due = busy_until < held_until ? busy_until : held_until;
    }
    if (!force && (!due || now < due)) {
      purger_note(due);
      link = &seg->list_next;
    } else if (!force && (seg->kind == SEGMENT_NORMAL || os_moves_pages())) {
      *link = seg->list_next;
      copy.cache_count--;
      seg->list_next = *expired;
      *expired = seg;
    } else {
      segment_purge(seg, true, now);
      link = &seg->list_next;
    }
  }
}

/* What other threads freed into abandoned segments since the last sweep.
 * Their pages are all parked (heap_abandon), so a free onto one notifies and
 * flags its segment. Each flagged segment's pages are collected: a page
 * whose blocks have all come back returns its slices, purged after the delay
 * like any free slice, and one still holding live blocks is parked again for
 * the next free. A segment left with no page goes onto *emptied, to be
 * released once the copy's lock is dropped. Copy's lock held: an abandoned
 * segment is the copy's until segment_reclaim takes it, so the holder of the
 * lock owns its pages. */
static void segment_sweep_abandoned(segment_t **emptied) {
  for (segment_t **link = &copy.abandoned; *link;) {
    segment_t *seg = *link;
    if (atomic_exchange(&seg->full_page_freed, 0)) {
      size_t index = 1;
      for (page_t *page; (page = segment_next_page(seg, &index)) != NULL;) {
        if (!page_pending_remote(page)) continue;
        page_collect(page);
        page_settle(NULL, page, false);
      }
      if (seg->free_slices == SLICES_ALL) {
        *link = seg->list_next;
        atomic_fetch_sub(&copy.abandoned_count, 1);
        seg->list_next = *emptied;
        *emptied = seg;
        continue;
      }
    }
    link = &seg->list_next;
  }
}

/* Purge the free slices of every segment that are due (all of them when
 * forced) and recompute the copy's earliest deadline: the cached
 * (segment_cache_expire) and abandoned segments, which nobody owns, under
 * the copy's lock (the abandoned ones after collecting what other threads
 * freed into them: segment_sweep_abandoned), and the normal segments of every heap under their
 * slices lock (a segment whose owner holds it is tried again shortly). The purger's pass, and any
 * thread's slow path once the copy's deadline passed. Walking copy.segments under the lock is safe:
 * a segment leaves it (segment_unmap) under the lock before it is unmapped. */
static void segment_copy_purge(bool force, uint64_t now) {
  segment_t *expired = NULL, *emptied = NULL;
  copy_lock();
  /* Sequentially consistent, like the flag exchanges of the sweep below and
   * the stores and notes of page_notify_owner: a notify whose flag this pass
   * misses notes its pass after this clear, never before it. */
  atomic_store(&copy.purge_hint, 0);
  if (!force && copy_option(NSALLOC_OPTION_PURGE_DELAY_MS) < 0) { /* nothing goes back */
    copy_unlock();
    return;
  }
  segment_cache_expire(force, now, &expired);
  segment_sweep_abandoned(&emptied);
  for (segment_t *seg = copy.abandoned; seg; seg = seg->list_next) {
    segment_purge(seg, force, now);
    purger_note(seg->purge_at_ms);
  }
  for (segment_t *seg = copy.segments; seg; seg = seg->copy_next) {
    if (seg->kind != SEGMENT_NORMAL || !atomic_load_explicit(&seg->heap, memory_order_acquire))
      continue;
    if (!segment_trylock(seg)) {
      purger_note(now + PURGE_RETRY_MS);
      continue;
    }
    segment_purge(seg, force, now);
    purger_note(seg->purge_at_ms);
    segment_unlock(seg);
  }
  copy_unlock();
  while (expired) {
    segment_t *next = expired->list_next;
    segment_unmap(expired);
    expired = next;
  }
  while (emptied) {
    segment_t *next = emptied->list_next;
    segment_release(emptied);
    emptied = next;
  }
}

/* Without a purger thread (purge_thread=0, Windows, a failed start, a fork()
 * child) nothing runs while a program is idle, so cached segments stay
 * resident, newest first, only up to a budget of one segment plus a quarter
 * of the bytes in use, and older ones are purged at once: that budget is
 * what a program that frees its memory and then sleeps keeps resident. It
 * grows with the live set, so a busy program's churn of whole segments (a
 * huge block replaced, threads handing memory on) reuses resident pages.
 * With the purger, cached segments age for the purge delay like every free
 * slice; that includes the copy's first free, after which the purger starts
 * (purger_running), so a block freed first is not purged at once. Lock
 * held. */
static void segment_cache_trim(void) {
  if (copy_option(NSALLOC_OPTION_PURGE_DELAY_MS) < 0 || purger_running()) return;
  size_t budget = SEGMENT_SIZE + relaxed_load(&copy.page_bytes) / 4, resident = 0;
  for (segment_t *seg = copy.cache; seg; seg = seg->list_next) {
    resident += slices_bytes(seg, ~seg->decommitted & SLICES_ALL);
    if (resident > budget) segment_purge(seg, true, 0);
  }
}

/* An empty segment (no pages, on no heap list) goes to the cache or back to
 * the OS. It stays registered while cached, so a stale pointer into it is
 * still recognised as this copy's (and reported as not allocated). Its pages
 * stay resident until the purge delay, like any free slice: a program that
 * empties and refills segments (a huge malloc/free pair, a burst of small
 * blocks, threads that come and go) takes them back without new faults.
 * Past segment_cache segments are unmapped, except with purge_delay_ms=-1,
 * which promises that nothing freed is ever given back. */
static void segment_release(segment_t *seg) {
  segment_lock(seg);
  relaxed_store(&seg->heap, NULL);
  seg->free_slices = SLICES_ALL;
  segment_unlock(seg);
  copy_lock();
  bool never_purge = copy_option(NSALLOC_OPTION_PURGE_DELAY_MS) < 0;
  bool cache =
      !relaxed_load(&copy.shut_down) &&
      (never_purge || copy.cache_count < (size_t)copy_option(NSALLOC_OPTION_SEGMENT_CACHE));
  if (cache) {
    seg->list_next = copy.cache;
    copy.cache = seg;
    copy.cache_count++;
    purger_note(segment_schedule_purge(seg));
    copy.cache_used_ms = prim_clock_ms();
    segment_cache_trim();
  }
  copy_unlock();
  if (!cache) segment_unmap(seg);
}

/* Bit i of the result: slices i .. i + count - 1 are all free (count >= 1).
 * Binary lifting: with A(n) the AND of free >> 0 .. free >> (n - 1), whose
 * bit i says a run of n free slices starts at i, A(a + b) = A(a) & (A(b) >>
 * a), and A(2n) = A(n) & (A(n) >> n); count's binary digits pick the powers
 * of two that add up to it. A dozen operations where testing each start
 * took up to 63 steps. */
static uint64_t run_starts(uint64_t free_slices, size_t count) {
  uint64_t starts = ~(uint64_t)0, power = free_slices; /* A(0) and A(1) */
  size_t length = 0;
  for (size_t bit = 1; bit <= count; bit <<= 1) {
    if (count & bit) {
      starts &= power >> length;
      length += bit;
    }
    power &= power >> bit; /* A(2 * bit) */
  }
  return starts;
}

/* The longest run of free slices, one run at a time from the lowest: a
 * segment's mask has few runs (one or two in the usual case), and the walk
 * stops once what is left above cannot hold a longer one. x + (x & -x)
 * carries through the lowest run and clears it (past bit 63 the carry is
 * dropped, leaving 0). */
static size_t longest_run(uint64_t free_slices) {
  size_t longest = 0;
  for (uint64_t x = free_slices; x;) {
    size_t start = (size_t)__builtin_ctzll(x);
    if (SLICE_COUNT - start <= longest) break;
    uint64_t above = ~(x >> start); /* zero only when the run reaches bit 63 from bit 0 */
    size_t length = above ? (size_t)__builtin_ctzll(above) : SLICE_COUNT;
    if (length > longest) longest = length;
    x &= x + (x & (~x + 1));
  }
  return longest;
}

/* First index >= 1, a multiple of `align` (a power of two), starting `count`
 * free slices, else 0. ~0 / (2^align - 1) has every align-th bit set. */
static force_inline size_t find_free_run(uint64_t free_slices, size_t count, size_t align) {
  if (align >= SLICE_COUNT) return 0;
  uint64_t multiples =
      (align == 1 ? ~(uint64_t)0 : ~(uint64_t)0 / (((uint64_t)1 << align) - 1)) & ~(uint64_t)1;
  uint64_t candidates = free_slices & multiples;
  if (!candidates) return 0;
  /* The usual case first: the lowest free candidate starts a long enough run
   * (count <= 32, so the mask is exact). */
  size_t first = (size_t)__builtin_ctzll(candidates);
  uint64_t want = slice_mask(first, count);
  if (first + count <= SLICE_COUNT && (free_slices & want) == want) return first;
  uint64_t starts = run_starts(free_slices, count) & multiples;
  return starts ? (size_t)__builtin_ctzll(starts) : 0;
}

/* File `seg` under `run`, its longest free run, or under none when 0. */
static void segment_span_insert(heap_t *heap, segment_t *seg, size_t run) {
  seg->span_run = (uint8_t)run;
  seg->span_prev = NULL;
  seg->span_next = NULL;
  if (!run) return;
  seg->span_next = heap->spans[run];
  if (seg->span_next) seg->span_next->span_prev = seg;
  heap->spans[run] = seg;
  heap->span_mask |= (uint64_t)1 << run;
}

static void segment_span_remove(heap_t *heap, segment_t *seg) {
  size_t run = seg->span_run;
  if (!run) return;
  if (seg->span_prev)
    seg->span_prev->span_next = seg->span_next;
  else if (!(heap->spans[run] = seg->span_next))
    heap->span_mask &= ~((uint64_t)1 << run);
  if (seg->span_next) seg->span_next->span_prev = seg->span_prev;
  seg->span_run = 0;
}

/* File `seg` again under `run`. Owner only. */
static void segment_span_refile(heap_t *heap, segment_t *seg, size_t run) {
  if (run == seg->span_run) return;
  segment_span_remove(heap, seg);
  segment_span_insert(heap, seg, run);
}

static void segment_link_heap(heap_t *heap, segment_t *seg) {
  /* Under the slices lock, which every purge of the segment holds: one
   * taken from a deleted heap (heap_delete) may be being purged right now
   * (a red-team program's TSan run caught this read racing segment_purge's
   * write; an abandoned segment's was ordered by the release below alone). */
  segment_lock(seg);
  uint64_t due = seg->purge_at_ms;
  segment_unlock(seg);
  /* No spare of the new heap is here yet: ids a former owner left (spares
   * whose pointers went stale) would only steer claims away. */
  memset(seg->spare_of, 0, sizeof seg->spare_of);
  seg->spare_slices = 0;
  atomic_store_explicit(&seg->heap, heap, memory_order_release);
  seg->heap_prev = NULL;
  seg->heap_next = heap->segments;
  if (heap->segments) heap->segments->heap_prev = seg;
  heap->segments = seg;
  segment_span_insert(heap, seg, longest_run(seg->free_slices));
  if (due && (!heap->purge_at_ms || due < heap->purge_at_ms)) heap->purge_at_ms = due;
}

static void segment_unlink_heap(heap_t *heap, segment_t *seg) {
  page_spares_forget(heap, seg); /* a spare ended by a claim is still pointed at */
  segment_span_remove(heap, seg);
  if (seg->heap_prev)
    seg->heap_prev->heap_next = seg->heap_next;
  else
    heap->segments = seg->heap_next;
  if (seg->heap_next) seg->heap_next->heap_prev = seg->heap_prev;
  seg->heap_next = seg->heap_prev = NULL;
}

/* Give the free slices [index, index + count) of `seg` to `page`. Returns
 * whether every one of them was decommitted, so reads as zero. */
static bool segment_take_slices(segment_t *seg, page_t *page, size_t index, size_t count) {
  uint64_t mask = slice_mask(index, count);
  segment_lock(seg);
  uint64_t fresh = seg->decommitted & mask; /* none when reused within the purge delay */
  bool untouched = PRIM_PURGE_ZEROES && fresh == mask;
  seg->free_slices &= ~mask;
  seg->zapped &= ~mask;
  if (fresh) {
    stats_committed((ptrdiff_t)slices_bytes(seg, fresh));
    seg->decommitted &= ~mask;
  }
  segment_unlock(seg);
  for (size_t i = index; i < index + count; i++) {
    seg->page_of[i] = page;
    seg->spare_of[i] = 0; /* a spare page's blocks here are overwritten */
  }
  seg->spare_slices &= ~mask;
  stats_page_bytes((ptrdiff_t)(count << SLICE_SHIFT));
  return untouched;
}

static page_t *segment_claim(segment_t *seg, size_t index, size_t count) {
  page_t *page = &seg->pages[index];
  page->slice_index = (uint8_t)index;
  relaxed_store(&page->slice_count, (uint8_t)count);
  page->start = slice_address(seg, index);
  page->untouched = segment_take_slices(seg, page, index, count);
  return page;
}

/* realloc's in-place growth: extend a large page to `count` slices when the
 * slices after it are free. Only the thread using the segment's heap (its
 * owner) may call this. The page keeps the div_magic and
 * carved_limit of its size at birth: its one block starts at offset 0, and
 * every other offset of the grown span still maps to a position at or above
 * carved_limit (block_position()), so no other thread's check can ever see
 * a block start there, whichever of these stores it observes. */
static bool segment_large_grow(page_t *page, size_t count) {
  segment_t *seg = segment_of(page);
  size_t index = page->slice_index, old = relaxed_load(&page->slice_count);
  if (index + count > SLICE_COUNT) return false;
  uint64_t more = slice_mask(index + old, count - old);
  if ((seg->free_slices & more) != more) return false;
  segment_take_slices(seg, page, index + old, count - old);
  relaxed_store(&page->slice_count, (uint8_t)count);
  relaxed_store(&page->block_size, count << SLICE_SHIFT);
  return true;
}

/* A page of `count` slices at a multiple of `align` slices from the heap's
 * segments, the first that holds it from the shortest span list long
 * enough, on slices that hold no spare's blocks unless `spares` (page.c:
 * a bin drained and filled again in turn then finds its spare intact).
 * A segment tried there in vain (its bound was stale) is refiled under its
 * true run, below `count`, so at alignment 1 each stale segment costs one
 * visit, and segments whose runs are all shorter are never visited (a heap
 * of thousands of segments each holding three 1.2 MiB blocks once walked
 * them all for every such block: quadratic). Short holes are filled before
 * long runs are split (best fit by longest run, whatever else the segment
 * holds, approximate while bounds are stale). An aligned request may find
 * a run long enough that holds no aligned start: a run of count + align - 1
 * always holds one, but a shorter one may not, so below that length it
 * tries at most ALIGNED_MISFITS such segments (a request that fits at only
 * one place per segment, taken in every segment already, once walked them
 * all: quadratic over a run of such requests), then only the lists where
 * any segment fits. */
static page_t *segment_heap_search(heap_t *heap, size_t count, size_t align, bool spares) {
  size_t fits_any = count + align - 1, misfits = 0;
  uint64_t runs = heap->span_mask >> count << count;
  while (runs) {
    size_t list = (size_t)__builtin_ctzll(runs);
    runs &= runs - 1;
    for (segment_t *seg = heap->spans[list], *next; seg; seg = next) {
      next = seg->span_next;
      uint64_t usable = spares ? seg->free_slices : seg->free_slices & ~seg->spare_slices;
      size_t index = find_free_run(usable, count, align);
      if (index) return segment_claim(seg, index, count);
      /* Its bound was stale, or its runs hold no aligned start (or only
       * spares): file it under its true run, on a list this search has
       * passed or is walking. */
      size_t run = longest_run(seg->free_slices);
      segment_span_refile(heap, seg, run);
      if (run >= count && list < fits_any && ++misfits == ALIGNED_MISFITS) {
        runs &= fits_any < SLICE_COUNT ? ~(uint64_t)0 << fits_any : 0;
        break;
      }
    }
  }
  return NULL;
}

/* A page of `count` slices starting at a multiple of `align` slices: from
 * the heap's segments (segment_heap_search: first where no spare is lost,
 * then where one is), else an abandoned segment (default heaps only), else
 * a new segment. The page still needs page_init().
 * A first-class heap never adopts an abandoned segment: the segment may hold
 * live blocks of the thread that exited, and nsalloc_heap_destroy() releases
 * a heap's segments wholesale, so a destroyable heap must only ever hold
 * blocks it allocated itself. */
static page_t *segment_page_alloc(heap_t *heap, size_t count, size_t align) {
  page_t *page = segment_heap_search(heap, count, align, false);
  if (!page) page = segment_heap_search(heap, count, align, true);
  if (page) return page;
  while (!heap_is_first_class(heap)) {
    segment_t *seg = segment_reclaim();
    if (!seg) break;
    if (!heap_adopt_segment(heap, seg)) continue; /* it was empty: released */
    size_t index = find_free_run(seg->free_slices, count, align);
    if (index) return segment_claim(seg, index, count);
  }
  segment_t *seg = segment_obtain(SEGMENT_SIZE, SEGMENT_SIZE, SEGMENT_NORMAL);
  if (!seg) return NULL;
  segment_link_heap(heap, seg);
  return segment_claim(seg, find_free_run(seg->free_slices, count, align), count);
}

/* Give a page's slices back to its segment; release the segment when empty.
 * Returns true when the segment itself was released. An abandoned segment
 * (heap NULL, the copy's lock held: segment_sweep_abandoned) is never
 * released here: it is on the copy's abandoned list, which its caller is
 * walking. */
static bool segment_page_free(heap_t *heap, page_t *page) {
  segment_t *seg = segment_of(page);
  size_t count = relaxed_load(&page->slice_count);
  for (size_t i = page->slice_index; i < page->slice_index + count; i++)
    seg->page_of[i] = &unused_page;
  relaxed_store(&page->kind, 0);
  relaxed_store(&page->owner, 0);
  stats_page_bytes(-(ptrdiff_t)(count << SLICE_SHIFT));
  segment_lock(seg);
  seg->free_slices |= slice_mask(page->slice_index, count);
  /* The heap's only segment stays on the heap when it empties (its slices
   * purged after the delay, like any free slice), as a bin keeps its last
   * page: a copy serving one large block at a time would otherwise hand the
   * segment to the cache and take it back on every malloc/free pair.
   * collect(true) and thread exit release it (heap_collect_pages(force):
   * segment_release_kept), heap_destroy drops it. */
  bool empty = heap && seg->free_slices == SLICES_ALL && (heap->segments != seg || seg->heap_next);
  uint64_t due = empty ? 0 : segment_schedule_purge(seg);
  segment_unlock(seg);
  if (empty) {
    segment_unlink_heap(heap, seg);
    segment_release(seg);
    return true;
  }
  if (heap) {
    /* Freed slices only lengthen runs: refile when the bound is exceeded
     * (never when it is the longest possible). */
    size_t run = seg->span_run < SLICE_COUNT - 1 ? longest_run(seg->free_slices) : 0;
    if (run > seg->span_run) segment_span_refile(heap, seg, run);
    if (due && (!heap->purge_at_ms || due < heap->purge_at_ms)) heap->purge_at_ms = due;
  }
  purger_note(due);
  return false;
}

/* Free a page's slices but keep its blocks, as its bin's spare (page.c):
 * to every other path the slices are free, so a claim may take them and the
 * purge decommit them, either of which ends the spare. */
static bool segment_page_spare(heap_t *heap, page_t *page) {
  segment_t *seg = segment_of(page);
  size_t head = page->slice_index, count = relaxed_load(&page->slice_count);
  for (size_t i = head; i < head + count; i++)
    seg->spare_of[i] = (uint8_t)(head + 1);
  seg->spare_slices |= slice_mask(head, count);
  return segment_page_free(heap, page);
}

/* Whether every slice of spare `page` still holds its blocks; with `end`,
 * no slice does afterwards (what another spare holds stays). */
static bool segment_spare_check(page_t *page, bool end) {
  segment_t *seg = segment_of(page);
  size_t head = page->slice_index, count = relaxed_load(&page->slice_count);
  bool intact = true;
  for (size_t i = head; i < head + count; i++) {
    if (seg->spare_of[i] != head + 1) {
      intact = false;
    } else if (end) {
      seg->spare_of[i] = 0;
      seg->spare_slices &= ~((uint64_t)1 << i);
    }
  }
  return intact;
}

/* The spare `page` is forgotten: its slices stay free, its blocks garbage. */
static void segment_spare_forget(page_t *page) {
  segment_spare_check(page, true);
}

/* Give a spare page its slices back, blocks and free lists as they were,
 * when nothing ended the spare: no claim took any of its slices since
 * (spare_of), so they are free and unwritten, and no purge decommitted or
 * zapped them (checked under the slices lock, which the purge holds).
 * Spanning fewer free slices never makes the segment's span bound stale.
 * Owner only. */
static bool segment_spare_take(heap_t *heap, page_t *page) {
  segment_t *seg = segment_of(page);
  size_t count = relaxed_load(&page->slice_count);
  uint64_t mask = slice_mask(page->slice_index, count);
  if (!segment_spare_check(page, true)) return false;
  segment_lock(seg);
  bool resident = !((seg->decommitted | seg->zapped) & mask);
  if (resident) seg->free_slices &= ~mask;
  segment_unlock(seg);
  if (!resident) return false;
  for (size_t i = page->slice_index; i < page->slice_index + count; i++)
    seg->page_of[i] = page;
  stats_page_bytes((ptrdiff_t)(count << SLICE_SHIFT));
  relaxed_store(&page->owner, heap->owner);
  relaxed_store(&page->kind, PAGE_BINNED);
  return true;
}

/* The head page at or after *index (advanced past it), or NULL. */
static page_t *segment_next_page(segment_t *seg, size_t *index) {
  while (*index < SLICE_COUNT) {
    page_t *page = seg->page_of[*index];
    if (page != &unused_page && page->slice_index == *index) {
      *index += relaxed_load(&page->slice_count);
      return page;
    }
    (*index)++;
  }
  return NULL;
}

/* collect(true): the heap's only segment, kept on the heap though it holds
 * no page (segment_page_free), goes to the cache as well. Owner only. */
static void segment_release_kept(heap_t *heap) {
  segment_t *seg = heap->segments;
  if (!seg || seg->heap_next || seg->free_slices != SLICES_ALL) return;
  segment_unlink_heap(heap, seg);
  segment_release(seg);
}

/* Does any page of the segment hold a block that is neither free nor on its
 * way back through thread_free, or a free still between its push and its
 * notify (nsalloc_unload racing a late free: the notify is still to write
 * the segment's flag)? */
static bool segment_has_live_blocks(segment_t *seg) {
  size_t index = 1;
  for (page_t *page; (page = segment_next_page(seg, &index)) != NULL;)
    if (page_used_snapshot(page) > page_pending_remote(page) ||
        (relaxed_load(&page->thread_free) & TF_NOTIFYING))
      return true; /* a free still notifying writes the segment's flag */
  return false;
}

/* Forget every page of a segment at once (heap_destroy) and release it. */
static void segment_drop(segment_t *seg) {
  size_t index = 1;
  for (page_t *page; (page = segment_next_page(seg, &index)) != NULL;) {
    stats_page_bytes(-(ptrdiff_t)((size_t)relaxed_load(&page->slice_count) << SLICE_SHIFT));
    relaxed_store(&page->kind, 0);
    relaxed_store(&page->owner, 0);
  }
  for (size_t i = 0; i < SLICE_COUNT; i++)
    seg->page_of[i] = &unused_page;
  segment_release(seg);
}

/* Make the body of a huge segment, up to `end` bytes from its start, the
 * committed memory of its new block: all of it fresh or purged (returns
 * true: it reads as zero where PRIM_PURGE_ZEROES), or resident up to
 * huge_extent (a cached segment kept resident, or one filled with moved
 * pages), whose whole HUGE_UNITs past `end` are purged so a smaller block
 * does not keep a larger one's pages (only a larger cached segment has
 * any: a segment of the exact size ends less than a unit past `end`). */
static bool segment_huge_fit(segment_t *seg, size_t end) {
  bool fresh = seg->decommitted & SLICES_ALL;
  seg->decommitted = 0;
  if (fresh) {
    seg->huge_extent = end;
    stats_committed((ptrdiff_t)(end - SLICE_SIZE));
    return PRIM_PURGE_ZEROES;
  }
  if (end > seg->huge_extent) {
    stats_committed((ptrdiff_t)(end - seg->huge_extent));
    seg->huge_extent = end;
  } else {
    size_t keep = align_up(end, HUGE_UNIT);
    if (keep < seg->huge_extent && copy_option(NSALLOC_OPTION_PURGE_DELAY_MS) >= 0 &&
        os_purge((uint8_t *)seg + keep, seg->huge_extent - keep)) {
      stats_committed(-(ptrdiff_t)(seg->huge_extent - keep));
      seg->huge_extent = keep;
    }
  }
  return false;
}

/* The one page of a huge segment, holding a block of `usable` bytes at
 * `offset` from its start, tagged as `heap`'s. */
static page_t *segment_huge_page(heap_t *heap, segment_t *seg, size_t offset, size_t usable) {
  page_t *page = &seg->pages[1];
  for (size_t i = 1; i < SLICE_COUNT; i++)
    seg->page_of[i] = page;
  seg->free_slices = 0;
  page->untouched = segment_huge_fit(seg, offset + usable);
  page->slice_index = 1;
  page->start = (uint8_t *)seg + offset;
  page->capacity = page->reserved = 1;
  page_used_set(page, 1);
  relaxed_store(&page->block_size, usable);
  relaxed_store(&page->slice_count, SLICE_COUNT - 1);
  relaxed_store(&page->kind, PAGE_HUGE);
  relaxed_store(&seg->heap, heap);
  stats_page_bytes((ptrdiff_t)usable);
  return page;
}

/* A dedicated segment for one object of `size` bytes whose start is aligned to
 * `alignment`. The block starts at slice 1, or at `alignment` when larger. */
static page_t *segment_huge_alloc(heap_t *heap, size_t size, size_t alignment) {
  size_t offset = alignment > SLICE_SIZE ? alignment : SLICE_SIZE;
  if (size > PTRDIFF_MAX - offset - SEGMENT_SIZE) return NULL;
  size_t usable = align_up(size ? size : 1, os_page_size()), total = offset + usable;
  /* Whole units: segment_fill_from_cache moves a unit at a time. */
  segment_t *seg =
      segment_obtain(align_up(total, HUGE_UNIT),
                     alignment > SEGMENT_SIZE ? alignment : SEGMENT_SIZE, SEGMENT_HUGE);
  return seg ? segment_huge_page(heap, seg, offset, usable) : NULL;
}

static void segment_huge_free(segment_t *seg) {
  page_t *page = &seg->pages[1];
  stats_page_bytes(-(ptrdiff_t)relaxed_load(&page->block_size));
  relaxed_store(&page->kind, 0);
  for (size_t i = 1; i < SLICE_COUNT; i++)
    seg->page_of[i] = &unused_page;
  segment_release(seg);
}

/* Hand a segment of an exiting thread to the copy. Its free slices are
 * purged after the purge delay, as the owner would have: threads that come
 * and go (a pool, a test harness) hand their memory to the next ones. */
static void segment_abandon(segment_t *seg) {
  atomic_store(&seg->heap, NULL);
  seg->heap_next = seg->heap_prev = NULL;
  copy_lock();
  seg->list_next = copy.abandoned;
  copy.abandoned = seg;
  atomic_fetch_add(&copy.abandoned_count, 1);
  purger_note(segment_schedule_purge(seg));
  /* A remote free that notified a parked page since the exiting thread's
   * last sweep (heap_abandon) found this heap, not NULL, and noted no pass.
   * The two sides are a Dekker pair (page_notify_owner stores the flag, then
   * loads seg->heap; here the reverse, all sequentially consistent): at
   * least one of them notes the pass. */
  if (atomic_load(&seg->full_page_freed)) segment_abandoned_freed();
  copy_unlock();
}

/* A remote free notified a parked page of an abandoned segment
 * (page_notify_owner): the purger's next pass collects it. Noted a little
 * ahead, so a burst of frees onto many pages costs one pass, not one each. */
static void segment_abandoned_freed(void) {
  purger_note(prim_clock_ms() + PURGE_RETRY_MS);
}

static segment_t *segment_reclaim(void) {
  if (relaxed_load(&copy.abandoned_count) == 0) return NULL;
  copy_lock();
  segment_t *seg = copy.abandoned;
  if (seg) {
    copy.abandoned = seg->list_next;
    atomic_fetch_sub(&copy.abandoned_count, 1);
  }
  copy_unlock();
  return seg;
}
