/*
 * test_idle.c - the purge policy, measured in the process's own resident set
 * (/proc/self/statm) and minor faults (getrusage):
 *   - a program that frees what it allocated and then sleeps, never calling
 *     the allocator, is back within 1 MiB + 10% of its live bytes of the
 *     resident set it had before, 1 s after its last free (the purger thread
 *     does that: nothing else of the copy runs meanwhile);
 *   - the control: with purge_thread=0 the same program keeps far more;
 *   - a program that frees and allocates the same bytes again and again
 *     faults almost nothing in after the first round (freed memory ages for
 *     the purge delay before it goes back);
 *   - purge_delay_ms=-1 keeps everything resident, past segment_cache too;
 *   - segment_cache=0 unmaps every empty segment at once.
 * Each case runs in its own process (ctest names one per run): a resident
 * set is a whole-process figure. Under valgrind and the sanitizers, whose
 * shadow memory is resident too, the scenarios run (the purger races the
 * program's threads there) but the memory figures are not asserted.
 */
#include "nsalloc.h"
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

static size_t resident_bytes(void) {
  unsigned long size = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f || fscanf(f, "%lu %lu", &size, &resident) != 2) {
    fprintf(stderr, "cannot read /proc/self/statm\n");
    test_failures++;
  }
  if (f) fclose(f);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* The blocks of one round: 256 MiB of 32..512-byte blocks. The array lives in
 * .bss and is written once before any measurement, so it is part of every
 * baseline. */
#define ROUND_BYTES ((size_t)256 * MIB)
static void *blocks[ROUND_BYTES / 200];
static size_t block_count;

/* Allocate a round (writing every block), returning the bytes asked for. */
static size_t allocate_round(size_t bytes) {
  uint64_t seed = 22;
  size_t total = 0;
  block_count = 0;
  while (total < bytes && block_count < sizeof blocks / sizeof blocks[0]) {
    size_t size = 32 + (size_t)(test_random(&seed) % 31) * 16;
    void *p = nsalloc_malloc(size);
    CHECK(p != NULL);
    if (!p) break;
    memset(p, 0x5a, size);
    blocks[block_count++] = p;
    total += size;
  }
  return total;
}

/* Free the round's blocks from index `first` on. */
static void free_round(size_t first) {
  for (size_t i = first; i < block_count; i++)
    nsalloc_free(blocks[i]);
  block_count = first;
}

static size_t round_bytes(void) {
  return test_scale(ROUND_BYTES);
}

/* Allocate a round, keep the blocks allocated first up to `kept` bytes (a
 * long-lived structure built before the churn), free the others, sleep 1 s
 * without calling the allocator. Returns the resident bytes beyond the
 * baseline and the kept bytes (0 when the figures mean nothing here). */
static size_t idle_excess(size_t kept) {
  memset(blocks, 0, sizeof blocks);
  size_t baseline = resident_bytes();
  allocate_round(round_bytes());
  size_t first_freed = 0, live = 0;
  uint64_t seed = 22;
  while (live < kept) /* the same sizes allocate_round drew */
    live += 32 + (size_t)(test_random(&seed) % 31) * 16, first_freed++;
  free_round(first_freed);
  test_sleep_ms(1000);
  size_t resident = resident_bytes();
  size_t excess = resident > baseline + live ? resident - baseline - live : 0;
  fprintf(stderr, "baseline %zu KiB, live %zu KiB, after 1 s idle %zu KiB: excess %zu KiB\n",
          baseline >> 10, live >> 10, resident >> 10, excess >> 10);
  free_round(0);
  return excess;
}

static size_t idle_bound(size_t kept) {
  return MIB + kept / 10;
}

static void check_idle_bound(size_t kept) {
  size_t excess = idle_excess(kept);
  if (test_instrumented()) {
    fprintf(stderr, "note: instrumented build: resident set not asserted\n");
    return;
  }
  CHECK(excess <= idle_bound(kept));
}

static void test_idle_all_freed(void) {
  check_idle_bound(0);
}

static void test_idle_32mib_kept(void) {
  check_idle_bound(32 * MIB);
}

/* The control: without the purger thread nothing gives the freed memory
 * back while the program sleeps, and the bound fails. */
static void test_idle_without_purger_fails(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 0), 0);
  size_t excess = idle_excess(0);
  if (test_instrumented()) return;
  CHECK(excess > idle_bound(0));
}

/* Minor faults of each of `count` rounds of allocating and freeing 256 MiB
 * back to back. */
static void rounds_faults(long *faults, int count) {
  for (int round = 0; round < count; round++) {
    long before = test_minor_faults();
    allocate_round(round_bytes());
    free_round(0);
    faults[round] = test_minor_faults() - before;
  }
  fprintf(stderr, "minor faults per round: %ld %ld %ld %ld\n", faults[0], faults[1], faults[2],
          faults[3]);
}

/* Faults a round may take that are not refaults: the second round's pages
 * are laid out in other segments than the first's (the cache hands the last
 * released first), so it writes a few slices the first never touched, about
 * 860 pages of the 65,536 here; later rounds repeat the second's layout. */
#define LAYOUT_FAULTS 1300 /* 2% of the round's pages */

/* Four rounds back to back: after the first, the freed memory is still
 * resident when the next round wants it (the cache ages as a whole while it
 * is in use, however long a round lasts). */
static void test_rounds_refault_nothing(void) {
  long faults[4];
  rounds_faults(faults, 4);
  if (test_instrumented()) return;
  CHECK(faults[1] <= LAYOUT_FAULTS);
  CHECK(faults[2] + faults[3] <= 64);
}

/* purge_delay_ms=-1: nothing is given back, not after a second idle, not
 * past segment_cache (2 segments here), and later rounds fault nothing. */
static void test_never_purge_keeps_everything(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, -1), 0);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_SEGMENT_CACHE, 2), 0);
  size_t baseline = resident_bytes();
  allocate_round(round_bytes());
  free_round(0);
  test_sleep_ms(1200);
  size_t resident = resident_bytes();
  fprintf(stderr, "resident after idle: %zu KiB over baseline\n", (resident - baseline) >> 10);
  long faults[4];
  rounds_faults(faults, 4);
  if (test_instrumented()) return;
  CHECK(resident - baseline >= ROUND_BYTES);
  CHECK(faults[0] <= LAYOUT_FAULTS);
  CHECK(faults[1] + faults[2] + faults[3] <= 64);
}

/* segment_cache=0: an emptied segment is unmapped at once (and with the
 * default of 256 it is kept, the control). 16 MiB take 5 segments; the 3
 * that hold the last page of some size class stay on the heap (page.c keeps
 * a bin's only page), the 2 others empty. */
static size_t unmaps_after_round(long cache) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_SEGMENT_CACHE, cache), 0);
  nsalloc_stats_t before, after;
  nsalloc_stats(&before);
  allocate_round(16 * MIB);
  free_round(0);
  nsalloc_stats(&after);
  return (size_t)(after.os_unmaps - before.os_unmaps);
}

static void test_segment_cache_option(void) {
  CHECK_EQ(unmaps_after_round(256), 0);
  CHECK(unmaps_after_round(0) >= 2);
  CHECK_EQ(unmaps_after_round(256), 0);
}

/* CPU time the whole process used, in milliseconds. */
static long cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The purger sleeps while nothing is left to purge. A purge is scheduled
 * when a 1 MiB block's slices are freed, and the block taken back before it
 * is due: at the deadline those slices are in use again and the segment has
 * nothing to give back. The purger must then drop that deadline, not find it
 * due again and again: a thread spinning through the idle second would use
 * about as much CPU time as the second lasts (under valgrind, which runs one
 * thread at a time, it starved the program for minutes). */
static void test_idle_purger_sleeps(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 20), 0);
  void *keep = nsalloc_malloc(64); /* keeps the segment on the heap */
  void *block = nsalloc_malloc(MIB);
  memset(block, 1, MIB);
  nsalloc_free(block);
  block = nsalloc_malloc(MIB); /* the same slices, before the purge is due */
  memset(block, 2, MIB);
  CHECK(test_threads_named_become(test_purger_name(nsalloc_prefix()), 1, 5000)); /* it runs */
  long cpu_before = cpu_ms();
  test_sleep_ms(1000);
  long cpu = cpu_ms() - cpu_before;
  fprintf(stderr, "CPU time over 1 s idle: %ld ms\n", cpu);
  CHECK(cpu < 100);
  nsalloc_free(block);
  nsalloc_free(keep);
}

/* The copy's committed bytes after `ms` without a call into it. */
static size_t committed_after_idle(long ms) {
  test_sleep_ms(ms);
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  fprintf(stderr, "committed after %ld ms idle: %zu KiB\n", ms, stats.committed_bytes >> 10);
  return stats.committed_bytes;
}

/* The first memory a program gives back may come from any path that frees,
 * and each must start the purger: before, only malloc's slow path and free()
 * did, so a program whose first release was one of these kept it all while
 * idle (with purge_thread=1 but no thread, the cache was not even bounded). */
#define IDLE_FREED_BYTES     (64 * MIB)
#define IDLE_COMMITTED_BOUND (2 * MIB)

static void test_idle_after_heap_destroy(void) {
  nsalloc_heap_t *heap = nsalloc_heap_new();
  for (size_t i = 0; i < IDLE_FREED_BYTES / 4096; i++)
    memset(nsalloc_heap_malloc(heap, 4096), 1, 4096);
  nsalloc_heap_destroy(heap);
  CHECK(committed_after_idle(1000) < IDLE_COMMITTED_BOUND);
}

static void test_idle_after_huge_realloc(void) {
  void *p = nsalloc_malloc(IDLE_FREED_BYTES);
  memset(p, 1, IDLE_FREED_BYTES);
  p = nsalloc_realloc(p, MIB); /* a new block; the old segment goes to the cache */
  CHECK(committed_after_idle(1000) < IDLE_COMMITTED_BOUND + MIB);
  nsalloc_free(p);
}

/* A thread's blocks freed by another thread (remote frees), then the thread
 * exits: its segments are abandoned with nothing live. */
static void *allocate_and_wait(void *arg) {
  pthread_barrier_t *barrier = arg;
  for (size_t i = 0; i < IDLE_FREED_BYTES / 4096; i++)
    memset(blocks[i] = nsalloc_malloc(4096), 1, 4096);
  pthread_barrier_wait(barrier); /* the main thread frees them */
  pthread_barrier_wait(barrier);
  return NULL;
}

static void test_idle_after_thread_exit(void) {
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  pthread_t thread;
  CHECK_EQ(pthread_create(&thread, NULL, allocate_and_wait, &barrier), 0);
  pthread_barrier_wait(&barrier);
  for (size_t i = 0; i < IDLE_FREED_BYTES / 4096; i++)
    nsalloc_free(blocks[i]);
  pthread_barrier_wait(&barrier);
  pthread_join(thread, NULL);
  CHECK(committed_after_idle(1000) < IDLE_COMMITTED_BOUND);
  pthread_barrier_destroy(&barrier);
}

/* A thread allocates, exits with its blocks live, and another thread frees
 * them (remote frees into abandoned segments), all but one. Before, the
 * freed blocks sat on their pages' remote lists, which only a thread
 * adopting the segment collects: 64 MiB stayed committed while idle. */
static void *allocate_and_exit(void *arg) {
  (void)arg;
  for (size_t i = 0; i < IDLE_FREED_BYTES / 4096; i++)
    memset(blocks[i] = nsalloc_malloc(4096), 1, 4096);
  return NULL;
}

static void test_idle_after_exit_then_remote_free(void) {
  pthread_t thread;
  CHECK_EQ(pthread_create(&thread, NULL, allocate_and_exit, NULL), 0);
  pthread_join(thread, NULL);
  size_t count = IDLE_FREED_BYTES / 4096, kept = count / 2;
  for (size_t i = 0; i < count; i++)
    if (i != kept) nsalloc_free(blocks[i]);
  CHECK(committed_after_idle(1000) < IDLE_COMMITTED_BOUND);
  CHECK_EQ(((unsigned char *)blocks[kept])[4095], 1); /* the live block is intact */
  nsalloc_free(blocks[kept]);
}

/* The cache ages as a whole while a program uses it, but not for ever: a
 * program that freed 192 MiB of huge blocks and then allocates and frees a
 * 3 MiB block every 50 ms took a segment from the cache each time, so none
 * of the 192 MiB ever became due (the red-team's case: 200 MiB resident for
 * as long as it ran). Now a cached segment goes back at most ten delays
 * after it was cached (here 1 s), however busy the cache. */
#define BUSY_CACHE_BLOCKS 8
#define BUSY_CACHE_BLOCK  (24 * MIB)

static void test_busy_cache_still_ages(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 100), 0);
  for (int i = 0; i < BUSY_CACHE_BLOCKS; i++)
    memset(blocks[i] = nsalloc_malloc(BUSY_CACHE_BLOCK), 1, BUSY_CACHE_BLOCK);
  for (int i = 0; i < BUSY_CACHE_BLOCKS; i++)
    nsalloc_free(blocks[i]);
  for (int round = 0; round < 40; round++) { /* 2 s */
    void *p = nsalloc_malloc(3 * MIB);
    CHECK(p != NULL);
    memset(p, 2, 4096);
    nsalloc_free(p);
    test_sleep_ms(50);
  }
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  fprintf(stderr, "committed after 2 s of a busy cache: %zu KiB\n", stats.committed_bytes >> 10);
  CHECK(stats.committed_bytes < 8 * MIB);
}

/* The same with purge_delay_ms=0, where nothing ever noted a purge before
 * the remote frees: their notes are the first pending, and the free that
 * notes one must start the purger (as every path that schedules a purge
 * does). Before, the purger never started: 64 MiB stayed committed. */
static void test_idle_after_exit_then_remote_free_at_once(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 0), 0);
  test_idle_after_exit_then_remote_free();
}

/* A remote free onto a parked page while its thread is exiting, after the
 * exit's own sweep of its parked pages and before its segments are
 * abandoned (heap_abandon), finds the exiting heap: it notes no purger
 * pass, and later frees onto the page do not notify again. With
 * purge_delay_ms=0 no other note follows, so segment_abandon must see the
 * flag and note the pass itself. Each round a thread allocates a 1 MiB
 * block (a large page, parked from birth) and frees 3,000 blocks of its
 * own (pages for its exit to settle), and the main thread frees the large
 * block as the thread returns, after a varying spin. Before, 5 to 38 of 100
 * rounds (by spin) kept the block's page for good. */
#define EXIT_RACE_ROUNDS 60
static void *exit_race_block;
static atomic_int exit_race_leaving;

static void *allocate_then_leave(void *arg) {
  (void)arg;
  exit_race_block = nsalloc_malloc(MIB);
  memset(exit_race_block, 1, MIB);
  for (size_t i = 0; i < 3000; i++)
    blocks[i] = nsalloc_malloc(16 + (i % 200) * 16);
  for (size_t i = 0; i < 3000; i++)
    nsalloc_free(blocks[i]);
  atomic_store(&exit_race_leaving, 1);
  return NULL;
}

/* Page bytes within `ms` of waiting fall below `bound`? */
static bool page_bytes_fall_below(size_t bound, long ms) {
  for (long waited = 0;; waited += 5) {
    nsalloc_stats_t stats;
    nsalloc_stats(&stats);
    if (stats.page_bytes < bound) return true;
    if (waited >= ms) return false;
    test_sleep_ms(5);
  }
}

static void test_idle_after_exit_racing_remote_free(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 0), 0);
  void *keep = nsalloc_malloc(64); /* the main thread's heap, at one small page */
  int kept = 0;
  int rounds = (int)test_scale(EXIT_RACE_ROUNDS);
  for (int round = 0; round < rounds && !kept; round++) {
    atomic_store(&exit_race_leaving, 0);
    pthread_t thread;
    CHECK_EQ(pthread_create(&thread, NULL, allocate_then_leave, NULL), 0);
    while (!atomic_load(&exit_race_leaving))
      test_spin_pause();
    for (volatile long spin = 0; spin < (round % 6) * 20000; spin++)
      continue;
    nsalloc_free(exit_race_block);
    pthread_join(thread, NULL);
    if (!page_bytes_fall_below(MIB, 2000)) {
      fprintf(stderr, "round %d: the freed block's page stayed\n", round);
      kept = 1;
    }
  }
  CHECK(!kept);
  nsalloc_free(keep);
}

/* Fill and free IDLE_FREED_BYTES in 4 KiB blocks. */
static void fill_and_free(void) {
  for (size_t i = 0; i < IDLE_FREED_BYTES / 4096; i++)
    memset(blocks[i] = nsalloc_malloc(4096), 1, 4096);
  for (size_t i = 0; i < IDLE_FREED_BYTES / 4096; i++)
    nsalloc_free(blocks[i]);
}

/* purge_delay_ms changed at run time. What is freed under -1 stays, and
 * goes back once a delay is set again (before, it stayed for good: no
 * deadline had been set, and a program that had only freed under -1 had no
 * purger either). Set to -1 right after a free, the purge pending does not
 * happen (before, deadlines set earlier still fired). */
static void test_purge_delay_switched(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, -1), 0);
  fill_and_free();
  CHECK(committed_after_idle(300) >= IDLE_FREED_BYTES - MIB);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 100), 0);
  CHECK(committed_after_idle(1000) < IDLE_COMMITTED_BOUND);
  fill_and_free();
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, -1), 0);
  CHECK(committed_after_idle(500) >= IDLE_FREED_BYTES - MIB);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 100), 0);
  CHECK(committed_after_idle(1000) < IDLE_COMMITTED_BOUND);
}

/* A fork() child starts no purger of its own (the parent had one: it is
 * multi-threaded, and the child may only make async-signal-safe calls), and
 * setting purge_thread=1 there allows one again (the control: the count
 * sees a purger). ThreadSanitizer kills a child that creates a thread, so
 * the control runs only in plain builds. */
static void test_fork_child_starts_no_purger(void) {
  const char *purger = test_purger_name(nsalloc_prefix());
  allocate_round(16 * MIB);
  free_round(0);
  CHECK(test_threads_named_become(purger, 1, 5000));
  pid_t child = fork();
  if (child == 0) {
    allocate_round(16 * MIB);
    free_round(0);
    int status = test_threads_named_become(purger, 1, 200) ? 1 : 0; /* none starts */
    if (!test_instrumented()) {
      nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 1);
      allocate_round(16 * MIB);
      free_round(0);
      if (!test_threads_named_become(purger, 1, 5000)) status |= 2;
    }
    _exit(status);
  }
  int status = -1;
  CHECK(child > 0 && waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv) {
  /* The default everywhere but in ThreadSanitizer builds (options.c). */
  nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 1);
  static const test_case tests[] = {
      TEST(test_idle_all_freed),
      TEST(test_idle_32mib_kept),
      TEST(test_idle_without_purger_fails),
      TEST(test_rounds_refault_nothing),
      TEST(test_never_purge_keeps_everything),
      TEST(test_segment_cache_option),
      TEST(test_fork_child_starts_no_purger),
      TEST(test_idle_purger_sleeps),
      TEST(test_idle_after_heap_destroy),
      TEST(test_idle_after_huge_realloc),
      TEST(test_idle_after_thread_exit),
      TEST(test_idle_after_exit_then_remote_free),
      TEST(test_idle_after_exit_then_remote_free_at_once),
      TEST(test_idle_after_exit_racing_remote_free),
      TEST(test_busy_cache_still_ages),
      TEST(test_purge_delay_switched),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
