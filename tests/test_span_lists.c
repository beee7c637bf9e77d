/*
 * test_span_lists.c - the span lists a heap places pages through
 * (core/segment.c: segment_span_insert/remove/update), walked after every
 * step of random work: large, small and aligned blocks, realloc, first-class
 * heaps created, deleted and destroyed, collect(true), threads that exit
 * leaving live blocks (freed later by this thread, adopted by it), and a
 * fork() child carrying on.
 *
 * The invariant, for every heap: each segment on heap->segments is one of
 * its normal segments, its free mask agrees with its page_of[] entries, its
 * span_run bounds its longest run of free slices from above (a bound, not
 * the run: taking slices leaves a segment where it is), and when span_run
 * is not 0 it is on exactly heap->spans[span_run] (so a segment with a free
 * slice is on a list, and a full one may be, until a search refiles it); every
 * segment on a span list is on heap->segments, owned by the heap (no
 * released, abandoned or adopted segment is reachable from an old heap's
 * lists); the lists' back links agree; bit r of span_mask is set iff
 * spans[r] is non-empty.
 *
 * And from outside the lists (test_no_needless_segment): a large request
 * takes a new segment only when none of the heap's could hold it at
 * alignment 1, or hold a run of count + align - 1 at a larger alignment.
 *
 * White-box: this file includes the core's one translation unit (a private
 * copy with the prefix wb_) to reach its heaps and segments.
 */
#include "nsalloc.c"

#include "test_util.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>

static int violations;

#define VIOLATION(...)                                                                             \
  do {                                                                                             \
    if (violations++ < 20) fprintf(stderr, __VA_ARGS__);                                           \
  } while (0)

/* Longest run of set bits in the mask, by a plain loop. */
static size_t plain_longest_run(uint64_t mask) {
  size_t best = 0, run = 0;
  for (size_t i = 0; i < SLICE_COUNT; i++) {
    run = mask >> i & 1 ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

static bool heap_has_segment(const heap_t *heap, const segment_t *target) {
  for (const segment_t *seg = heap->segments; seg; seg = seg->heap_next)
    if (seg == target) return true;
  return false;
}

/* Caller: no thread is using `heap`. */
static void check_heap(heap_t *heap, const char *where) {
  size_t filed = 0, count = 0;
  const segment_t *prev = NULL;
  for (segment_t *seg = heap->segments; seg; prev = seg, seg = seg->heap_next) {
    if (++count > 100000) {
      VIOLATION("%s: heap %p: segment list does not end\n", where, (void *)heap);
      return;
    }
    if (seg->heap_prev != prev) VIOLATION("%s: segment %p: heap_prev wrong\n", where, (void *)seg);
    if (relaxed_load(&seg->heap) != heap || seg->kind != SEGMENT_NORMAL)
      VIOLATION("%s: segment %p on heap %p's list is not its normal segment\n", where, (void *)seg,
                (void *)heap);
    for (size_t i = 1; i < SLICE_COUNT; i++)
      if ((seg->free_slices >> i & 1) != (seg->page_of[i] == &unused_page))
        VIOLATION("%s: segment %p: slice %zu free bit disagrees with page_of\n", where, (void *)seg,
                  i);
    if (seg->free_slices & 1) VIOLATION("%s: segment %p: slice 0 free\n", where, (void *)seg);
    size_t run = plain_longest_run(seg->free_slices);
    if (seg->span_run < run || seg->span_run >= SLICE_COUNT)
      VIOLATION("%s: segment %p: span_run %u, longest run %zu\n", where, (void *)seg,
                (unsigned)seg->span_run, run);
    run = seg->span_run;
    if (!run) continue;
    filed++;
    bool found = false;
    for (const segment_t *s = heap->spans[run]; s && !found; s = s->span_next)
      found = s == seg;
    if (!found) VIOLATION("%s: segment %p not on spans[%zu]\n", where, (void *)seg, run);
  }
  if (heap->spans[0] || (heap->span_mask & 1))
    VIOLATION("%s: heap %p: spans[0] used\n", where, (void *)heap);
  size_t listed = 0;
  for (size_t r = 1; r < SLICE_COUNT; r++) {
    if (((heap->span_mask >> r & 1) != 0) != (heap->spans[r] != NULL))
      VIOLATION("%s: heap %p: span_mask bit %zu disagrees with spans[%zu]\n", where, (void *)heap,
                r, r);
    prev = NULL;
    for (segment_t *seg = heap->spans[r]; seg; prev = seg, seg = seg->span_next) {
      if (++listed > count + 1) {
        VIOLATION("%s: heap %p: span lists hold more than its segments\n", where, (void *)heap);
        return;
      }
      if (seg->span_prev != prev)
        VIOLATION("%s: spans[%zu]: segment %p: span_prev wrong\n", where, r, (void *)seg);
      if (seg->span_run != r)
        VIOLATION("%s: spans[%zu]: segment %p has span_run %u\n", where, r, (void *)seg,
                  (unsigned)seg->span_run);
      if (relaxed_load(&seg->heap) != heap || !heap_has_segment(heap, seg))
        VIOLATION("%s: spans[%zu] of heap %p reaches segment %p, not its own\n", where, r,
                  (void *)heap, (void *)seg);
    }
  }
  if (listed != filed)
    VIOLATION("%s: heap %p: %zu segments on span lists, %zu with a span_run\n", where, (void *)heap,
              listed, filed);
}

/* Every heap of the copy. Caller: no other thread of the test is running. */
static void check_all(const char *where) {
  copy_lock();
  for (heap_t *heap = copy.heaps; heap; heap = heap->next)
    check_heap(heap, where);
  copy_unlock();
}

/* ---- random work -------------------------------------------------------- */

#define SLOTS 192
#define HEAPS 4

typedef struct slot {
  void *p;
  size_t size;
  int heap; /* index into heaps[], or -1: the default heap */
  uint64_t seed;
} slot;

static slot slots[SLOTS];
static nsalloc_heap_t *heaps[HEAPS];

/* The first and last 64 bytes hold a pattern: enough to see a block
 * overlapped. */
static void mark(slot *s) {
  if (s->size <= 128) {
    test_fill(s->p, s->size, s->seed);
    return;
  }
  test_fill(s->p, 64, s->seed);
  test_fill((char *)s->p + s->size - 64, 64, s->seed + 1);
}
static void verify(const slot *s) {
  if (s->size <= 128) {
    CHECK(test_verify(s->p, s->size, s->seed));
    return;
  }
  CHECK(test_verify(s->p, 64, s->seed));
  CHECK(test_verify((const char *)s->p + s->size - 64, 64, s->seed + 1));
}

/* A size: mostly large (a slice up to LARGE_MAX), some binned. */
static size_t random_size(uint64_t *rng) {
  uint64_t r = test_random(rng);
  if (r % 4 == 0) return 16 + (size_t)(r >> 8) % MEDIUM_MAX;
  return MEDIUM_MAX + 1 + (size_t)(r >> 8) % LARGE_MAX;
}

static void *slot_alloc(slot *s, uint64_t *rng) {
  uint64_t r = test_random(rng);
  s->size = random_size(rng);
  s->seed = r;
  nsalloc_heap_t *heap = s->heap >= 0 ? heaps[s->heap] : NULL;
  if (r % 3 == 0) { /* aligned: 64 KiB .. 2 MiB */
    size_t alignment = (size_t)1 << (16 + (r >> 8) % 6);
    s->p = heap ? nsalloc_heap_aligned_alloc(heap, alignment, s->size)
                : nsalloc_aligned_alloc(alignment, s->size);
    if (s->p) CHECK(((uintptr_t)s->p & (alignment - 1)) == 0);
  } else {
    s->p = heap ? nsalloc_heap_malloc(heap, s->size) : nsalloc_malloc(s->size);
  }
  CHECK(s->p != NULL);
  if (s->p) mark(s);
  return s->p;
}

static void slot_free(slot *s) {
  if (!s->p) return;
  verify(s);
  if (s->heap >= 0)
    nsalloc_heap_free(heaps[s->heap], s->p);
  else
    nsalloc_free(s->p);
  s->p = NULL;
}

static void slot_realloc(slot *s, uint64_t *rng) {
  verify(s);
  size_t size = random_size(rng);
  void *q =
      s->heap >= 0 ? nsalloc_heap_realloc(heaps[s->heap], s->p, size) : nsalloc_realloc(s->p, size);
  CHECK(q != NULL);
  if (!q) return;
  size_t kept = size < s->size ? size : s->size;
  CHECK(test_verify(q, kept < 64 ? kept : 64, s->seed)); /* whole when s->size <= 128 */
  s->p = q;
  s->size = size;
  mark(s);
}

/* Two threads at once, each on its own range of slots: it frees what the
 * range held (blocks of this thread, of first-class heaps, or of exited
 * threads: remote frees, some onto abandoned segments), allocates, frees
 * some, checks its heap, and exits leaving the rest live (its segments are
 * abandoned, then freed into and adopted by this thread). */
typedef struct worker_args {
  size_t first, count;
  uint64_t seed;
} worker_args;

static void *worker(void *arg) {
  worker_args *w = arg;
  uint64_t rng = w->seed;
  for (size_t i = w->first; i < w->first + w->count; i++) {
    if (slots[i].p) {
      verify(&slots[i]);
      nsalloc_free(slots[i].p);
    }
    slots[i].heap = -1;
    slot_alloc(&slots[i], &rng);
  }
  for (size_t i = w->first; i < w->first + w->count; i++)
    if (test_random(&rng) % 3 == 0) slot_free(&slots[i]);
  check_heap(thread_heap(), "worker");
  return NULL;
}

#define WORKER_SLOTS 24

static void run_workers(uint64_t *rng) {
  size_t first = (size_t)(test_random(rng) % (SLOTS - 2 * WORKER_SLOTS));
  worker_args w[2] = {{first, WORKER_SLOTS, test_random(rng)},
                      {first + WORKER_SLOTS, WORKER_SLOTS, test_random(rng)}};
  pthread_t threads[2];
  for (int i = 0; i < 2; i++)
    CHECK(pthread_create(&threads[i], NULL, worker, &w[i]) == 0);
  for (int i = 0; i < 2; i++)
    pthread_join(threads[i], NULL);
}

static void heap_gone(int index, bool blocks_live) {
  for (size_t i = 0; i < SLOTS; i++) {
    if (slots[i].heap != index) continue;
    if (blocks_live)
      slots[i].heap = -1; /* migrated to the default heap */
    else
      slots[i].p = NULL;
  }
  heaps[index] = NULL;
}

static void random_step(uint64_t *rng) {
  uint64_t r = test_random(rng);
  slot *s = &slots[(r >> 8) % SLOTS];
  switch (r % 32) {
  case 0:
  case 1:
    run_workers(rng);
    break;
  case 2: { /* a first-class heap appears, or one goes */
    int index = (int)((r >> 20) % HEAPS);
    if (!heaps[index]) {
      heaps[index] = nsalloc_heap_new();
      CHECK(heaps[index] != NULL);
    } else if (r >> 30 & 1) {
      nsalloc_heap_delete(heaps[index]);
      heap_gone(index, true);
    } else {
      nsalloc_heap_destroy(heaps[index]);
      heap_gone(index, false);
    }
    break;
  }
  case 3:
    nsalloc_collect(r >> 20 & 1);
    break;
  case 4: {
    int index = (int)((r >> 20) % HEAPS);
    if (heaps[index]) nsalloc_heap_collect(heaps[index], r >> 30 & 1);
    break;
  }
  default:
    if (s->p && r % 32 < 12) {
      slot_realloc(s, rng);
    } else if (s->p) {
      slot_free(s);
    } else {
      int index = (int)((r >> 20) % (HEAPS + 2)) - 2; /* the default heap a third of the time */
      s->heap = index >= 0 && heaps[index] ? index : -1;
      slot_alloc(s, rng);
    }
  }
}

static void run_steps(uint64_t seed, int steps, const char *where) {
  uint64_t rng = seed;
  for (int i = 0; i < steps && violations == 0; i++) {
    random_step(&rng);
    check_all(where);
  }
}

static void release_all(void) {
  for (size_t i = 0; i < SLOTS; i++)
    slot_free(&slots[i]);
  for (int i = 0; i < HEAPS; i++)
    if (heaps[i]) {
      nsalloc_heap_destroy(heaps[i]);
      heaps[i] = NULL;
    }
  nsalloc_collect(true);
  check_all("release_all");
}

static void test_random_work(void) {
  run_steps(7, (int)test_scale(6000), "random");
  release_all();
  CHECK_EQ(violations, 0);
}

/* The same with every free slice purged at once and the purger sweeping
 * exited threads' segments as soon as a free notifies one. */
static void test_random_work_purge_now(void) {
  long delay = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 0);
  run_steps(8, (int)test_scale(3000), "purge now");
  release_all();
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay);
  CHECK_EQ(violations, 0);
}

/* Holes: fill many segments with large blocks, free every other one, then
 * allocate sizes and alignments that fit only some holes. */
static void test_holes(void) {
  uint64_t rng = 99;
  for (size_t i = 0; i < SLOTS; i++) {
    slots[i].heap = -1;
    slots[i].seed = i;
    slots[i].size = (LARGE_MAX / 3) + (i % 5) * SLICE_SIZE;
    slots[i].p = nsalloc_malloc(slots[i].size);
    CHECK(slots[i].p != NULL);
    mark(&slots[i]);
  }
  check_all("holes: filled");
  for (size_t i = 0; i < SLOTS; i += 2)
    slot_free(&slots[i]);
  check_all("holes: punched");
  for (size_t i = 0; i < SLOTS; i += 2) {
    slot_alloc(&slots[i], &rng);
    check_all("holes: refilled");
  }
  release_all();
  CHECK_EQ(violations, 0);
}

/* A search refiles each segment it passes whose bound was stale, so a run of
 * allocations never walks the same full segment twice. Blocks of 10 slices
 * fill a segment six at a time and leave a run of 3; the block after the
 * sixth finds the segment still filed under 63, fails there and refiles it
 * under 3 before taking a new segment. Without the refile every older
 * segment stays under 63 and each new segment's first block walks them all
 * (quadratic over the run). */
static void test_search_refiles_stale(void) {
  enum { SEGMENTS = 8, PER_SEGMENT = (SLICE_COUNT - 1) / 10 };
  nsalloc_heap_t *heap = nsalloc_heap_new();
  void *blocks[SEGMENTS * PER_SEGMENT + 1];
  for (size_t i = 0; i < SEGMENTS * PER_SEGMENT + 1; i++) {
    blocks[i] = nsalloc_heap_malloc(heap, 10 * SLICE_SIZE);
    CHECK(blocks[i] != NULL);
  }
  check_all("refiles: filled");
  size_t full = 0, fresh = 0;
  for (segment_t *seg = heap->segments; seg; seg = seg->heap_next) {
    size_t run = plain_longest_run(seg->free_slices);
    if (run == SLICE_COUNT - 1 - PER_SEGMENT * 10) {
      full++;
      CHECK_EQ(seg->span_run, run); /* refiled under its true run */
    } else {
      fresh++;
      CHECK_EQ(run, SLICE_COUNT - 1 - 10); /* the newest: one block */
    }
  }
  CHECK_EQ(full, SEGMENTS);
  CHECK_EQ(fresh, 1);
  nsalloc_heap_destroy(heap);
  CHECK_EQ(violations, 0);
}

/* Does some index >= 1, a multiple of `align`, start `count` free slices?
 * By a plain loop, to judge the core's search from outside. */
static bool plain_fits(uint64_t free_slices, size_t count, size_t align) {
  for (size_t i = align; i + count <= SLICE_COUNT; i += align)
    if (((free_slices >> i) & (((uint64_t)1 << count) - 1)) == ((uint64_t)1 << count) - 1)
      return true;
  return false;
}

/* What a heap's segments could hold before a request of `count` slices at
 * `align`: one of them at its alignment (`fits`), one of them with a run of
 * count + align - 1, which holds an aligned start wherever it lies
 * (`fits_any`). */
typedef struct {
  bool fits, fits_any;
} room;

static room heap_room(const heap_t *heap, size_t count, size_t align) {
  room r = {false, false};
  for (const segment_t *seg = heap->segments; seg; seg = seg->heap_next) {
    r.fits |= plain_fits(seg->free_slices, count, align);
    r.fits_any |= plain_longest_run(seg->free_slices) >= count + align - 1;
  }
  return r;
}

/* A thread that places large blocks in its own heap, frees half and exits:
 * its segments are abandoned holding the rest, for the search to adopt. */
#define ORPHANS 8
static void *orphan_worker(void *arg) {
  void **blocks = arg;
  for (size_t i = 0; i < ORPHANS; i++)
    blocks[i] = nsalloc_malloc((1 + i * 3 % (LARGE_MAX >> SLICE_SHIFT)) << SLICE_SHIFT);
  for (size_t i = 0; i < ORPHANS; i += 2) {
    nsalloc_free(blocks[i]);
    blocks[i] = NULL;
  }
  return NULL;
}

/* No new segment while an old one could hold the request: at alignment 1
 * whenever some segment holds the run (however stale the bounds are), and
 * at any alignment whenever some segment holds a run of count + align - 1
 * (the lists searched after ALIGNED_MISFITS misfits). Random large blocks
 * and alignments, freed in random order (each free leaves other bounds
 * stale) and grown in place by realloc (a claim that leaves the segment
 * where it is); the block's segment, when not one of the heap's before the
 * request, must have been the only way. In a first-class heap, and in this
 * thread's default heap while threads exit leaving blocks in segments the
 * search adopts. Fails without the refile on free, or when the search gives
 * up on every list after ALIGNED_MISFITS misfits. */
static void needless_run(nsalloc_heap_t *first_class, uint64_t rng) {
  enum { LIVE = 96 };
  const size_t max_slices = LARGE_MAX >> SLICE_SHIFT;
  nsalloc_free(nsalloc_malloc(1)); /* this thread's heap exists from here on */
  heap_t *heap = first_class ? first_class : thread_heap();
  CHECK(heap != &empty_heap);
  void *live[LIVE] = {0}, *orphans[64][ORPHANS] = {{0}};
  size_t news = 0, threads = 0, steps = (size_t)test_scale(20000);
  for (size_t step = 0; step < steps; step++) {
    size_t i = (size_t)(test_random(&rng) % LIVE);
    uint64_t r = test_random(&rng);
    if (!first_class && r % 256 == 0 && threads < 64) {
      pthread_t thread;
      CHECK(pthread_create(&thread, NULL, orphan_worker, orphans[threads++]) == 0);
      pthread_join(thread, NULL);
      continue;
    }
    if (live[i] && r % 4 == 0) { /* grown in place when the slices after it are free */
      size_t size = (1 + (size_t)(test_random(&rng) % max_slices)) << SLICE_SHIFT;
      void *q = first_class ? nsalloc_heap_realloc(first_class, live[i], size)
                            : nsalloc_realloc(live[i], size);
      CHECK(q != NULL);
      live[i] = q;
      continue;
    }
    if (live[i]) { /* the owner's free: nsalloc_free would defer it as a remote one */
      if (first_class)
        nsalloc_heap_free(first_class, live[i]);
      else
        nsalloc_free(live[i]);
      live[i] = NULL;
      continue;
    }
    size_t count = 1 + (size_t)(r % max_slices);
    size_t align = (size_t)1 << (test_random(&rng) % 6); /* slices: 1 .. 32 */
    while (align > max_slices)
      align >>= 1;
    size_t alignment = align == 1 ? 16 : align << SLICE_SHIFT;
    room before = heap_room(heap, count, align);
    static segment_t *old[4096];
    size_t olds = 0;
    for (segment_t *seg = heap->segments; seg && olds < 4096; seg = seg->heap_next)
      old[olds++] = seg;
    CHECK(olds < 4096);
    live[i] = first_class ? nsalloc_heap_aligned_alloc(first_class, alignment, count << SLICE_SHIFT)
                          : nsalloc_aligned_alloc(alignment, count << SLICE_SHIFT);
    CHECK(live[i] != NULL);
    CHECK(((uintptr_t)live[i] & (alignment - 1)) == 0);
    segment_t *seg = segment_of(live[i]);
    bool known = false;
    for (size_t k = 0; k < olds && !known; k++)
      known = old[k] == seg;
    if (known) continue;
    news++;
    if ((align == 1 && before.fits) || before.fits_any)
      VIOLATION("step %zu: %zu slices at %zu: new segment though one %s\n", step, count, align,
                before.fits_any ? "had a run of count + align - 1" : "held it");
  }
  CHECK(news > 0);
  check_all("no needless segment");
  if (first_class) return; /* nsalloc_heap_destroy releases its blocks */
  for (size_t i = 0; i < LIVE; i++)
    nsalloc_free(live[i]);
  for (size_t t = 0; t < threads; t++)
    for (size_t k = 0; k < ORPHANS; k++)
      nsalloc_free(orphans[t][k]);
  check_all("no needless segment: freed");
}

static void test_no_needless_segment(void) {
  nsalloc_heap_t *heap = nsalloc_heap_new();
  CHECK(heap != NULL);
  needless_run(heap, 0x5eed);
  nsalloc_heap_destroy(heap);
  needless_run(NULL, 0xad0b7);
  CHECK_EQ(violations, 0);
}

static void forked_work(void *arg) {
  (void)arg;
  run_steps(31, 600, "fork child");
  release_all();
  _exit(violations == 0 && test_failures == 0 ? 0 : 1);
}

/* A child forked while this thread's heap holds segments carries on. */
static void test_fork_child(void) {
  uint64_t rng = 5;
  for (int i = 0; i < 300; i++)
    random_step(&rng);
  char output[4096];
  int status = test_in_child(forked_work, NULL, output, sizeof(output));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fprintf(stderr, "child: %s\n", output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  release_all();
  CHECK_EQ(violations, 0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_random_work),          TEST(test_random_work_purge_now), TEST(test_holes),
      TEST(test_search_refiles_stale), TEST(test_no_needless_segment),   TEST(test_fork_child),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
