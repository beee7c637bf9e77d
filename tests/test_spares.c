/*
 * test_spares.c - a bin's spare page (core/page.c: page_retire_if_unused,
 * page_spare_take; core/segment.c: spare_of): the only page of a bin, carved
 * past PAGE_KEEP_CARVED, gives its slices back when it empties but keeps its
 * blocks, which the bin's next page takes back unless a claim or a purge
 * ended the spare meanwhile.
 *
 * The invariant, checked after every step: every spare a heap points at
 * whose slices still carry its id and are resident lies in a segment of
 * that heap, is of its
 * bin, spans only free slices, overlaps no other such spare, and has intact
 * free lists (every block inside the page, as many as it carved). Taking
 * back a spare whose blocks another page overwrote hands out a block twice
 * (silently) or follows a user's bytes as a free-list pointer (a crash):
 *  - test_overlapping_spares builds the case that once did so: a spare cut
 *    short by a claim at the slice before it, whose page then became the
 *    spare of another bin; with one bit per slice, the bit the claim left
 *    completed the first spare's mask and it was taken back over the
 *    second's blocks (the Python binding's thread churn crashed one run in
 *    ten);
 *  - test_purge_failure_ends_spare and ..._in_one_run_ends_spare: a purge
 *    that fails part way ends a spare it purged or zapped (a review and a
 *    red-team program found one case each);
 *  - test_random_spares runs random fill/drain work over many bins, first-
 *    class heaps and purges, with the invariant and every live block's
 *    pattern checked.
 * And what spares are for: a bin filled and drained in turn gets its blocks
 * back, carving nothing and faulting nothing in, until a forced collect
 * forgets the spare (test_refill_takes_spare_back), and other bins' pages
 * go elsewhere while they can (test_claims_keep_spares).
 *
 * White-box: this file includes the core's one translation unit (a private
 * copy with the prefix wb_) to reach its heaps and segments.
 */
#include "nsalloc.c"

#include "test_util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static int violations;

#define VIOLATION(...)                                                                             \
  do {                                                                                             \
    if (violations++ < 20) fprintf(stderr, __VA_ARGS__);                                           \
  } while (0)

static bool heap_has_segment(const heap_t *heap, const segment_t *target) {
  for (const segment_t *seg = heap->segments; seg; seg = seg->heap_next)
    if (seg == target) return true;
  return false;
}

static uint64_t page_slices(const page_t *page) {
  return slice_mask(page->slice_index, relaxed_load(&page->slice_count));
}

/* The free blocks of a spare: both lists inside the page, capacity of them
 * in all (it has no live block). */
static void check_spare_lists(const page_t *page, const char *where) {
  uintptr_t low = (uintptr_t)page->start;
  uintptr_t high = low + ((size_t)relaxed_load(&page->slice_count) << SLICE_SHIFT);
  size_t count = 0;
  const block_t *lists[2] = {page->free, page->local_free};
  for (int l = 0; l < 2; l++)
    for (const block_t *block = lists[l]; block; block = block->next) {
      if ((uintptr_t)block < low || (uintptr_t)block >= high || ++count > page->capacity) {
        VIOLATION("%s: spare %p: free list reaches %p\n", where, (const void *)page,
                  (const void *)block);
        return;
      }
    }
  if (count != page->capacity || page_used(page) != 0)
    VIOLATION("%s: spare %p: %zu free blocks, %u used, capacity %u\n", where, (const void *)page,
              count, page_used(page), page->capacity);
}

/* Caller: no thread is using `heap`. */
static void check_heap_spares(heap_t *heap, const char *where) {
  const page_t *intact[BIN_COUNT];
  size_t intact_count = 0;
  for (size_t bin = 0; bin < BIN_COUNT; bin++) {
    page_t *spare = page_spare_of(heap, bin);
    if (!spare || !segment_spare_check(spare, false)) continue;
    segment_t *seg = segment_of(spare);
    if ((seg->decommitted | seg->zapped) & page_slices(spare)) continue; /* purged: ended */
    if (!heap_has_segment(heap, seg)) {
      VIOLATION("%s: bin %zu: spare %p in segment %p, not its heap's\n", where, bin, (void *)spare,
                (void *)seg);
      continue;
    }
    uint64_t mask = page_slices(spare);
    if (relaxed_load(&spare->kind) != 0 || (seg->free_slices & mask) != mask)
      VIOLATION("%s: bin %zu: spare %p holds slices in use\n", where, bin, (void *)spare);
    for (size_t i = 0; i < intact_count; i++)
      if (segment_of(intact[i]) == seg && (page_slices(intact[i]) & mask))
        VIOLATION("%s: spares %p and %p overlap\n", where, (const void *)intact[i], (void *)spare);
    intact[intact_count++] = spare;
    check_spare_lists(spare, where);
  }
}

static void check_all(const char *where) {
  copy_lock();
  for (heap_t *heap = copy.heaps; heap; heap = heap->next)
    check_heap_spares(heap, where);
  copy_unlock();
}

static page_t *page_holding(const void *p) {
  segment_t *seg = segment_of(p);
  return seg->page_of[((uintptr_t)p - (uintptr_t)seg) >> SLICE_SHIFT];
}

/* Medium blocks: each bin's pages span MEDIUM_SLICES slices. Three blocks
 * carve past the first extension and past PAGE_KEEP_CARVED. */
#define SIZE_A   20000
#define SIZE_B   30000
#define PER_PAGE 3

static void allocate(nsalloc_heap_t *heap, size_t size, void **blocks, uint64_t seed) {
  for (size_t i = 0; i < PER_PAGE; i++) {
    blocks[i] = nsalloc_heap_malloc(heap, size);
    CHECK(blocks[i] != NULL);
    if (blocks[i]) test_fill(blocks[i], size, seed + i);
  }
}

static void release(nsalloc_heap_t *heap, void **blocks) {
  for (size_t i = 0; i < PER_PAGE; i++)
    nsalloc_heap_free(heap, blocks[i]);
}

/* A first-class heap, with the purge delay long enough that no purge ends
 * a spare while a test runs (restored by quiet_heap_end). */
static nsalloc_heap_t *quiet_heap_new(long *delay) {
  *delay = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 60000), 0);
  nsalloc_heap_t *heap = nsalloc_heap_new();
  CHECK(heap != NULL);
  return heap;
}

static void quiet_heap_end(nsalloc_heap_t *heap, long delay) {
  nsalloc_heap_destroy(heap);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay), 0);
  CHECK_EQ(violations, 0);
}

static void test_overlapping_spares(void) {
  long delay;
  nsalloc_heap_t *heap = quiet_heap_new(&delay);
  if (!heap) return;
  /* A large block holds the first two slices, A's page the next eight, and
   * large fillers the rest of the segment. */
  void *large = nsalloc_heap_malloc(heap, MEDIUM_MAX + 1);
  void *a[PER_PAGE], *b[PER_PAGE], *a2[PER_PAGE], *b2[PER_PAGE], *fillers[SLICE_COUNT];
  size_t filler_count = 0;
  allocate(heap, SIZE_A, a, 1);
  page_t *page_a = page_holding(a[0]);
  size_t bin_a = page_a->bin;
  for (size_t left = SLICE_COUNT - 1 - 2 - MEDIUM_SLICES; left > 0;) {
    size_t slices = left < (LARGE_MAX >> SLICE_SHIFT) ? left : LARGE_MAX >> SLICE_SHIFT;
    fillers[filler_count] = nsalloc_heap_malloc(heap, slices << SLICE_SHIFT);
    CHECK(segment_of(fillers[filler_count++]) == segment_of(page_a));
    left -= slices;
  }
  release(heap, a);
  CHECK(page_spare_of(heap, bin_a) == page_a);
  CHECK(segment_spare_check(page_a, false));
  check_all("A spare");
  /* Without the large block, the segment's only run of eight free slices
   * starts before A's and covers most of it: B's page ends A's spare there,
   * and then becomes a spare too. */
  nsalloc_heap_free(heap, large);
  allocate(heap, SIZE_B, b, 10);
  page_t *page_b = page_holding(b[0]);
  CHECK(segment_of(page_b) == segment_of(page_a));
  CHECK(page_b->slice_index < page_a->slice_index); /* the case under test was built */
  CHECK(page_slices(page_b) & page_slices(page_a));
  release(heap, b);
  CHECK(!segment_spare_check(page_a, false));
  CHECK(segment_spare_check(page_b, false));
  check_all("B spare over A's");
  /* A's bin must not take its ended spare back over B's blocks, nor B's. */
  allocate(heap, SIZE_A, a2, 20);
  check_all("A again");
  allocate(heap, SIZE_B, b2, 30);
  check_all("B again");
  for (size_t i = 0; i < PER_PAGE; i++) {
    CHECK(test_verify(a2[i], SIZE_A, 20 + i));
    CHECK(test_verify(b2[i], SIZE_B, 30 + i));
    for (size_t j = 0; j < PER_PAGE; j++)
      CHECK((char *)a2[i] + SIZE_A <= (char *)b2[j] || (char *)b2[j] + SIZE_B <= (char *)a2[i]);
  }
  release(heap, a2);
  release(heap, b2);
  for (size_t i = 0; i < filler_count; i++)
    nsalloc_heap_free(heap, fillers[i]);
  quiet_heap_end(heap, delay);
}

/* A claim takes a spare's slices only when nothing else fits: another
 * bin's page goes beside A's spare, and A's next page is its spare. */
static void test_claims_keep_spares(void) {
  long delay;
  nsalloc_heap_t *heap = quiet_heap_new(&delay);
  if (!heap) return;
  void *a[PER_PAGE], *b[PER_PAGE];
  allocate(heap, SIZE_A, a, 1);
  page_t *page_a = page_holding(a[0]);
  release(heap, a);
  allocate(heap, SIZE_B, b, 10);
  CHECK(!(page_slices(page_holding(b[0])) & page_slices(page_a)));
  allocate(heap, SIZE_A, a, 20);
  CHECK(page_holding(a[0]) == page_a);
  check_all("spare kept");
  release(heap, a);
  release(heap, b);
  quiet_heap_end(heap, delay);
}

/* Lock one OS page at p, and tell whether it is locked: the sanitizers'
 * runtimes make mlock() a no-op that succeeds (then no purge fails, and the
 * tests below have nothing to check). */
static bool lock_page(void *p) {
  CHECK_EQ(mlock(p, OS_PAGE), 0);
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long locked_kib = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmLck: %ld", &locked_kib) == 1) break;
  if (f) fclose(f);
  if (locked_kib == 0) fprintf(stderr, "note: mlock() locks nothing here (a sanitizer): skipped\n");
  return locked_kib > 0;
}

/* A's page becomes its bin's spare; then a large block with a page the
 * program mlock()ed is freed with purge_delay_ms=0, and the purge fails at
 * that page (madvise refuses it). Either way the spare is not taken back:
 *  - test_purge_failure_ends_spare: a small block in use separates A's
 *    slices from the block's, so A's run is purged first; the purge must
 *    note it before the next run fails, or the purged spare reads as
 *    resident (a review found it);
 *  - test_purge_failure_in_one_run_ends_spare: the block lies right after
 *    A's page, so both make one run, which Linux zaps up to the locked page
 *    before madvise fails and nothing of it reads as purged; the run is
 *    marked zapped (a red-team program found it: the spare taken back had
 *    lost its free lists and its blocks' double-free tags, a double free
 *    retired the page under a live block, and the next claim overwrote it).
 * A spare taken back would hand out its blocks again, capacity intact; the
 * bin's next page is carved anew instead. */
static void purge_failure_scenario(bool one_run) {
  long delay;
  nsalloc_heap_t *heap = quiet_heap_new(&delay);
  if (!heap) return;
  void *a[PER_PAGE];
  allocate(heap, SIZE_A, a, 1);
  page_t *page_a = page_holding(a[0]);
  void *small = one_run ? NULL : nsalloc_heap_malloc(heap, 100);
  unsigned char *locked = nsalloc_heap_malloc(heap, MEDIUM_MAX + 1); /* two slices */
  if (one_run) small = nsalloc_heap_malloc(heap, 100);               /* ends the run */
  segment_t *seg = segment_of(page_a);
  CHECK(segment_of(small) == seg && segment_of(locked) == seg);
  size_t after_a = page_a->slice_index + relaxed_load(&page_a->slice_count);
  CHECK(one_run ? page_holding(locked)->slice_index == after_a
                : page_holding(locked)->slice_index > page_holding(small)->slice_index);
  unsigned char *lock_at = locked + SLICE_SIZE; /* its second slice: the first goes before */
  bool locks = lock_page(lock_at);
  release(heap, a);
  if (locks) {
    CHECK(segment_spare_check(page_a, false));
    CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 0), 0);
    nsalloc_heap_free(heap, locked);
    uint64_t slices_a = page_slices(page_a);
    if (one_run)
      CHECK(!(seg->decommitted & slices_a) && (seg->zapped & slices_a) == slices_a);
    else
      CHECK((seg->decommitted & slices_a) == slices_a);
    check_all("purge failed part way");
    void *fresh = nsalloc_heap_malloc(heap, SIZE_A);
    CHECK(fresh != NULL);
    if (fresh) CHECK_EQ(page_holding(fresh)->capacity, 1); /* carved anew */
    nsalloc_heap_free(heap, fresh);
    CHECK_EQ(munlock(lock_at, OS_PAGE), 0); /* still mapped: the heap keeps its segment */
  } else {
    nsalloc_heap_free(heap, locked);
  }
  nsalloc_heap_free(heap, small);
  quiet_heap_end(heap, delay);
}
static void test_purge_failure_ends_spare(void) {
  purge_failure_scenario(false);
}
static void test_purge_failure_in_one_run_ends_spare(void) {
  purge_failure_scenario(true);
}

/* A bin filled and drained in turn: after the first round every round gets
 * the same blocks back from the spare, with nothing carved and no page
 * faulted in; a forced collect forgets the spare, and the next round starts
 * on a page carved anew. */
static void test_refill_takes_spare_back(void) {
  long delay;
  nsalloc_heap_t *heap = quiet_heap_new(&delay);
  if (!heap) return;
  void *first[PER_PAGE], *blocks[PER_PAGE];
  allocate(heap, SIZE_A, first, 1);
  page_t *page = page_holding(first[0]);
  release(heap, first);
  CHECK(page_spare_of(heap, page->bin) == page);
  long faults = test_minor_faults();
  for (int round = 0; round < 100; round++) {
    allocate(heap, SIZE_A, blocks, 1);
    CHECK(page_holding(blocks[0]) == page);
    CHECK_EQ(page->capacity, PER_PAGE); /* nothing carved anew */
    for (size_t i = 0; i < PER_PAGE; i++) {
      bool known = false;
      for (size_t j = 0; j < PER_PAGE; j++)
        known |= blocks[i] == first[j];
      CHECK(known);
    }
    release(heap, blocks);
    CHECK(page_spare_of(heap, page->bin) == page);
  }
  faults = test_minor_faults() - faults;
  fprintf(stderr, "100 rounds from the spare: %ld minor faults\n", faults);
  if (!test_instrumented()) CHECK(faults <= 8);
  check_all("rounds");
  nsalloc_heap_collect(heap, true);
  CHECK(page_spare_of(heap, page->bin) == NULL);
  void *fresh = nsalloc_heap_malloc(heap, SIZE_A);
  CHECK(fresh != NULL);
  if (fresh) CHECK_EQ(page_holding(fresh)->capacity, 1); /* its first extension: one block */
  nsalloc_heap_free(heap, fresh);
  quiet_heap_end(heap, delay);
}

/* Random fill/drain work on the default heap and two first-class heaps:
 * medium and small bins (1- and 8-slice pages, whose claims cut each other's
 * spares at every offset), large blocks between them, collects and purges
 * now and then. Every live block keeps its pattern. */
#define SLOTS 96
typedef struct slot_s {
  void *p;
  size_t size;
  uint64_t seed;
  int heap;
} slot_t;

static void test_random_spares(void) {
  static const size_t sizes[] = {700, 3000, 9000, 12000, 20000, 30000, 47000, 64000, 90000};
  nsalloc_heap_t *heaps[2] = {nsalloc_heap_new(), nsalloc_heap_new()};
  CHECK(heaps[0] && heaps[1]);
  if (!heaps[0] || !heaps[1]) return;
  static slot_t slots[SLOTS];
  long delay = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  uint64_t rng = 0x5eed;
  size_t steps = test_scale(60000);
  for (size_t step = 0; step < steps; step++) {
    uint64_t r = test_random(&rng);
    slot_t *s = &slots[r % SLOTS];
    if (s->p) {
      if (!test_verify(s->p, s->size, s->seed)) VIOLATION("block %p lost its bytes\n", s->p);
      if (s->heap >= 0)
        nsalloc_heap_free(heaps[s->heap], s->p);
      else
        nsalloc_free(s->p);
      s->p = NULL;
    } else {
      s->size = sizes[(r >> 8) % (sizeof sizes / sizeof sizes[0])] - (r >> 20) % 512;
      s->heap = (int)(r >> 32 & 3) - 1;
      if (s->heap > 1) s->heap = -1;
      s->seed = r;
      s->p = s->heap >= 0 ? nsalloc_heap_malloc(heaps[s->heap], s->size) : nsalloc_malloc(s->size);
      CHECK(s->p != NULL);
      if (s->p) test_fill(s->p, s->size, s->seed);
    }
    if ((r >> 40 & 1023) == 0) nsalloc_collect(r >> 50 & 1);
    if ((r >> 40 & 1023) == 1) nsalloc_heap_collect(heaps[r >> 51 & 1], r >> 52 & 1);
    if ((r >> 40 & 1023) == 2) /* a purge ends every spare it reaches */
      nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, r >> 53 & 1 ? 0 : 1000);
    if (step % 64 == 0) check_all("random");
  }
  for (size_t i = 0; i < SLOTS; i++) {
    slot_t *s = &slots[i];
    if (!s->p) continue;
    if (!test_verify(s->p, s->size, s->seed)) VIOLATION("block %p lost its bytes\n", s->p);
    if (s->heap >= 0)
      nsalloc_heap_free(heaps[s->heap], s->p);
    else
      nsalloc_free(s->p);
    s->p = NULL;
  }
  check_all("drained");
  nsalloc_heap_destroy(heaps[0]);
  nsalloc_heap_delete(heaps[1]);
  check_all("heaps gone");
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay), 0);
  CHECK_EQ(violations, 0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      {"overlapping_spares", test_overlapping_spares},
      {"claims_keep_spares", test_claims_keep_spares},
      {"purge_failure_ends_spare", test_purge_failure_ends_spare},
      {"purge_failure_in_one_run_ends_spare", test_purge_failure_in_one_run_ends_spare},
      {"refill_takes_spare_back", test_refill_takes_spare_back},
      {"random_spares", test_random_spares},
  };
  return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
