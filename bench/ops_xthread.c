/*
 * ops_xthread.c - per-operation scan: every block is freed by another thread.
 * The main thread fills batches of 256 small blocks into two alternating
 * slots; a worker frees each batch. Semaphores (blocking, no spinning) hand
 * the slots over, so the instruction count does not depend on timing.
 * One op = one allocation + its remote free.
 */
#include "kernels.h"

#include <pthread.h>
#include <semaphore.h>

#define XT_BATCH 256
#define XT_WARM  8 /* batches before the measured region */

typedef struct xthread_s {
  const bench_alloc_t *a;
  sem_t full, empty;
  uint64_t batches, sum;
  void *blocks[2][XT_BATCH];
  size_t sizes[2][XT_BATCH];
} xthread_t;

static void *xthread_worker(void *arg) {
  xthread_t *x = arg;
  for (uint64_t b = 0; b < x->batches; b++) {
    sem_wait(&x->full);
    for (size_t i = 0; i < XT_BATCH; i++) {
      x->sum += bench_mix(bench_read(x->blocks[b & 1][i], x->sizes[b & 1][i]));
      x->a->free(x->blocks[b & 1][i]);
    }
    sem_post(&x->empty);
  }
  return NULL;
}

BENCH_KERNEL(op_xthread_free) {
  static xthread_t x;
  uint64_t measured = (p->n + XT_BATCH - 1) / XT_BATCH, rng = p->seed;
  x.a = a;
  x.batches = XT_WARM + measured;
  x.sum = 0;
  sem_init(&x.full, 0, 0);
  sem_init(&x.empty, 0, 2);
  pthread_t worker;
  if (pthread_create(&worker, NULL, xthread_worker, &x) != 0) bench_fail("pthread_create");
  for (uint64_t b = 0; b < x.batches; b++) {
    if (b == XT_WARM) {
      /* Both slots free again = the worker has freed every warm-up block. */
      sem_wait(&x.empty);
      sem_wait(&x.empty);
      sem_post(&x.empty);
      sem_post(&x.empty);
      bench_region_begin();
    }
    sem_wait(&x.empty);
    for (size_t i = 0; i < XT_BATCH; i++) {
      size_t size = bench_range(&rng, 16, 128);
      x.sizes[b & 1][i] = size;
      x.blocks[b & 1][i] = bench_check(a->malloc(size), size);
      bench_stamp(x.blocks[b & 1][i], size, b * XT_BATCH + i);
    }
    sem_post(&x.full);
  }
  pthread_join(worker, NULL);
  bench_region_end();
  sem_destroy(&x.full);
  sem_destroy(&x.empty);
  return (bench_result_t){measured * XT_BATCH, x.sum};
}
