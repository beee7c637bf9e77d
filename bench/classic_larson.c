/*
 * classic_larson.c - larson-like: a server whose threads each keep a set of
 * live blocks and replace random ones (16-512 B); after every epoch each set
 * passes to the next thread, so most blocks are freed by a thread other than
 * the one that allocated them. A barrier separates epochs, so no two threads
 * ever touch one set and the checksum is deterministic.
 * One op = one replacement (a free + an allocation).
 */
#include "kernels.h"
#include "threads.h"

#include <pthread.h>
#include <stdlib.h>

#define LARSON_SLOTS  1000
#define LARSON_EPOCHS 16

typedef struct larson_set_s {
  void *blocks[LARSON_SLOTS];
  size_t sizes[LARSON_SLOTS];
} larson_set_t;

typedef struct larson_s {
  const bench_alloc_t *a;
  larson_set_t *sets;
  unsigned threads;
  uint64_t steps; /* replacements per thread per epoch */
  pthread_barrier_t barrier;
} larson_t;

typedef struct larson_thread_s {
  larson_t *shared;
  unsigned index;
  uint64_t sum;
} larson_thread_t;

static void *larson_thread(void *arg) {
  larson_thread_t *t = arg;
  uint64_t sum = 0; /* local: a shared line written per step would measure false sharing */
  larson_t *l = t->shared;
  uint64_t rng = 1000 + t->index;
  larson_set_t *own = &l->sets[t->index];
  for (size_t i = 0; i < LARSON_SLOTS; i++) {
    own->sizes[i] = bench_range(&rng, 16, 512);
    own->blocks[i] = bench_check(l->a->malloc(own->sizes[i]), own->sizes[i]);
    bench_stamp(own->blocks[i], own->sizes[i], rng);
  }
  for (unsigned epoch = 0; epoch < LARSON_EPOCHS; epoch++) {
    pthread_barrier_wait(&l->barrier);
    larson_set_t *set = &l->sets[(t->index + epoch) % l->threads];
    for (uint64_t s = 0; s < l->steps; s++) {
      uint64_t r = bench_rand(&rng);
      size_t k = (size_t)(r % LARSON_SLOTS);
      sum += bench_mix(bench_read(set->blocks[k], set->sizes[k]));
      l->a->free(set->blocks[k]);
      set->sizes[k] = 16 + (size_t)((r >> 32) % 497);
      set->blocks[k] = bench_check(l->a->malloc(set->sizes[k]), set->sizes[k]);
      bench_stamp(set->blocks[k], set->sizes[k], r);
    }
  }
  t->sum += sum;
  return NULL;
}

BENCH_KERNEL(classic_larson) {
  larson_t l = {.a = a, .threads = p->threads};
  l.steps = p->n / ((uint64_t)p->threads * LARSON_EPOCHS) + 1;
  l.sets = calloc(p->threads, sizeof *l.sets); /* harness memory: the C library's */
  larson_thread_t *t = calloc(p->threads, sizeof *t);
  if (!l.sets || !t) bench_fail("out of memory");
  pthread_barrier_init(&l.barrier, NULL, p->threads);
  for (unsigned i = 0; i < p->threads; i++)
    t[i] = (larson_thread_t){&l, i, 0};
  bench_region_begin();
  bench_run_threads(p->threads, larson_thread, t, sizeof *t);
  bench_region_end();
  uint64_t sum = 0;
  for (unsigned i = 0; i < p->threads; i++) {
    sum += t[i].sum;
    for (size_t k = 0; k < LARSON_SLOTS; k++) {
      sum += bench_mix(bench_read(l.sets[i].blocks[k], l.sets[i].sizes[k]));
      a->free(l.sets[i].blocks[k]);
    }
  }
  pthread_barrier_destroy(&l.barrier);
  free(l.sets);
  free(t);
  return (bench_result_t){l.steps * p->threads * LARSON_EPOCHS, sum};
}
