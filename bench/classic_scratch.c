/*
 * classic_scratch.c - cache-scratch (false sharing): the main thread allocates
 * one 16-byte block per thread (neighbours, likely on one cache line) and
 * hands each to a thread, which frees it; then each thread repeatedly
 * allocates a 16-byte block and writes it many times. An allocator that gives
 * threads blocks on a shared cache line makes those writes ping-pong between
 * cores. Wall-clock only. One op = one allocation.
 */
#include "kernels.h"
#include "threads.h"

#include <stddef.h>
#include <stdlib.h>

#define SCRATCH_WRITES 2000
#define SCRATCH_SIZE   16

typedef struct scratch_thread_s {
  const bench_alloc_t *a;
  void *first; /* allocated by the main thread */
  uint64_t reps, sum;
} scratch_thread_t;

static void *scratch_thread(void *arg) {
  scratch_thread_t *t = arg;
  uint64_t sum = 0; /* local: a shared line written per step would measure false sharing */
  sum += bench_mix(bench_read(t->first, SCRATCH_SIZE));
  t->a->free(t->first);
  for (uint64_t r = 0; r < t->reps; r++) {
    volatile uint64_t *q = bench_check(t->a->malloc(SCRATCH_SIZE), SCRATCH_SIZE);
    q[0] = 0;
    for (unsigned w = 0; w < SCRATCH_WRITES; w++)
      q[0] = q[0] + 1;
    sum += q[0];
    t->a->free((void *)q);
  }
  t->sum += sum;
  return NULL;
}

BENCH_KERNEL(classic_cache_scratch) {
  scratch_thread_t *t = calloc(p->threads, sizeof *t);
  if (!t) bench_fail("out of memory");
  for (unsigned i = 0; i < p->threads; i++) {
    t[i] = (scratch_thread_t){a, bench_check(a->malloc(SCRATCH_SIZE), SCRATCH_SIZE), p->n, 0};
    bench_stamp(t[i].first, SCRATCH_SIZE, i);
  }
  uint64_t sum = bench_run_measured_threads(p->threads, scratch_thread, t, sizeof *t,
                                            offsetof(scratch_thread_t, sum));
  free(t);
  return (bench_result_t){p->n * p->threads, sum};
}
