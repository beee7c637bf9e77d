/*
 * ops_misc.c - per-operation scan: realloc growth chains and usable_size
 * queries.
 */
#include "kernels.h"

/* One realloc chain: a block grows from `from` bytes by x1.25 (+16) up to
 * `to`, its contents checked after every step, then is freed. Returns the
 * reallocs. */
static uint64_t realloc_chain(const bench_alloc_t *a, size_t from, size_t to, uint64_t chain,
                              uint64_t *sum) {
  size_t size = from;
  uint64_t ops = 0;
  void *q = bench_check(a->malloc(size), size);
  bench_stamp(q, size, chain);
  while (size < to) {
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
static bench_result_t realloc_chains(const bench_alloc_t *a, const bench_params_t *p, size_t from,
                                     size_t to) {
  uint64_t ops = 0, sum = 0, chain = 0;
  realloc_chain(a, from, to, chain++, &sum); /* warm-up */
  bench_region_begin();
  while (ops < p->n)
    ops += realloc_chain(a, from, to, chain++, &sum);
  bench_region_end();
  return (bench_result_t){ops, sum};
}

/* Small and medium blocks: every step past a size class moves the block. */
BENCH_KERNEL(op_realloc_chain) {
  return realloc_chains(a, p, 16, 64 * 1024);
}

/* Large blocks: growth an allocator can do in place (Python lists, Lua and
 * libuv buffers growing past 64 KiB). */
BENCH_KERNEL(op_realloc_large) {
  return realloc_chains(a, p, 64 * 1024 + 1, 1024 * 1024);
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
