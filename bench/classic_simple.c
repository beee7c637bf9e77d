/*
 * classic_simple.c - the single-threaded classic kernels.
 *
 * glibc-simple: in the spirit of glibc's bench-malloc-simple: batches of 25,
 *   100, 400 and 1,600 blocks of one size (16 B .. 4 KiB) allocated, then
 *   freed in allocation order. One op = one allocation + its free.
 * malloc-large: 20 live blocks of 5-25 MiB; each step replaces a random one
 *   and touches every page of the new block (the program uses its memory, so
 *   page faults of fresh mappings count). One op = one replacement.
 */
#include "kernels.h"

#define SIMPLE_MAX_BATCH 1600

static const size_t simple_sizes[] = {16, 32, 64, 128, 256, 512, 1024, 4096};
static const size_t simple_batches[] = {25, 100, 400, SIMPLE_MAX_BATCH};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t simple_round(const bench_alloc_t *a, uint64_t round, uint64_t *sum) {
  static void *blocks[SIMPLE_MAX_BATCH];
  uint64_t ops = 0;
  for (size_t s = 0; s < COUNT(simple_sizes); s++) {
    size_t size = simple_sizes[s];
    for (size_t b = 0; b < COUNT(simple_batches); b++) {
      for (size_t i = 0; i < simple_batches[b]; i++) {
        blocks[i] = bench_check(a->malloc(size), size);
        bench_stamp(blocks[i], size, round + i);
      }
      for (size_t i = 0; i < simple_batches[b]; i++) {
        *sum += bench_mix(bench_read(blocks[i], size) ^ size);
        a->free(blocks[i]);
      }
      ops += simple_batches[b];
    }
  }
  return ops;
}

BENCH_KERNEL(classic_glibc_simple) {
  uint64_t ops = 0, sum = 0, round = 0;
  simple_round(a, round++, &sum); /* warm-up */
  bench_region_begin();
  while (ops < p->n)
    ops += simple_round(a, round++, &sum);
  bench_region_end();
  return (bench_result_t){ops, sum};
}

#define LARGE_LIVE 20

BENCH_KERNEL(classic_malloc_large) {
  static void *blocks[LARGE_LIVE];
  static size_t sizes[LARGE_LIVE];
  uint64_t rng = p->seed, sum = 0;
  for (size_t i = 0; i < LARGE_LIVE; i++) {
    sizes[i] = bench_range(&rng, 5 << 20, 25 << 20);
    blocks[i] = bench_fill_pages(a, sizes[i], i);
  }
  bench_region_begin();
  for (uint64_t i = 0; i < p->n; i++) {
    size_t k = (size_t)(bench_rand(&rng) % LARGE_LIVE);
    sum += bench_mix(bench_read(blocks[k], sizes[k]));
    a->free(blocks[k]);
    sizes[k] = bench_range(&rng, 5 << 20, 25 << 20);
    blocks[k] = bench_fill_pages(a, sizes[k], i);
  }
  bench_region_end();
  for (size_t i = 0; i < LARGE_LIVE; i++) {
    sum += bench_mix(bench_read(blocks[i], sizes[i]));
    a->free(blocks[i]);
  }
  return (bench_result_t){p->n, sum};
}
