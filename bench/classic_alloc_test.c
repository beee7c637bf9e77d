/*
 * classic_alloc_test.c - alloc-test-like: every thread keeps 4,096 live blocks
 * and replaces random ones with Pareto-distributed sizes (x_m = 16 B,
 * alpha = 1.2, capped at 1 KiB: most blocks tiny, a long tail). Threads share
 * nothing. One op = one replacement.
 */
#include "kernels.h"
#include "threads.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#define AT_LIVE  4096 /* power of two */
#define AT_TABLE 4096 /* power of two */

typedef struct at_thread_s {
  const bench_alloc_t *a;
  uint64_t steps, seed, sum;
} at_thread_t;

static void pareto_table(size_t *sizes, uint64_t seed) {
  uint64_t rng = seed;
  for (size_t i = 0; i < AT_TABLE; i++) {
    double u = ((double)(bench_rand(&rng) >> 11) + 1.0) / 9007199254740993.0; /* (0,1] */
    double size = 16.0 * pow(u, -1.0 / 1.2);
    sizes[i] = size > 1024.0 ? 1024 : (size_t)size;
  }
}

static void *at_thread(void *arg) {
  at_thread_t *t = arg;
  uint64_t sum = 0; /* local: a shared line written per step would measure false sharing */
  size_t *sizes = calloc(AT_TABLE + AT_LIVE, sizeof *sizes);
  void **blocks = calloc(AT_LIVE, sizeof *blocks);
  if (!sizes || !blocks) bench_fail("out of memory");
  size_t *live_sizes = sizes + AT_TABLE;
  pareto_table(sizes, t->seed);
  uint64_t rng = t->seed;
  for (uint64_t s = 0; s < t->steps; s++) {
    uint64_t r = bench_rand(&rng);
    size_t k = (size_t)r & (AT_LIVE - 1);
    if (blocks[k]) {
      sum += bench_mix(bench_read(blocks[k], live_sizes[k]));
      t->a->free(blocks[k]);
    }
    live_sizes[k] = sizes[(r >> 20) & (AT_TABLE - 1)];
    blocks[k] = bench_check(t->a->malloc(live_sizes[k]), live_sizes[k]);
    bench_stamp(blocks[k], live_sizes[k], r);
  }
  for (size_t k = 0; k < AT_LIVE; k++) {
    if (!blocks[k]) continue;
    sum += bench_mix(bench_read(blocks[k], live_sizes[k]));
    t->a->free(blocks[k]);
  }
  free(sizes);
  free(blocks);
  t->sum += sum;
  return NULL;
}

BENCH_KERNEL(classic_alloc_test) {
  at_thread_t *t = calloc(p->threads, sizeof *t);
  if (!t) bench_fail("out of memory");
  uint64_t steps = p->n / p->threads + 1;
  for (unsigned i = 0; i < p->threads; i++)
    t[i] = (at_thread_t){a, steps, p->seed + i, 0};
  uint64_t sum =
      bench_run_measured_threads(p->threads, at_thread, t, sizeof *t, offsetof(at_thread_t, sum));
  free(t);
  return (bench_result_t){steps * p->threads, sum};
}
