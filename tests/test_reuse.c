/*
 * test_reuse.c - huge blocks freed and allocated again reuse the pages
 * already faulted in (docs/architecture.md, "The segment cache"), counted
 * in the process's minor faults (getrusage):
 *   - a churn of 5-25 MiB blocks (10 live, one replaced per step, every page
 *     written) faults little once its working set is reached; the control,
 *     segment_cache=0, faults about every page again;
 *   - one 256 MiB block allocated, written and freed four times faults
 *     nothing after the first cycle, by default and with purge_delay_ms=-1
 *     (which keeps it however long the program sleeps); the control, the
 *     default with a sleep past the purge delay, faults it all again;
 *   - threads replacing huge blocks at once keep every block's contents
 *     (each page stamped and checked) and calloc's zeros (also under TSan);
 *   - realloc growing a written huge block moves its pages into the larger
 *     segment and faults almost nothing; the control, a block aligned past
 *     its segment's first slice, is copied and faults every page again;
 *   - where the address space is full (RLIMIT_AS here; a 32-bit process),
 *     what the cache keeps mapped goes back before an allocation fails.
 * Each case runs in its own process (ctest names one per run): faults are a
 * whole-process figure. Under valgrind and the sanitizers the scenarios run
 * but the fault counts are not asserted.
 */
#include "nsalloc.h"
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define MIB  ((size_t)1 << 20)
#define PAGE ((size_t)4096)

/* Stamp every page of a block (one word each: enough to fault it in and to
 * tell its contents apart), or check the stamps. */
static void stamp(uint8_t *p, size_t size, uint64_t seed) {
  for (size_t off = 0; off + sizeof(uint64_t) <= size; off += PAGE) {
    uint64_t v = seed ^ off;
    memcpy(p + off, &v, sizeof v);
  }
}
/* Does every page hold its stamp (`zero`: a zero word where it would go)? */
static bool stamp_check(const uint8_t *p, size_t size, uint64_t seed, bool zero) {
  for (size_t off = 0; off + sizeof(uint64_t) <= size; off += PAGE) {
    uint64_t v;
    memcpy(&v, p + off, sizeof v);
    if (v != (zero ? 0 : seed ^ off)) return false;
  }
  return true;
}
static bool stamped(const uint8_t *p, size_t size, uint64_t seed) {
  return stamp_check(p, size, seed, false);
}

/* The large-block churn of issue 22 in one thread: `steps` replacements
 * after a warm-up that reaches the working set. Returns the faults of the
 * measured steps and stores the pages they wrote. */
enum { CHURN_LIVE = 10 };
static long churn_faults(size_t steps, size_t *pages_written) {
  uint8_t *blocks[CHURN_LIVE];
  size_t sizes[CHURN_LIVE];
  uint64_t seeds[CHURN_LIVE], rng = 22;
  for (size_t i = 0; i < CHURN_LIVE; i++) {
    sizes[i] = 5 * MIB + (size_t)(test_random(&rng) % (20 * MIB));
    CHECK((blocks[i] = nsalloc_malloc(sizes[i])) != NULL);
    stamp(blocks[i], sizes[i], seeds[i] = i);
  }
  long before = 0;
  *pages_written = 0;
  size_t warm = test_scale(40);
  for (size_t s = 0; s < warm + steps; s++) {
    if (s == warm) before = test_minor_faults();
    size_t k = (size_t)(test_random(&rng) % CHURN_LIVE);
    CHECK(stamped(blocks[k], sizes[k], seeds[k]));
    nsalloc_free(blocks[k]);
    sizes[k] = 5 * MIB + (size_t)(test_random(&rng) % (20 * MIB));
    CHECK((blocks[k] = nsalloc_malloc(sizes[k])) != NULL);
    if (!blocks[k]) break;
    stamp(blocks[k], sizes[k], seeds[k] = CHURN_LIVE + s);
    if (s >= warm) *pages_written += (sizes[k] + PAGE - 1) / PAGE;
  }
  long faults = test_minor_faults() - before;
  for (size_t i = 0; i < CHURN_LIVE; i++)
    nsalloc_free(blocks[i]);
  fprintf(stderr, "%zu steps wrote %zu pages: %ld minor faults\n", steps, *pages_written, faults);
  return faults;
}

/* Default options: the freed blocks' pages move into the new ones. The
 * bound, one fault in 50 pages written, is about 25 times what this
 * machine measures (the working set creeps up as the random sizes reach new
 * highs); the control faults about every page. */
static void test_large_churn_refaults_little(void) {
  size_t pages;
  long faults = churn_faults(test_scale(100), &pages);
  if (test_instrumented()) return;
  CHECK((size_t)faults <= pages / 50);
}

/* The control: with segment_cache=0 a freed block's segment is unmapped at
 * once and every new block faults all its pages in. */
static void test_large_churn_without_cache_refaults(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_SEGMENT_CACHE, 0), 0);
  size_t pages;
  long faults = churn_faults(test_scale(100), &pages);
  if (test_instrumented()) return;
  CHECK((size_t)faults >= pages / 2);
}

/* Four cycles of one 256 MiB block, written and freed, `pause_ms` apart;
 * the faults of each cycle into faults[]. */
static void huge_cycles(long faults[4], long pause_ms) {
  size_t size = test_scale(256 * MIB);
  for (int cycle = 0; cycle < 4; cycle++) {
    long before = test_minor_faults();
    uint8_t *p = nsalloc_malloc(size);
    CHECK(p != NULL);
    if (!p) return;
    stamp(p, size, (uint64_t)cycle);
    CHECK(stamped(p, size, (uint64_t)cycle));
    nsalloc_free(p);
    faults[cycle] = test_minor_faults() - before;
    fprintf(stderr, "cycle %d: %ld minor faults\n", cycle, faults[cycle]);
    if (pause_ms) test_sleep_ms(pause_ms);
  }
}

/* Default options, cycles back to back: the cached segment is taken again
 * resident (a few faults are the copy's own metadata). */
static void test_huge_cycles_refault_little(void) {
  long faults[4];
  huge_cycles(faults, 0);
  if (test_instrumented()) return;
  CHECK(faults[0] >= 60000); /* 65,536 pages: the measure works */
  CHECK(faults[1] + faults[2] + faults[3] <= 64);
}

/* purge_delay_ms=-1 keeps the freed block resident however long the
 * program waits (1.2 s here, past the default delay). */
static void test_huge_cycles_never_purge(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, -1), 0);
  long faults[4];
  huge_cycles(faults, 1200);
  if (test_instrumented()) return;
  CHECK(faults[1] + faults[2] + faults[3] <= 64);
}

/* The control: by default the same pauses give the block back (the purger,
 * after the 500 ms delay), so every cycle faults it all in again. */
static void test_huge_cycles_idle_refault(void) {
  long faults[4];
  huge_cycles(faults, 1200);
  if (test_instrumented()) return;
  CHECK(faults[1] >= 60000 && faults[2] >= 60000 && faults[3] >= 60000);
}

/* realloc growing a written 20 MiB block to 40 MiB: the faults of the
 * realloc and of reading the old bytes back. `alignment` 0: malloc. */
static long grow_faults(size_t alignment) {
  nsalloc_collect(true); /* nothing resident cached: the new part stays fresh */
  size_t size = test_scale(20 * MIB);
  uint8_t *p = alignment ? nsalloc_aligned_alloc(alignment, size) : nsalloc_malloc(size);
  CHECK(p != NULL);
  if (!p) return 0;
  stamp(p, size, 7);
  long before = test_minor_faults();
  uint8_t *q = nsalloc_realloc(p, 2 * size);
  CHECK(q != NULL);
  if (!q) return 0;
  CHECK(stamped(q, size, 7));
  long faults = test_minor_faults() - before;
  fprintf(stderr, "realloc %zu -> %zu bytes: %ld minor faults\n", size, 2 * size, faults);
  nsalloc_free(q);
  return faults;
}

/* Where pages move (Linux), the block's pages move into the larger segment:
 * its 5,120 pages are not written again. */
static void test_huge_realloc_moves_pages(void) {
  long faults = grow_faults(0);
  if (test_instrumented()) return;
  CHECK(faults <= 64);
}

/* The control: a block aligned to 8 MiB starts past its segment's first
 * slice and is copied into a new block, which faults every page it writes. */
static void test_huge_realloc_aligned_copies(void) {
  long faults = grow_faults(8 * MIB);
  if (test_instrumented()) return;
  CHECK(faults >= 5000);
}

/* Threads replacing huge blocks at once: 4 blocks each of 3-12 MiB, malloc,
 * calloc, aligned_alloc and realloc, each page stamped with the block's
 * own seed and checked before it goes; calloc's pages read zero first. */
enum { THREADS = 4, THREAD_LIVE = 4 };
static void *replace_huge_blocks(void *arg) {
  uint64_t rng = (uint64_t)(uintptr_t)arg, serial = rng << 32;
  uint8_t *blocks[THREAD_LIVE] = {0};
  size_t sizes[THREAD_LIVE] = {0};
  uint64_t seeds[THREAD_LIVE] = {0};
  int failures = 0;
  size_t steps = test_scale(60);
  for (size_t s = 0; s < steps; s++) {
    size_t k = (size_t)(test_random(&rng) % THREAD_LIVE);
    if (blocks[k] && !stamped(blocks[k], sizes[k], seeds[k])) failures++;
    size_t size = 3 * MIB + (size_t)(test_random(&rng) % (9 * MIB));
    switch (test_random(&rng) % 4) {
    case 0:
      nsalloc_free(blocks[k]);
      blocks[k] = nsalloc_calloc(1, size);
      if (blocks[k] && !stamp_check(blocks[k], size, 0, true)) failures++;
      break;
    case 1:
      nsalloc_free(blocks[k]);
      blocks[k] = nsalloc_aligned_alloc((size_t)1 << (16 + test_random(&rng) % 7), size);
      break;
    case 2:
      blocks[k] = nsalloc_realloc(blocks[k], size);
      if (blocks[k] && sizes[k] && !stamped(blocks[k], sizes[k] < size ? sizes[k] : size, seeds[k]))
        failures++;
      break;
    default:
      nsalloc_free(blocks[k]);
      blocks[k] = nsalloc_malloc(size);
      break;
    }
    if (!blocks[k]) {
      failures++;
      break;
    }
    sizes[k] = size;
    seeds[k] = ++serial;
    stamp(blocks[k], size, seeds[k]);
  }
  for (size_t k = 0; k < THREAD_LIVE; k++) {
    if (blocks[k] && !stamped(blocks[k], sizes[k], seeds[k])) failures++;
    nsalloc_free(blocks[k]);
  }
  return (void *)(uintptr_t)failures;
}

static void test_huge_threads_replace(void) {
  pthread_t threads[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    CHECK(pthread_create(&threads[i], NULL, replace_huge_blocks, (void *)(i + 1)) == 0);
  for (int i = 0; i < THREADS; i++) {
    void *failures;
    pthread_join(threads[i], &failures);
    CHECK_EQ((uintptr_t)failures, 0);
  }
}

static size_t address_space(void) {
  unsigned long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  CHECK(f != NULL && fscanf(f, "%lu", &pages) == 1);
  if (f) fclose(f);
  return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* An address space that cached segments fill: with 1 GiB left, 10 MiB
 * blocks are allocated until one fails with ENOMEM (the control: the limit
 * binds), then all freed, which leaves them mapped in the cache. A 512 MiB
 * block then fits only if the copy gives the cache back when the OS refuses
 * a mapping; before, it failed with 1 GiB free. RLIMIT_AS would also bind
 * the shadow memory of valgrind and the sanitizers: plain builds only. */
enum { FILL_BLOCKS = 200 };
static void test_full_address_space_drops_cache(void) {
  if (test_instrumented()) {
    fprintf(stderr, "note: instrumented build: RLIMIT_AS would bind the tool's own memory\n");
    return;
  }
  struct rlimit old;
  CHECK_EQ(getrlimit(RLIMIT_AS, &old), 0);
  struct rlimit limit = {address_space() + 1024 * MIB, old.rlim_max};
  CHECK_EQ(setrlimit(RLIMIT_AS, &limit), 0);
  static void *blocks[FILL_BLOCKS];
  size_t count = 0;
  int error = 0;
  for (; count < FILL_BLOCKS; count++) {
    errno = 0;
    if (!(blocks[count] = nsalloc_malloc(10 * MIB))) {
      error = errno;
      break;
    }
  }
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  fprintf(stderr, "%zu blocks of 10 MiB before ENOMEM (%zu MiB reserved)\n", count,
          stats.reserved_bytes / MIB);
  CHECK(count > 50 && count < FILL_BLOCKS);
  CHECK_EQ(error, ENOMEM);
  for (size_t i = 0; i < count; i++)
    nsalloc_free(blocks[i]);
  nsalloc_stats(&stats);
  fprintf(stderr, "all freed: %zu MiB still reserved by the cache\n", stats.reserved_bytes / MIB);
  void *big = nsalloc_malloc(512 * MIB);
  CHECK(big != NULL);
  nsalloc_free(big);
  CHECK_EQ(setrlimit(RLIMIT_AS, &old), 0);
}

/* A heap's only segment stays on the heap when its last block goes (no
 * trip through the cache on every malloc/free of a large block), and
 * collect(true) releases it (the control: the same heap statistics read
 * 0 then). */
static void test_large_pair_keeps_segment(void) {
  for (int i = 0; i < 3; i++)
    nsalloc_free(nsalloc_malloc(MIB));
  nsalloc_stats_t heap;
  nsalloc_heap_stats(NULL, &heap);
  CHECK(heap.reserved_bytes > 0);
  CHECK_EQ(heap.page_bytes, 0);
  nsalloc_collect(true);
  nsalloc_heap_stats(NULL, &heap);
  CHECK_EQ(heap.reserved_bytes, 0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_large_churn_refaults_little),    TEST(test_large_churn_without_cache_refaults),
      TEST(test_huge_cycles_refault_little),     TEST(test_huge_cycles_never_purge),
      TEST(test_huge_cycles_idle_refault),       TEST(test_huge_threads_replace),
      TEST(test_huge_realloc_moves_pages),       TEST(test_huge_realloc_aligned_copies),
      TEST(test_full_address_space_drops_cache), TEST(test_large_pair_keeps_segment),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
