/*
 * test_api.c - every API function of one copy, with its edge cases.
 */
#include "nsalloc.h"
#include "test_util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool aligned(const void *p, size_t alignment) {
  return ((uintptr_t)p & (alignment - 1)) == 0;
}

static size_t in_use_bytes(void) {
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  return stats.in_use_bytes;
}

static void test_malloc_zero_is_unique(void) {
  void *a = nsalloc_malloc(0), *b = nsalloc_malloc(0);
  CHECK(a && b && a != b);
  CHECK(aligned(a, 16) && aligned(b, 16));
  CHECK(nsalloc_usable_size(a) >= 1);
  nsalloc_free(a);
  nsalloc_free(b);
}

/* Sizes from 1 byte to 8 MiB: aligned to 16, usable >= requested, writable,
 * and the size classes waste at most 12.5% above 128 bytes. */
static void test_sizes(void) {
  uint64_t rng = 1;
  for (size_t size = 1; size <= ((size_t)8 << 20); size += size < 1024 ? 1 : size / 7) {
    uint8_t *p = nsalloc_malloc(size);
    CHECK(p != NULL);
    if (!p) continue;
    CHECK(aligned(p, 16));
    size_t usable = nsalloc_usable_size(p);
    CHECK(usable >= size);
    CHECK_EQ(usable, nsalloc_good_size(size));
    if (size > 128 && size <= 64 * 1024) CHECK(usable * 8 <= size * 9);
    uint64_t seed = test_random(&rng);
    test_fill(p, usable, seed);
    CHECK(test_verify(p, usable, seed));
    CHECK(nsalloc_owns(p));
    nsalloc_free(p);
  }
}

static void test_overflow(void) {
  errno = 0;
  CHECK(nsalloc_malloc(SIZE_MAX) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(nsalloc_malloc((size_t)PTRDIFF_MAX + 1) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(nsalloc_calloc(SIZE_MAX / 2, 3) == NULL && errno == ENOMEM);
  size_t past_root = (size_t)1 << (sizeof(size_t) * CHAR_BIT / 2 + 1); /* squared: 4 * 2^width */
  errno = 0;
  CHECK(nsalloc_calloc(past_root, past_root) == NULL && errno == ENOMEM);
  void *p = nsalloc_malloc(32);
  errno = 0;
  CHECK(nsalloc_reallocarray(p, SIZE_MAX / 2, 4) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(nsalloc_realloc(p, SIZE_MAX) == NULL && errno == ENOMEM);
  CHECK(nsalloc_usable_size(p) >= 32); /* a failed realloc leaves p alone */
  errno = 0;
  CHECK(nsalloc_aligned_alloc(64, SIZE_MAX - 10) == NULL && errno == ENOMEM);
  nsalloc_free(p);
  CHECK_EQ(nsalloc_good_size(SIZE_MAX), 0);
}

/* calloc zeroes even memory that was just freed dirty, in every size range. */
static void test_calloc_zeroes_recycled_memory(void) {
  static const size_t sizes[] = {16, 100, 1000, 5000, 40000, 300000, (size_t)5 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t size = sizes[i];
    for (int round = 0; round < 3; round++) {
      uint8_t *dirty = nsalloc_malloc(size);
      memset(dirty, 0xA5, size);
      nsalloc_free(dirty);
      uint8_t *p = nsalloc_calloc(1, size);
      CHECK(p != NULL);
      bool zero = true;
      for (size_t j = 0; j < size && p; j++)
        zero &= p[j] == 0;
      CHECK(zero);
      nsalloc_free(p);
    }
  }
  CHECK(nsalloc_calloc(0, 8) != NULL);
}

/* Grow a block through every size range and back, checking contents. */
static void test_realloc_preserves_contents(void) {
  size_t size = 1;
  uint8_t *p = nsalloc_malloc(size);
  test_fill(p, size, 7);
  while (size < ((size_t)12 << 20)) {
    size_t next = size * 2 + 3;
    p = nsalloc_realloc(p, next);
    CHECK(p != NULL && aligned(p, 16));
    CHECK(test_verify(p, size, 7));
    test_fill(p, next, 7);
    size = next;
  }
  while (size > 1) {
    size_t next = size / 3;
    p = nsalloc_realloc(p, next);
    CHECK(p != NULL && test_verify(p, next, 7));
    size = next;
  }
  nsalloc_free(p);
}

static void test_realloc_edges(void) {
  void *p = nsalloc_realloc(NULL, 40);
  CHECK(p != NULL && nsalloc_usable_size(p) >= 40);
  void *same = nsalloc_realloc(p, 36); /* still fits its block: in place */
  CHECK(same == p);
  void *tiny = nsalloc_realloc(p, 0); /* never NULL, never a free */
  CHECK(tiny != NULL);
  nsalloc_free(tiny);
  void *q = nsalloc_reallocarray(NULL, 10, 10);
  CHECK(q != NULL && nsalloc_usable_size(q) >= 100);
  nsalloc_free(q);
}

/* Every power-of-two alignment from 1 byte to 16 MiB, small and large sizes. */
/* realloc grows a large block in place while the slices after it are free
 * (a fresh heap's segment fills from its first page slice, in order), and
 * moves it when they are taken, past the segment's end, or past the large
 * range. The statistics follow the block's size either way. */
static void test_realloc_grows_large_in_place(void) {
#ifndef NSALLOC_SEGMENT_SHIFT
#define NSALLOC_SEGMENT_SHIFT 22
#endif
  const size_t slice = (size_t)1 << (NSALLOC_SEGMENT_SHIFT - 6), three = 2 * slice + 100;
  nsalloc_heap_t *heap = nsalloc_heap_new();
  char *a = nsalloc_heap_malloc(heap, three); /* slices 1-3 */
  test_fill(a, three, 1);
  char *grown = nsalloc_heap_realloc(heap, a, 5 * slice - 100); /* 1-5 */
  CHECK(grown == a && test_verify(a, three, 1));
  CHECK_EQ(nsalloc_usable_size(a), 5 * slice);
  nsalloc_stats_t stats;
  nsalloc_heap_stats(heap, &stats);
  CHECK_EQ(stats.in_use_bytes, 5 * slice);
  CHECK_EQ(stats.page_bytes, 5 * slice);
  test_fill(a, 5 * slice, 2);
  char *b = nsalloc_heap_malloc(heap, three); /* 6-8, right after a */
  CHECK(b == a + 5 * slice);
  char *moved = nsalloc_heap_realloc(heap, a, 6 * slice);            /* b is in the way */
  CHECK(moved == a + 8 * slice && test_verify(moved, 5 * slice, 2)); /* 9-14 */
  /* Fill 1-5 and 15-44; y gets 45-47 and grows to the segment's last slice,
   * not past it. */
  char *z = nsalloc_heap_malloc(heap, 5 * slice), *x = nsalloc_heap_malloc(heap, 30 * slice);
  char *y = nsalloc_heap_malloc(heap, three);
  CHECK(z == a && x == a + 14 * slice && y == a + 44 * slice);
  char *c = nsalloc_heap_realloc(heap, y, 19 * slice);
  CHECK(c == y);
  test_fill(c, 19 * slice, 3);
  char *d = nsalloc_heap_realloc(heap, c, 20 * slice);
  CHECK(d != c && test_verify(d, 19 * slice, 3));
  nsalloc_heap_stats(heap, &stats);
  CHECK_EQ(stats.in_use_blocks, 5);
  CHECK_EQ(stats.in_use_bytes, nsalloc_usable_size(b) + nsalloc_usable_size(moved) +
                                   nsalloc_usable_size(d) + 35 * slice);
  nsalloc_heap_free(heap, b);
  nsalloc_heap_free(heap, x);
  nsalloc_heap_free(heap, z);
  /* Another heap's large block is never grown in place: it moves to `other`. */
  nsalloc_heap_t *other = nsalloc_heap_new();
  char *e = nsalloc_heap_malloc(heap, three);
  char *f = nsalloc_heap_realloc(other, e, 4 * slice);
  CHECK(f != e && nsalloc_heap_owns(other, f));
  nsalloc_heap_free(other, f);
  nsalloc_heap_delete(other);
  nsalloc_heap_free(heap, moved);
  nsalloc_heap_free(heap, d);
  nsalloc_heap_stats(heap, &stats);
  CHECK_EQ(stats.in_use_bytes, 0);
  nsalloc_heap_delete(heap);
}

static void test_alignments(void) {
  static const size_t sizes[] = {0, 1, 24, 100, 4096, 70000, (size_t)3 << 20};
  for (size_t alignment = 1; alignment <= ((size_t)16 << 20); alignment *= 2) {
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
      void *p = nsalloc_aligned_alloc(alignment, sizes[i]);
      CHECK(p != NULL && aligned(p, alignment) && aligned(p, 16));
      CHECK(nsalloc_usable_size(p) >= sizes[i]);
      memset(p, 1, sizes[i]);
      nsalloc_free(p);
      void *q = NULL;
      if (alignment >= sizeof(void *)) {
        CHECK_EQ(nsalloc_posix_memalign(&q, alignment, sizes[i]), 0);
        CHECK(q != NULL && aligned(q, alignment));
        nsalloc_free(q);
      }
      q = nsalloc_memalign(alignment, sizes[i]);
      CHECK(q != NULL && aligned(q, alignment));
      nsalloc_free(q);
    }
  }
}

static void test_bad_alignment(void) {
  static const size_t bad[] = {0, 3, 24, 100, ((size_t)1 << 20) + 16};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    errno = 0;
    CHECK(nsalloc_aligned_alloc(bad[i], 64) == NULL && errno == EINVAL);
    errno = 0;
    CHECK(nsalloc_memalign(bad[i], 64) == NULL && errno == EINVAL);
    void *p = (void *)1;
    CHECK_EQ(nsalloc_posix_memalign(&p, bad[i], 64), EINVAL);
    CHECK(p == (void *)1); /* untouched on error */
  }
  void *p = (void *)1;
  /* A power of two, but not a multiple of sizeof(void *). */
  CHECK_EQ(nsalloc_posix_memalign(&p, sizeof(void *) / 2, 64), EINVAL);
}

static void test_strings(void) {
  char *s = nsalloc_strdup("namespaced");
  CHECK(s && strcmp(s, "namespaced") == 0);
  char *t = nsalloc_strndup("namespaced", 4);
  CHECK(t && strcmp(t, "name") == 0);
  char *u = nsalloc_strndup("ab", 100);
  CHECK(u && strcmp(u, "ab") == 0);
  nsalloc_free(s);
  nsalloc_free(t);
  nsalloc_free(u);
}

static void test_free_null_and_sized(void) {
  nsalloc_free(NULL);
  nsalloc_free_sized(NULL, 0);
  void *p = nsalloc_malloc(100);
  nsalloc_free_sized(p, 100);
  CHECK_EQ(nsalloc_usable_size(NULL), 0);
}

static void test_owns(void) {
  int on_stack;
  static int in_data;
  void *from_libc = malloc(64);
  void *ours = nsalloc_malloc(64);
  CHECK(nsalloc_owns(ours));
  CHECK(!nsalloc_owns(&on_stack));
  CHECK(!nsalloc_owns(&in_data));
  CHECK(!nsalloc_owns(from_libc));
  CHECK(!nsalloc_owns(NULL));
  CHECK(!nsalloc_owns((void *)UINTPTR_MAX));
  free(from_libc);
  nsalloc_free(ours);
}

/* Live bytes in the stats follow allocations exactly and return to zero. */
static void test_stats_balance(void) {
  nsalloc_collect(true);
  size_t base = in_use_bytes();
  void *blocks[100];
  size_t expected = 0;
  for (int i = 0; i < 100; i++) {
    blocks[i] = nsalloc_malloc((size_t)i * 97 + 1);
    expected += nsalloc_usable_size(blocks[i]);
  }
  CHECK_EQ(in_use_bytes() - base, expected);
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  CHECK(stats.committed_bytes > 0 && stats.reserved_bytes >= stats.committed_bytes);
  CHECK(stats.page_bytes <= stats.peak_page_bytes);
  CHECK(stats.heaps >= 1 && stats.segments >= 1 && stats.pages >= 1);
  for (int i = 0; i < 100; i++)
    nsalloc_free(blocks[i]);
  CHECK_EQ(in_use_bytes(), base);
}

static void test_heaps(void) {
  nsalloc_heap_t *heap = nsalloc_heap_new();
  CHECK(heap != NULL);
  void *a = nsalloc_heap_malloc(heap, 100);
  void *b = nsalloc_heap_calloc(heap, 10, 10);
  void *c = nsalloc_heap_aligned_alloc(heap, 4096, 100);
  char *d = nsalloc_heap_strdup(heap, "heap");
  char *e = nsalloc_heap_strndup(heap, "heapheap", 4);
  void *f = nsalloc_heap_malloc(heap, (size_t)6 << 20); /* huge */
  CHECK(a && b && c && d && e && f && aligned(c, 4096));
  CHECK(strcmp(d, "heap") == 0 && strcmp(e, "heap") == 0);
  CHECK(nsalloc_heap_owns(heap, a) && nsalloc_heap_owns(heap, f));
  void *mine = nsalloc_malloc(100);
  CHECK(!nsalloc_heap_owns(heap, mine));
  nsalloc_stats_t stats;
  nsalloc_heap_stats(heap, &stats);
  CHECK_EQ(stats.in_use_blocks, 6);
  a = nsalloc_heap_realloc(heap, a, 5000);
  b = nsalloc_heap_reallocarray(heap, b, 20, 20);
  CHECK(nsalloc_heap_owns(heap, a) && nsalloc_heap_owns(heap, b));
  nsalloc_heap_free(heap, a);
  nsalloc_free(b); /* a plain free of a heap block works too */
  nsalloc_heap_stats(heap, &stats);
  CHECK_EQ(stats.in_use_blocks, 4);
  test_fill(c, 100, 3);
  /* delete: the remaining blocks migrate to this thread's default heap */
  nsalloc_heap_delete(heap);
  CHECK(test_verify(c, 100, 3) && strcmp(d, "heap") == 0);
  nsalloc_heap_stats(NULL, &stats);
  CHECK(stats.in_use_blocks >= 5);
  nsalloc_free(c);
  nsalloc_free(d);
  nsalloc_free(e);
  nsalloc_free(f);
  nsalloc_free(mine);
}

/* destroy releases every block at once: the stats drop by the heap's bytes. */
static void test_heap_destroy(void) {
  size_t base = in_use_bytes();
  nsalloc_heap_t *heap = nsalloc_heap_new();
  for (int i = 0; i < 10000; i++)
    CHECK(nsalloc_heap_malloc(heap, (size_t)(i % 300) + 1));
  CHECK(nsalloc_heap_malloc(heap, (size_t)9 << 20));
  CHECK(nsalloc_heap_malloc(heap, (size_t)1 << 20));
  CHECK(in_use_bytes() > base + ((size_t)10 << 20));
  nsalloc_heap_destroy(heap);
  CHECK_EQ(in_use_bytes(), base);
}

/* Blocks the owner frees into full pages are reused before new pages are
 * made: freeing every other block of a large set and allocating as many again
 * must not grow the pages (for the default heap and a first-class heap). */
static void reuse_scenario(nsalloc_heap_t *heap) {
  enum { COUNT = 100000 };
  static void *blocks[COUNT];
  for (int i = 0; i < COUNT; i++)
    blocks[i] = heap ? nsalloc_heap_malloc(heap, 64) : nsalloc_malloc(64);
  nsalloc_stats_t before, after;
  nsalloc_stats(&before);
  for (int i = 0; i < COUNT; i += 2)
    heap ? nsalloc_heap_free(heap, blocks[i]) : nsalloc_free(blocks[i]);
  for (int i = 0; i < COUNT; i += 2)
    blocks[i] = heap ? nsalloc_heap_malloc(heap, 64) : nsalloc_malloc(64);
  nsalloc_stats(&after);
  CHECK_EQ(after.page_bytes, before.page_bytes);
  for (int i = 0; i < COUNT; i++)
    heap ? nsalloc_heap_free(heap, blocks[i]) : nsalloc_free(blocks[i]);
}

static void test_full_pages_are_reused(void) {
  reuse_scenario(NULL);
  nsalloc_heap_t *heap = nsalloc_heap_new();
  reuse_scenario(heap);
  nsalloc_heap_destroy(heap);
}

static void test_options(void) {
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_FOREIGN_POLICY), NSALLOC_POLICY_ABORT);
  long delay = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 0), 0);
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS), 0);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, -2), EINVAL);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_SEGMENT_CACHE, 100000), EINVAL);
  CHECK_EQ(nsalloc_option_set((nsalloc_option_t)99, 1), EINVAL);
  CHECK_EQ(nsalloc_option_get((nsalloc_option_t)99), -1);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_FOREIGN_POLICY, NSALLOC_POLICY_FORWARD), EINVAL);
  CHECK_EQ(nsalloc_set_foreign_policy(NSALLOC_POLICY_FORWARD, NULL), EINVAL);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay), 0);
}

/* With purge_delay_ms=0, freeing a large working set returns its memory to
 * the OS at once: committed bytes fall back. */
static void test_purge_returns_memory(void) {
  long delay = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 0);
  nsalloc_collect(true);
  nsalloc_stats_t before, during, after;
  nsalloc_stats(&before);
  enum { COUNT = 4000 };
  static void *blocks[COUNT];
  for (int i = 0; i < COUNT; i++) {
    blocks[i] = nsalloc_malloc(8000);
    memset(blocks[i], 1, 8000);
  }
  nsalloc_stats(&during);
  CHECK(during.committed_bytes >= before.committed_bytes + COUNT * 8000);
  for (int i = 0; i < COUNT; i++)
    nsalloc_free(blocks[i]);
  nsalloc_collect(true);
  nsalloc_stats(&after);
  CHECK(after.committed_bytes <= before.committed_bytes + ((size_t)1 << 20));
  CHECK(after.purges > before.purges);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay);
}

#if !defined(_WIN32)
/* Minor faults of the last of four cycles that fill and free 32 MiB, in
 * blocks of `block` bytes, under purge delay `delay`. */
static long refaults_per_cycle(long delay, size_t block) {
  long old = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay);
  nsalloc_collect(true);
  enum { BYTES = 32 << 20 };
  static void *blocks[BYTES / 4096];
  size_t count = BYTES / block;
  long faults = 0;
  for (int cycle = 0; cycle < 4; cycle++) {
    long before = test_minor_faults();
    for (size_t i = 0; i < count; i++) {
      blocks[i] = nsalloc_malloc(block);
      memset(blocks[i], cycle, block);
    }
    faults = test_minor_faults() - before;
    for (size_t i = 0; i < count; i++)
      nsalloc_free(blocks[i]);
  }
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, old);
  nsalloc_collect(true);
  return faults;
}

/* purge_delay_ms=-1 keeps freed memory resident: filling the same 32 MiB
 * again (8,192 pages) faults nothing in, whether it comes back as small
 * pages, large pages or one huge block. The control: with purging at once
 * the same cycles fault most pages in again. */
static void test_never_purge_refaults_nothing(void) {
  const long pages = (32 << 20) / 4096;
  size_t sizes[] = {4096, 256 << 10, 32 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    long kept = refaults_per_cycle(-1, sizes[i]);
    long purged = refaults_per_cycle(0, sizes[i]);
    CHECK(kept < pages / 100);
    CHECK(purged > pages / 2);
  }
}
#endif

static void test_identity(void) {
  CHECK(strcmp(nsalloc_version(), NSALLOC_VERSION_STRING) == 0);
  CHECK(strcmp(nsalloc_prefix(), "t_") == 0);
}

static void test_os_source_after_use(void) {
  nsalloc_os_source_t source = {0};
  CHECK_EQ(nsalloc_set_os_source(&source), EINVAL);
  source.alloc = (void *(*)(void *, size_t, size_t))1;
  source.free = (void (*)(void *, void *, size_t))1;
  CHECK_EQ(nsalloc_set_os_source(&source), EBUSY); /* memory is already mapped */
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
    TEST(test_malloc_zero_is_unique),
    TEST(test_sizes),
    TEST(test_overflow),
    TEST(test_calloc_zeroes_recycled_memory),
    TEST(test_realloc_preserves_contents),
    TEST(test_realloc_edges),
    TEST(test_realloc_grows_large_in_place),
    TEST(test_alignments),
    TEST(test_bad_alignment),
    TEST(test_strings),
    TEST(test_free_null_and_sized),
    TEST(test_owns),
    TEST(test_stats_balance),
    TEST(test_heaps),
    TEST(test_heap_destroy),
    TEST(test_full_pages_are_reused),
    TEST(test_options),
    TEST(test_purge_returns_memory),
#if !defined(_WIN32)
    TEST(test_never_purge_refaults_nothing),
#endif
    TEST(test_identity),
    TEST(test_os_source_after_use),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
