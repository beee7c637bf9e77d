/*
 * classic_xmalloc.c - xmalloc-like pure producer/consumer: half the threads
 * (at least one) only allocate, the others only free. Producers stamp blocks
 * of 16-128 B into batches of 64 and queue the batches; consumers free them.
 * The queue is bounded so memory stays flat. One op = one block.
 */
#include "kernels.h"
#include "threads.h"

#include <pthread.h>
#include <stdlib.h>

#define XM_BATCH   64
#define XM_MAX_OUT 64 /* queued batches before producers wait */

typedef struct xm_batch_s {
  struct xm_batch_s *next;
  void *blocks[XM_BATCH];
  size_t sizes[XM_BATCH];
} xm_batch_t;

typedef struct xmalloc_s {
  const bench_alloc_t *a;
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  xm_batch_t *head, *tail;
  unsigned queued, producers_left;
  uint64_t batches_per_producer;
} xmalloc_t;

typedef struct xm_thread_s {
  xmalloc_t *shared;
  unsigned index;
  bool producer;
  uint64_t sum;
} xm_thread_t;

static void xm_produce(xm_thread_t *t) {
  xmalloc_t *x = t->shared;
  uint64_t rng = 7000 + t->index;
  for (uint64_t b = 0; b < x->batches_per_producer; b++) {
    xm_batch_t *batch = bench_check(x->a->malloc(sizeof *batch), sizeof *batch);
    for (size_t i = 0; i < XM_BATCH; i++) {
      size_t size = bench_range(&rng, 16, 128);
      batch->sizes[i] = size;
      batch->blocks[i] = bench_check(x->a->malloc(size), size);
      bench_stamp(batch->blocks[i], size, rng);
    }
    batch->next = NULL;
    pthread_mutex_lock(&x->lock);
    while (x->queued >= XM_MAX_OUT)
      pthread_cond_wait(&x->not_full, &x->lock);
    if (x->tail)
      x->tail->next = batch;
    else
      x->head = batch;
    x->tail = batch;
    x->queued++;
    pthread_cond_signal(&x->not_empty);
    pthread_mutex_unlock(&x->lock);
  }
  pthread_mutex_lock(&x->lock);
  x->producers_left--;
  pthread_cond_broadcast(&x->not_empty);
  pthread_mutex_unlock(&x->lock);
}

static void xm_consume(xm_thread_t *t) {
  xmalloc_t *x = t->shared;
  uint64_t sum = 0; /* local: a shared line written per step would measure false sharing */
  for (;;) {
    pthread_mutex_lock(&x->lock);
    while (!x->head && x->producers_left > 0)
      pthread_cond_wait(&x->not_empty, &x->lock);
    xm_batch_t *batch = x->head;
    if (batch) {
      x->head = batch->next;
      if (!x->head) x->tail = NULL;
      x->queued--;
      pthread_cond_signal(&x->not_full);
    }
    pthread_mutex_unlock(&x->lock);
    if (!batch) break;
    for (size_t i = 0; i < XM_BATCH; i++) {
      sum += bench_mix(bench_read(batch->blocks[i], batch->sizes[i]));
      x->a->free(batch->blocks[i]);
    }
    x->a->free(batch);
  }
  t->sum += sum;
}

static void *xm_thread(void *arg) {
  xm_thread_t *t = arg;
  if (t->producer)
    xm_produce(t);
  else
    xm_consume(t);
  return NULL;
}

BENCH_KERNEL(classic_xmalloc) {
  unsigned threads = p->threads < 2 ? 2 : p->threads, producers = threads / 2;
  xmalloc_t x = {.a = a, .producers_left = producers};
  x.batches_per_producer = p->n / ((uint64_t)producers * XM_BATCH) + 1;
  pthread_mutex_init(&x.lock, NULL);
  pthread_cond_init(&x.not_empty, NULL);
  pthread_cond_init(&x.not_full, NULL);
  xm_thread_t *t = calloc(threads, sizeof *t);
  if (!t) bench_fail("out of memory");
  for (unsigned i = 0; i < threads; i++)
    t[i] = (xm_thread_t){&x, i, i < producers, 0};
  bench_region_begin();
  bench_run_threads(threads, xm_thread, t, sizeof *t);
  bench_region_end();
  uint64_t sum = 0;
  for (unsigned i = 0; i < threads; i++)
    sum += t[i].sum;
  free(t);
  pthread_mutex_destroy(&x.lock);
  pthread_cond_destroy(&x.not_empty);
  pthread_cond_destroy(&x.not_full);
  return (bench_result_t){x.batches_per_producer * producers * XM_BATCH, sum};
}
