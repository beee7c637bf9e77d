/*
 * test_slice_runs.c - the bit arithmetic that places pages in a segment
 * (core/segment.c: run_starts, longest_run, find_free_run) against the
 * obvious loops over the 64 slices: every count and alignment, on edge masks
 * and on random ones of every density.
 *
 * White-box: this file includes the core's one translation unit (a private
 * copy with the prefix wb_) to reach its static functions.
 */
#include "nsalloc.c"

#include "test_util.h"

#include <stdio.h>

static bool naive_run_at(uint64_t free_slices, size_t index, size_t count) {
  if (index + count > SLICE_COUNT) return false;
  for (size_t i = index; i < index + count; i++)
    if (!(free_slices >> i & 1)) return false;
  return true;
}

static uint64_t naive_run_starts(uint64_t free_slices, size_t count) {
  uint64_t starts = 0;
  for (size_t i = 0; i < SLICE_COUNT; i++)
    if (naive_run_at(free_slices, i, count)) starts |= (uint64_t)1 << i;
  return starts;
}

static size_t naive_longest_run(uint64_t free_slices) {
  size_t longest = 0;
  for (size_t count = 1; count <= SLICE_COUNT; count++)
    if (naive_run_starts(free_slices, count)) longest = count;
  return longest;
}

static size_t naive_find_free_run(uint64_t free_slices, size_t count, size_t align) {
  for (size_t i = align; i < SLICE_COUNT; i += align)
    if (naive_run_at(free_slices, i, count)) return i;
  return 0;
}

static int mismatches;

static void check_mask(uint64_t free_slices) {
  if (longest_run(free_slices) != naive_longest_run(free_slices) && mismatches++ < 10)
    fprintf(stderr, "longest_run(%#llx) = %zu, expected %zu\n", (unsigned long long)free_slices,
            longest_run(free_slices), naive_longest_run(free_slices));
  for (size_t count = 1; count < SLICE_COUNT; count++) {
    if (run_starts(free_slices, count) != naive_run_starts(free_slices, count) && mismatches++ < 10)
      fprintf(stderr, "run_starts(%#llx, %zu) wrong\n", (unsigned long long)free_slices, count);
    for (size_t align = 1; align <= SLICE_COUNT; align *= 2)
      if (find_free_run(free_slices, count, align) !=
              naive_find_free_run(free_slices, count, align) &&
          mismatches++ < 10)
        fprintf(stderr, "find_free_run(%#llx, %zu, %zu) = %zu, expected %zu\n",
                (unsigned long long)free_slices, count, align,
                find_free_run(free_slices, count, align),
                naive_find_free_run(free_slices, count, align));
  }
}

static void test_edge_masks(void) {
  check_mask(0);
  check_mask(SLICES_ALL);
  check_mask(~(uint64_t)0);
  for (size_t i = 0; i < SLICE_COUNT; i++) {
    check_mask((uint64_t)1 << i);
    check_mask(SLICES_ALL & ~((uint64_t)1 << i));
    check_mask(SLICES_ALL << i); /* one run reaching the top */
    check_mask(SLICES_ALL >> i); /* one run from slice 1 */
  }
  CHECK_EQ(mismatches, 0);
}

/* Random masks, each bit free with probability 1/2, 7/8 or 63/64 (long runs
 * are the interesting ones), slice 0 never free as in a segment. Fewer under
 * instrumentation: the plain loops are the slow part. */
static void test_random_masks(void) {
  uint64_t seed = 12;
  size_t masks = test_scale(30000);
  for (size_t i = 0; i < masks; i++) {
    uint64_t mask = test_random(&seed);
    int density = (int)(i % 3);
    for (int more = 0; more < density * 3; more++)
      mask |= test_random(&seed);
    check_mask(mask & SLICES_ALL);
  }
  CHECK_EQ(mismatches, 0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_edge_masks),
      TEST(test_random_masks),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
