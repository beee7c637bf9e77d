/*
 * fastpath.c - the per-call fast-path count: rounds of 50 mallocs of 32 bytes
 * then their 50 frees, on the owning thread. The allocations and the frees
 * are made from two noinline functions with fixed names, so the runner reads
 * the inclusive instructions of every call they make from the callgrind
 * profile (bench/callgrind_calls.py): the same measurement for every arm,
 * whatever the allocator names its internals and with no debug information.
 * One op = one malloc + one free.
 */
#include "kernels.h"

#define FASTPATH_BATCH 50
#define FASTPATH_SIZE  32

__attribute__((noinline)) void bench_fastpath_mallocs(const bench_alloc_t *a, void **blocks) {
  for (size_t i = 0; i < FASTPATH_BATCH; i++)
    blocks[i] = a->malloc(FASTPATH_SIZE);
}

__attribute__((noinline)) void bench_fastpath_frees(const bench_alloc_t *a, void **blocks) {
  for (size_t i = 0; i < FASTPATH_BATCH; i++)
    a->free(blocks[i]);
}

BENCH_KERNEL(op_fastpath) {
  void *blocks[FASTPATH_BATCH];
  uint64_t rounds = (p->n + FASTPATH_BATCH - 1) / FASTPATH_BATCH, sum = 0;
  for (uint64_t r = 0; r < rounds + 1; r++) {
    if (r == 1) bench_region_begin(); /* round 0 carves the page */
    bench_fastpath_mallocs(a, blocks);
    for (size_t i = 0; i < FASTPATH_BATCH; i++) {
      bench_stamp(bench_check(blocks[i], FASTPATH_SIZE), FASTPATH_SIZE, r + i);
      sum += bench_mix(bench_read(blocks[i], FASTPATH_SIZE));
    }
    bench_fastpath_frees(a, blocks);
  }
  bench_region_end();
  return (bench_result_t){rounds * FASTPATH_BATCH, sum};
}
