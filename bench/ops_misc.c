/*
 * ops_misc.c - per-operation scan: realloc growth chains and usable_size
 * queries.
 */
#include "kernels.h"

#define CHAIN_MAX (64 * 1024)

/* One realloc chain: a block grows from 16 B by x1.25 (+16) up to 64 KiB, its
 * contents checked after every move, then is freed. Returns the reallocs. */
static uint64_t realloc_chain(const bench_alloc_t *a, uint64_t chain, uint64_t *sum) {
  size_t size = 16;
  uint64_t ops = 0;
  void *q = bench_check(a->malloc(size), size);
  bench_stamp(q, size, chain);
  while (size < CHAIN_MAX) {
    size_t grown = size + size / 4 + 16;
    q = bench_check(a->realloc(q, grown), grown);
    uint64_t value = bench_read(q, size); /* the old size's bytes must have moved */
    *sum += bench_mix(value ^ grown);
    size = grown;
    bench_stamp(q, size, value);
    ops++;
  }
  *sum += bench_mix(bench_read(q, size));
  a->free(q);
  return ops;
}

/* One op = one realloc; whole chains run until n reallocs are reached. */
BENCH_KERNEL(op_realloc_chain) {
  uint64_t ops = 0, sum = 0, chain = 0;
  realloc_chain(a, chain++, &sum); /* warm-up */
  bench_region_begin();
  while (ops < p->n)
    ops += realloc_chain(a, chain++, &sum);
  bench_region_end();
  return (bench_result_t){ops, sum};
}

#define USABLE_LIVE 1024

/* One op = one usable_size call on one of 1,024 live blocks (16-1024 B). */
BENCH_KERNEL(op_usable_size) {
  static void *blocks[USABLE_LIVE];
  static size_t sizes[USABLE_LIVE];
  uint64_t rng = p->seed, sum = 0;
  for (size_t i = 0; i < USABLE_LIVE; i++) {
    sizes[i] = bench_range(&rng, 16, 1024);
    blocks[i] = bench_check(a->malloc(sizes[i]), sizes[i]);
  }
  bench_region_begin();
  for (uint64_t i = 0; i < p->n; i++) {
    size_t k = (size_t)(i * 7) & (USABLE_LIVE - 1); /* not sequential in memory */
    size_t usable = a->usable_size(blocks[k]);
    if (usable < sizes[k]) bench_fail("usable_size %zu < requested %zu", usable, sizes[k]);
    sum += sizes[k];
  }
  bench_region_end();
  for (size_t i = 0; i < USABLE_LIVE; i++)
    a->free(blocks[i]);
  return (bench_result_t){p->n, sum};
}
