/*
 * ops_pairs.c - per-operation scan: one allocation immediately followed by its
 * free, for the size ranges of the scan (small, medium, large, huge) and for
 * calloc and aligned_alloc. One op = one allocation + one free.
 */
#include "kernels.h"

#define TABLE_SIZE 4096 /* power of two: sizes are drawn before the region */

enum pair_kind { PAIR_MALLOC, PAIR_CALLOC, PAIR_ALIGNED };

static bench_result_t pair_loop(const bench_alloc_t *a, const bench_params_t *p,
                                enum pair_kind kind, size_t lo, size_t hi) {
  static size_t sizes[TABLE_SIZE], aligns[TABLE_SIZE];
  uint64_t rng = p->seed;
  for (size_t i = 0; i < TABLE_SIZE; i++) {
    aligns[i] = (size_t)64 << bench_range(&rng, 0, 6); /* 64 B .. 4 KiB */
    sizes[i] = bench_range(&rng, lo, hi);
    if (kind == PAIR_ALIGNED) sizes[i] = bench_round_up(sizes[i], aligns[i]);
  }
  /* Warm-up: the first blocks map segments and carve pages. */
  uint64_t warm = p->n / 16 < 1000 ? p->n / 16 : 1000, sum = 0;
  for (uint64_t i = 0; i < warm + p->n; i++) {
    if (i == warm) bench_region_begin();
    size_t size = sizes[i & (TABLE_SIZE - 1)], align = aligns[i & (TABLE_SIZE - 1)];
    void *q;
    switch (kind) {
    case PAIR_CALLOC:
      q = bench_check(a->calloc(1, size), size);
      if (bench_read(q, size) != 0) bench_fail("calloc(%zu) not zeroed", size);
      break;
    case PAIR_ALIGNED:
      q = bench_check(a->aligned(align, size), size);
      if ((uintptr_t)q & (align - 1))
        bench_defect("aligned_alloc(%zu, %zu) returned %p, misaligned", align, size, q);
      break;
    default:
      q = bench_check(a->malloc(size), size);
      break;
    }
    bench_stamp(q, size, i);
    sum += bench_mix(bench_read(q, size) ^ size);
    a->free(q);
  }
  bench_region_end();
  return (bench_result_t){p->n, sum};
}

BENCH_KERNEL(op_small) {
  return pair_loop(a, p, PAIR_MALLOC, 16, 128);
}
BENCH_KERNEL(op_medium) {
  return pair_loop(a, p, PAIR_MALLOC, 1024, 32 * 1024);
}
BENCH_KERNEL(op_large) {
  return pair_loop(a, p, PAIR_MALLOC, 64 * 1024, 1024 * 1024);
}
BENCH_KERNEL(op_huge) {
  return pair_loop(a, p, PAIR_MALLOC, 4 << 20, 8 << 20);
}
BENCH_KERNEL(op_calloc) {
  return pair_loop(a, p, PAIR_CALLOC, 16, 1024);
}
BENCH_KERNEL(op_aligned) {
  return pair_loop(a, p, PAIR_ALIGNED, 16, 4096);
}
