/*
 * ops_batch.c - per-operation scan: allocate a batch of 1,000 small blocks,
 * then free them all, newest first (LIFO) or oldest first (FIFO).
 * One op = one allocation + its free.
 */
#include "kernels.h"

#define BATCH 1000

static bench_result_t batch_loop(const bench_alloc_t *a, const bench_params_t *p, bool fifo) {
  static void *blocks[BATCH];
  static size_t sizes[BATCH];
  uint64_t rng = p->seed, sum = 0;
  for (size_t i = 0; i < BATCH; i++)
    sizes[i] = bench_range(&rng, 16, 128);
  uint64_t batches = (p->n + BATCH - 1) / BATCH;
  for (uint64_t b = 0; b < batches + 1; b++) {
    if (b == 1) bench_region_begin(); /* batch 0 warms up */
    for (size_t i = 0; i < BATCH; i++) {
      blocks[i] = bench_check(a->malloc(sizes[i]), sizes[i]);
      bench_stamp(blocks[i], sizes[i], b * BATCH + i);
    }
    for (size_t k = 0; k < BATCH; k++) {
      size_t i = fifo ? k : BATCH - 1 - k;
      sum += bench_mix(bench_read(blocks[i], sizes[i]));
      a->free(blocks[i]);
    }
  }
  bench_region_end();
  return (bench_result_t){batches * BATCH, sum};
}

BENCH_KERNEL(op_batch_lifo) {
  return batch_loop(a, p, false);
}
BENCH_KERNEL(op_batch_fifo) {
  return batch_loop(a, p, true);
}
