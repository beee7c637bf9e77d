/*
 * large_churn.c - the large-block churn of issue 22: every thread keeps its
 * own 10 blocks of 5-25 MiB and each step replaces one of them at random,
 * writing every page of the new block. The working set is constant (at most
 * 250 MiB a thread), so an allocator that reuses freed spans stops faulting
 * once it is reached, and one that gives them back faults every page again.
 * One op = one replacement; n is the steps of each thread.
 */
#include "kernels.h"
#include "threads.h"

#include <stddef.h>
#include <stdlib.h>

#define LARGE_CHURN_LIVE 10
#define LARGE_CHURN_MIN  ((size_t)5 << 20)
#define LARGE_CHURN_MAX  ((size_t)25 << 20)

typedef struct large_churn_thread_s {
  const bench_alloc_t *a;
  uint64_t steps, seed, sum;
} large_churn_thread_t;

static void *large_churn_thread(void *arg) {
  large_churn_thread_t *t = arg;
  void *blocks[LARGE_CHURN_LIVE];
  size_t sizes[LARGE_CHURN_LIVE];
  uint64_t rng = t->seed, sum = 0;
  for (size_t i = 0; i < LARGE_CHURN_LIVE; i++) {
    sizes[i] = bench_range(&rng, LARGE_CHURN_MIN, LARGE_CHURN_MAX);
    blocks[i] = bench_fill_pages(t->a, sizes[i], i);
  }
  for (uint64_t s = 0; s < t->steps; s++) {
    size_t k = (size_t)(bench_rand(&rng) % LARGE_CHURN_LIVE);
    sum += bench_mix(bench_read(blocks[k], sizes[k]));
    t->a->free(blocks[k]);
    sizes[k] = bench_range(&rng, LARGE_CHURN_MIN, LARGE_CHURN_MAX);
    blocks[k] = bench_fill_pages(t->a, sizes[k], s);
  }
  for (size_t i = 0; i < LARGE_CHURN_LIVE; i++) {
    sum += bench_mix(bench_read(blocks[i], sizes[i]));
    t->a->free(blocks[i]);
  }
  t->sum = sum;
  return NULL;
}

/* The region is the whole run, filling included: a process that starts,
 * churns and exits is what the faults and wall time of the issue measured. */
BENCH_KERNEL(large_churn) {
  large_churn_thread_t *t = calloc(p->threads, sizeof *t);
  if (!t) bench_fail("out of memory");
  for (unsigned i = 0; i < p->threads; i++)
    t[i] = (large_churn_thread_t){a, p->n, p->seed + i, 0};
  uint64_t sum = bench_run_measured_threads(p->threads, large_churn_thread, t, sizeof *t,
                                            offsetof(large_churn_thread_t, sum));
  free(t);
  return (bench_result_t){p->n * p->threads, sum};
}
