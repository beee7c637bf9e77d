/*
 * placement_scaling.c - how a large block's placement cost grows with the
 * number of segments a heap holds, run under `valgrind --tool=callgrind` by
 * placement_scaling.sh, which reads the instructions per call of the calls
 * each placing function makes (bench/callgrind_calls.py). Each function
 * places n blocks of 1.2 MiB in a fresh first-class heap, never freeing one:
 *  - place_N / place_4N: at the default alignment, three to a segment, a
 *    run of 6 slices left over in each (a heap once walked every segment
 *    for every block);
 *  - place_aligned_N / place_aligned_4N: at 2 MiB alignment, one to a
 *    segment, at its middle slice; the run left below it (31 slices) is
 *    long enough for the next block but holds no aligned start (an aligned
 *    request once tried every such segment).
 * A placement whose cost does not depend on the number of segments costs
 * as much per call at 4N blocks as at N; one that walks them costs about
 * four times as much.
 */
#include "nsalloc.h"

#include <stdio.h>
#include <stdlib.h>

#define BLOCK_SIZE (1200 * 1024)

typedef nsalloc_heap_t heap_t;

/* Not static, never inlined: callgrind finds the callers by these names. */
__attribute__((noinline)) void place_N(heap_t *heap, void **blocks, size_t n);
__attribute__((noinline)) void place_4N(heap_t *heap, void **blocks, size_t n);
__attribute__((noinline)) void place_aligned_N(heap_t *heap, void **blocks, size_t n);
__attribute__((noinline)) void place_aligned_4N(heap_t *heap, void **blocks, size_t n);

void place_N(heap_t *heap, void **blocks, size_t n) {
  for (size_t i = 0; i < n; i++)
    blocks[i] = nsalloc_heap_malloc(heap, BLOCK_SIZE);
}

void place_4N(heap_t *heap, void **blocks, size_t n) {
  for (size_t i = 0; i < n; i++)
    blocks[i] = nsalloc_heap_malloc(heap, BLOCK_SIZE);
}

void place_aligned_N(heap_t *heap, void **blocks, size_t n) {
  for (size_t i = 0; i < n; i++)
    blocks[i] = nsalloc_heap_aligned_alloc(heap, (size_t)2 << 20, BLOCK_SIZE);
}

void place_aligned_4N(heap_t *heap, void **blocks, size_t n) {
  for (size_t i = 0; i < n; i++)
    blocks[i] = nsalloc_heap_aligned_alloc(heap, (size_t)2 << 20, BLOCK_SIZE);
}

static int run(void (*place)(heap_t *, void **, size_t), size_t n, size_t alignment) {
  heap_t *heap = nsalloc_heap_new();
  void **blocks = calloc(n, sizeof *blocks);
  if (!heap || !blocks) return 1;
  place(heap, blocks, n);
  int failed = 0;
  for (size_t i = 0; i < n; i++)
    if (!blocks[i] || (uintptr_t)blocks[i] % alignment != 0) failed = 1;
  nsalloc_heap_destroy(heap);
  free(blocks);
  return failed;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 300;
  int failed = run(place_N, n, 16) | run(place_4N, 4 * n, 16) |
               run(place_aligned_N, n, (size_t)2 << 20) |
               run(place_aligned_4N, 4 * n, (size_t)2 << 20);
  if (failed) fprintf(stderr, "placement_scaling: an allocation failed or is misaligned\n");
  return failed;
}
