/*
 * test_huge.c - huge blocks (above half a segment, each in a segment of its
 * own): reuse of cached segments, trimming of a larger segment's tail,
 * zeroing of reused memory, and the opt-in huge_pages advice.
 */
#if defined(__linux__)
#define _GNU_SOURCE /* mincore */
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "nsalloc.h"
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

/* Linux moves cached pages into new huge segments (os_moves_pages), so a
 * reused block need not stay at its old address. */
#if defined(__linux__)
#define PAGES_MOVE 1
#else
#define PAGES_MOVE 0
#endif

static size_t committed_bytes(void) {
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  return stats.committed_bytes;
}

static bool all_bytes(const uint8_t *p, size_t size, uint8_t value) {
  for (size_t i = 0; i < size; i++)
    if (p[i] != value) return false;
  return true;
}

/* Resident OS pages in [p, p + size), or SIZE_MAX where it cannot be told. */
static size_t resident_pages(const void *p, size_t size) {
#if defined(__linux__)
  size_t page = (size_t)sysconf(_SC_PAGESIZE), count = 0;
  unsigned char vec[256];
  for (size_t off = 0; off < size; off += sizeof vec * page) {
    size_t chunk = size - off < sizeof vec * page ? size - off : sizeof vec * page;
    if (mincore((char *)p + off, chunk, vec) != 0) return SIZE_MAX;
    for (size_t i = 0; i < (chunk + page - 1) / page; i++)
      count += vec[i] & 1;
  }
  return count;
#else
  (void)p, (void)size;
  return SIZE_MAX;
#endif
}

static int messages;
static void count_message(const char *message, void *arg) {
  (void)arg;
  messages +=
      strstr(message, "no block is allocated") != NULL || strstr(message, "interior") != NULL;
}

/* A purge delay of a minute (returns the old delay), the cache emptied and
 * 256 MiB of 1 MiB blocks live (untouched but for their first page; in
 * normal segments, so no huge request takes their segments later): the
 * resident budget of the cache grows with the bytes in use, so a huge
 * segment freed next stays cached and resident, and a reused segment's tail
 * is still trimmed (purge delay -1 would keep that too). */
enum { BALLAST = 256 };
static void *ballast[BALLAST];
static long keep_cache_resident(void) {
  long delay = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 60000);
  nsalloc_collect(true);
  for (int i = 0; i < BALLAST; i++)
    CHECK((ballast[i] = nsalloc_malloc(MIB)) != NULL);
  return delay;
}

static void restore_purging(long delay) {
  for (int i = 0; i < BALLAST; i++)
    nsalloc_free(ballast[i]);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay);
}

/* A huge block of `size` bytes filled with `fill`, then freed: its segment is
 * the resident one in the cache. Returns its (now stale) address. */
static uint8_t *freed_dirty_block(size_t size, uint8_t fill) {
  uint8_t *p = nsalloc_malloc(size);
  CHECK(p != NULL);
  if (p) memset(p, fill, size);
  nsalloc_free(p);
  return p;
}

/* A stale pointer into a freed block's memory that the copy still holds
 * (cached, no block): free and realloc report it, and nothing changes. */
static void check_stale_pointer_reported(uint8_t *stale) {
  nsalloc_set_foreign_policy(NSALLOC_POLICY_REPORT, NULL);
  nsalloc_set_message_handler(count_message, NULL);
  messages = 0;
  nsalloc_free(stale);
  CHECK(nsalloc_realloc(stale, 100) == NULL);
  CHECK_EQ(messages, 2);
  nsalloc_set_message_handler(NULL, NULL);
  nsalloc_set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
}

/* Where pages move (Linux: docs/architecture.md, "The segment cache"), a
 * smaller request takes the units it needs from the end of a larger cached
 * segment into a new mapping, pages and contents as they were (not
 * refaulted), and the rest stays cached: a stale pointer into it is still
 * this copy's memory but no block. */
#if PAGES_MOVE
static void test_smaller_block_reuses_and_trims(void) {
  long delay = keep_cache_resident();
  uint8_t *big = freed_dirty_block(20 * MIB, 0xA5);
  size_t committed_big = committed_bytes();
  nsalloc_stats_t before, after;
  nsalloc_stats(&before);
  uint8_t *small = nsalloc_malloc(6 * MIB);
  nsalloc_stats(&after);
  CHECK(small != NULL && small != big);
  CHECK_EQ(after.os_maps, before.os_maps + 1); /* the new segment's mapping */
  /* the big block's last pages (2 MiB units: the 6 MiB block takes units 7-10 of
   * 11, all but 64 KiB of them written; this build's default geometry) */
  CHECK(small && all_bytes(small, 6 * MIB, 0xA5));
  size_t moved = resident_pages(small, 6 * MIB);
  CHECK(moved == 6 * MIB / 4096 || moved == SIZE_MAX);
  /* the 11 units of the 20 MiB block: 4 moved, 7 cached, all still counted */
  CHECK(after.committed_bytes + MIB >= committed_big);
  CHECK(nsalloc_usable_size(small) >= 6 * MIB && nsalloc_usable_size(small) < 7 * MIB);
  check_stale_pointer_reported(big + 12 * MIB);
  CHECK(nsalloc_owns(big + 12 * MIB) && !nsalloc_owns(big + 16 * MIB)); /* 14 MiB left */
  nsalloc_free(small);
  restore_purging(delay);
}
#else
/* Elsewhere a freed huge block's segment stays cached and resident (within
 * the purge delay and the cache's resident budget), and a smaller request
 * takes it: same address, no new mapping, and the whole units of the tail
 * the new block does not cover are given back. */
static void test_smaller_block_reuses_and_trims(void) {
  long delay = keep_cache_resident();
  uint8_t *big = freed_dirty_block(20 * MIB, 0xA5);
  size_t committed_big = committed_bytes(); /* the cached segment is still resident */
  nsalloc_stats_t before, after;
  nsalloc_stats(&before);
  uint8_t *small = nsalloc_malloc(6 * MIB);
  nsalloc_stats(&after);
  CHECK(small == big);
  CHECK_EQ(after.os_maps, before.os_maps);
  CHECK(all_bytes(small, 6 * MIB, 0xA5)); /* resident: not refaulted */
  /* whole units kept: the 6 MiB block's four (8 MiB), the 20 MiB block's
   * other 12 MiB given back */
  CHECK(committed_big - after.committed_bytes >= 12 * MIB);
  size_t tail = resident_pages(big + 8 * MIB, 12 * MIB);
  CHECK(tail == 0 || tail == SIZE_MAX);
  CHECK(nsalloc_usable_size(small) >= 6 * MIB && nsalloc_usable_size(small) < 7 * MIB);
  /* the old block's trimmed tail is still this copy's */
  check_stale_pointer_reported(big + 12 * MIB);
  CHECK(all_bytes(small, 6 * MIB, 0xA5));
  nsalloc_free(small);
  restore_purging(delay);
}
#endif

/* calloc on a reused segment: its front is resident and dirty, its tail was
 * purged (or, where pages move, all of it is dirty moved pages); both must
 * read as zero, and a larger block than the one before counts its new tail
 * as committed again. */
static void test_calloc_on_reused_segment_is_zero(void) {
  long delay = keep_cache_resident();
  uint8_t *p = freed_dirty_block(24 * MIB, 0x5A);
  uint8_t *q = nsalloc_malloc(8 * MIB); /* keeps 5 units resident, purges 7 (moves 5) */
  CHECK(PAGES_MOVE || q == p);
  memset(q, 0x5A, 8 * MIB);
  nsalloc_free(q);
  size_t committed_small = committed_bytes();
  uint8_t *z = nsalloc_calloc(1, 20 * MIB);
  CHECK(PAGES_MOVE || z == p);
  CHECK(z && all_bytes(z, 20 * MIB, 0));
  /* in place, the regrown tail is committed again (moved pages were) */
  CHECK(PAGES_MOVE || committed_bytes() >= committed_small + 10 * MIB);
  nsalloc_free(z);
  restore_purging(delay);
}

/* Contents survive realloc across huge sizes that reuse cached segments. */
static void test_realloc_through_cached_segments(void) {
  uint64_t rng = 42;
  size_t size = 3 * MIB;
  uint8_t *p = nsalloc_malloc(size);
  test_fill(p, size, 1);
  for (int i = 0; i < 40; i++) {
    uint8_t *spare = nsalloc_malloc(3 * MIB + test_random(&rng) % (30 * MIB));
    size_t next = 3 * MIB + test_random(&rng) % (30 * MIB);
    uint8_t *moved = nsalloc_realloc(p, next);
    CHECK(moved != NULL);
    CHECK(test_verify(moved, size < next ? size : next, 1));
    test_fill(moved, next, 1);
    nsalloc_free(spare);
    p = moved;
    size = next;
  }
  nsalloc_free(p);
}

/* Random huge sizes and alignments through malloc, calloc, aligned_alloc and
 * realloc, reusing and trimming cached segments: every calloc reads zero,
 * contents survive, and once everything is freed and collected the copy's
 * committed memory is back to where it started but for the cached segments'
 * headers (the accounting of trimmed and regrown tails balances). */
static void test_random_cycles_balance_committed_memory(void) {
  nsalloc_collect(true);
  size_t committed_before = committed_bytes();
  enum { LIVE = 6 };
  uint8_t *blocks[LIVE] = {0};
  size_t sizes[LIVE] = {0};
  uint64_t rng = 7;
  /* A third under the sanitizers and valgrind, where writing and checking
   * 3-27 MiB a step took most of a minute (ThreadSanitizer). */
  int steps = test_instrumented() ? 40 : 120;
  for (int step = 0; step < steps; step++) {
    size_t k = (size_t)(test_random(&rng) % LIVE);
    size_t size = 3 * MIB + (size_t)(test_random(&rng) % (24 * MIB));
    if (blocks[k]) CHECK(test_verify(blocks[k], sizes[k] < 4096 ? sizes[k] : 4096, k));
    switch (test_random(&rng) % 4) {
    case 0:
      nsalloc_free(blocks[k]);
      blocks[k] = nsalloc_calloc(1, size);
      CHECK(blocks[k] && all_bytes(blocks[k], size, 0));
      break;
    case 1:
      nsalloc_free(blocks[k]);
      blocks[k] = nsalloc_aligned_alloc((size_t)1 << (22 + test_random(&rng) % 3), size);
      break;
    case 2:
      blocks[k] = blocks[k] ? nsalloc_realloc(blocks[k], size) : nsalloc_malloc(size);
      if (blocks[k] && sizes[k])
        CHECK(test_verify(blocks[k], sizes[k] < 4096 ? sizes[k] : 4096, k));
      break;
    default:
      nsalloc_free(blocks[k]);
      blocks[k] = nsalloc_malloc(size);
      break;
    }
    CHECK(blocks[k] != NULL);
    if (!blocks[k]) return;
    sizes[k] = size;
    memset(blocks[k] + 4096, 0xC3, size - 4096); /* dirty what the next reuse finds */
    test_fill(blocks[k], 4096, k);
  }
  for (size_t k = 0; k < LIVE; k++)
    nsalloc_free(blocks[k]);
  nsalloc_collect(true);
  /* What stays committed is the headers of the cached segments, 8 KiB each
   * (where pages move, the shrunk huge segments make more of them: 15 here,
   * 35 with purge_thread=0, whose trim purges them before a fill can take
   * them resident; and fills take in segments cached before, so there may
   * be fewer than at the start); a drift in the tails' accounting would be
   * MiBs, or a wrapped, enormous count. */
  size_t committed_after = committed_bytes();
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  fprintf(stderr, "committed: %zu before, %zu after; %zu segments\n", committed_before,
          committed_after, stats.segments);
  CHECK(committed_after <= committed_before + 8 * 65536 &&
        committed_before <= committed_after + 8 * 65536);
}

#if defined(__linux__) && defined(__x86_64__)
/* huge_pages=2 marks a fresh huge segment for transparent huge pages
 * (MADV_HUGEPAGE: "hg" in VmFlags); the default, 1, does not while the copy
 * has seen no second thread (this process: core.huge starts none), and 0
 * never does; normal segments are not marked by it (each check is the
 * other's control). The default's second-thread half is
 * core.segment_huge_pages_huge_blocks_wait_for_a_second_thread. */
static void test_huge_pages_option(void) {
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
    fprintf(stderr, "note: kernel without transparent huge pages; advice not checked\n");
    return;
  }
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_HUGE_PAGES), 1);
  nsalloc_collect(true);
  void *plain = nsalloc_malloc(40 * MIB); /* larger than any cached segment: fresh */
  CHECK(plain && !test_mapping_has_flag(plain, "hg"));
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_HUGE_PAGES, 2), 0);
  void *advised = nsalloc_malloc(48 * MIB);
  CHECK(advised && test_mapping_has_flag(advised, "hg"));
  /* huge_pages leaves normal segments alone (segment_huge_pages=1, the
   * default, advises them only once a second thread made a heap) */
  void *small = nsalloc_malloc(64 * 1024);
  CHECK(small && !test_mapping_has_flag(small, "hg"));
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_HUGE_PAGES, 0), 0);
  void *never = nsalloc_malloc(56 * MIB);
  CHECK(never && !test_mapping_has_flag(never, "hg"));
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_HUGE_PAGES, 3), EINVAL);
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_HUGE_PAGES), 0);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_HUGE_PAGES, 1), 0);
  nsalloc_free(never);
  nsalloc_free(small);
  nsalloc_free(advised);
  nsalloc_free(plain);
}
#endif

int main(int argc, char **argv) {
  static const test_case tests[] = {
    TEST(test_smaller_block_reuses_and_trims),
    TEST(test_calloc_on_reused_segment_is_zero),
    TEST(test_realloc_through_cached_segments),
    TEST(test_random_cycles_balance_committed_memory),
#if defined(__linux__) && defined(__x86_64__)
    TEST(test_huge_pages_option),
#endif
  };
  return test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
