/*
 * test_segment_huge_pages.c - the segment_huge_pages option: its values are
 * range-checked like every option, read from <PREFIX>OPTIONS (T_OPTIONS
 * here) with a bad entry skipped, and each value advises exactly the fresh
 * normal segments it says it does ("hg" in the mapping's VmFlags: advised
 * MADV_HUGEPAGE). Whether the kernel then backs them with 2 MiB pages is
 * its THP mode's business, not checked here.
 * Each case runs in its own process (ctest names one per run): "a second
 * thread made a heap" cannot be undone, and the environment is read once.
 */
#include "nsalloc.h"
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A 2 MiB block is a large block of 32 slices: one fits in a normal
 * segment, so each one held live sits in a fresh segment (the cache is
 * empty: nothing was ever freed). */
#define SEGMENT_BLOCK ((size_t)2 << 20)

static bool thp_kernel(void) {
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) == 0) return true;
  fprintf(stderr, "note: kernel without transparent huge pages; advice not checked\n");
  return false;
}

/* Is a fresh normal segment advised now? */
static bool fresh_segment_advised(void) {
  void *p = nsalloc_malloc(SEGMENT_BLOCK); /* kept live: its segment stays this block's */
  CHECK(p != NULL);
  return p && test_mapping_has_flag(p, "hg");
}

static void *allocate_once(void *unused) {
  (void)unused;
  nsalloc_free(nsalloc_malloc(16)); /* creates this thread's heap */
  return NULL;
}

static void second_thread_makes_a_heap(void) {
  pthread_t thread;
  CHECK_EQ(pthread_create(&thread, NULL, allocate_once, NULL), 0);
  pthread_join(thread, NULL);
}

/* The range 0..2, as every option: out of range is EINVAL and changes
 * nothing. */
static void test_range(void) {
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_SEGMENT_HUGE_PAGES), 1);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_SEGMENT_HUGE_PAGES, 3), EINVAL);
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_SEGMENT_HUGE_PAGES, -1), EINVAL);
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_SEGMENT_HUGE_PAGES), 1);
  for (long value = 0; value <= 2; value++) {
    CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_SEGMENT_HUGE_PAGES, value), 0);
    CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_SEGMENT_HUGE_PAGES), value);
  }
}

/* Is a fresh huge segment advised now? */
static bool fresh_huge_block_advised(void) {
  void *p = nsalloc_malloc(40 * SEGMENT_BLOCK); /* none cached: nothing was freed */
  CHECK(p != NULL);
  return p && test_mapping_has_flag(p, "hg");
}

/* An option at 1 (its default): not while only the initial thread
 * allocated, then once a second thread made a heap, for the initial
 * thread's fresh segments too; 0 then stops it (each check is the others'
 * control). */
static void check_waits_for_a_second_thread(nsalloc_option_t option, bool (*advised)(void)) {
  if (!thp_kernel()) return;
  CHECK_EQ(nsalloc_option_get(option), 1);
  CHECK(!advised());
  second_thread_makes_a_heap();
  CHECK(advised());
  CHECK_EQ(nsalloc_option_set(option, 0), 0);
  CHECK(!advised());
}

/* segment_huge_pages: normal segments. */
static void test_default_waits_for_a_second_thread(void) {
  check_waits_for_a_second_thread(NSALLOC_OPTION_SEGMENT_HUGE_PAGES, fresh_segment_advised);
}

/* huge_pages follows the same rule for huge blocks. */
static void test_huge_blocks_wait_for_a_second_thread(void) {
  check_waits_for_a_second_thread(NSALLOC_OPTION_HUGE_PAGES, fresh_huge_block_advised);
}

/* 2 advises in a single-threaded process; T_OPTIONS=segment_huge_pages=2. */
static void test_env_always(void) {
  const char *options = getenv("T_OPTIONS");
  if (!options || strcmp(options, "segment_huge_pages=2") != 0) {
    fprintf(stderr, "note: run with T_OPTIONS=segment_huge_pages=2 (ctest does)\n");
    return;
  }
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_SEGMENT_HUGE_PAGES), 2);
  if (thp_kernel()) CHECK(fresh_segment_advised());
}

/* A bad value in the environment is skipped: the default stays. Run with
 * T_OPTIONS=segment_huge_pages=3,purge_delay_ms=7 (the good entry after
 * it is still read). */
static void test_env_bad_value(void) {
  const char *options = getenv("T_OPTIONS");
  if (!options || strcmp(options, "segment_huge_pages=3,purge_delay_ms=7") != 0) {
    fprintf(stderr, "note: run with T_OPTIONS=segment_huge_pages=3,purge_delay_ms=7\n");
    return;
  }
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_SEGMENT_HUGE_PAGES), 1);
  CHECK_EQ(nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS), 7);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_range),
      TEST(test_default_waits_for_a_second_thread),
      TEST(test_huge_blocks_wait_for_a_second_thread),
      TEST(test_env_always),
      TEST(test_env_bad_value),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
