/*
 * classic_mstress.c - mstress-like: threads share one array of slots and, at
 * random, allocate into a slot (freeing what it held), free a slot, or take a
 * slot's block, realloc it and put it back - so blocks migrate between threads
 * and some live long. Sizes are mostly small powers of two (at least 32 B: the
 * size word must not overlap the stamp's last byte), now and then up to 64 KiB. Threads are
 * recreated every round. One op = one step.
 *
 * Checksum: every block is stamped once (value and size in its first two
 * words, keeping the value across reallocs) and freed exactly once, so the sum
 * over freed values is the sum over allocated values whatever the races.
 */
#include "kernels.h"
#include "threads.h"

#include <stdatomic.h>
#include <stdlib.h>

#define MS_SLOTS  4096
#define MS_ROUNDS 10

typedef struct mstress_s {
  const bench_alloc_t *a;
  _Atomic(uint64_t *) slots[MS_SLOTS];
  uint64_t steps; /* per thread per round */
} mstress_t;

typedef struct ms_thread_s {
  mstress_t *shared;
  uint64_t seed, sum;
} ms_thread_t;

static size_t ms_size(uint64_t r) {
  if (r % 100 == 0) return (size_t)1024 << (r >> 8) % 7; /* 1 KiB .. 64 KiB */
  return (size_t)32 << (r >> 8) % 6;                     /* 32 B .. 1 KiB */
}

static uint64_t *ms_alloc(const bench_alloc_t *a, size_t size, uint64_t value) {
  uint64_t *q = bench_check(a->malloc(size), size);
  q[1] = size;
  bench_stamp(q, size, value);
  return q;
}

static uint64_t ms_release(const bench_alloc_t *a, uint64_t *q) {
  uint64_t value = bench_read(q, (size_t)q[1]);
  a->free(q);
  return bench_mix(value);
}

static void *ms_thread(void *arg) {
  ms_thread_t *t = arg;
  uint64_t sum = 0; /* local: a shared line written per step would measure false sharing */
  mstress_t *m = t->shared;
  uint64_t rng = t->seed;
  for (uint64_t s = 0; s < m->steps; s++) {
    uint64_t r = bench_rand(&rng);
    _Atomic(uint64_t *) *slot = &m->slots[r % MS_SLOTS];
    uint64_t *old;
    switch ((r >> 40) & 3) {
    case 0:
    case 1: /* allocate into the slot */
      old = atomic_exchange(slot, ms_alloc(m->a, ms_size(r >> 12), r));
      break;
    case 2: { /* take, resize, put back */
      uint64_t *q = atomic_exchange(slot, NULL);
      if (q) {
        size_t size = ms_size(r >> 14);
        uint64_t value = bench_read(q, (size_t)q[1]);
        q = bench_check(m->a->realloc(q, size), size);
        q[1] = size;
        bench_stamp(q, size, value);
      }
      old = q ? atomic_exchange(slot, q) : NULL;
      break;
    }
    default: /* free the slot */
      old = atomic_exchange(slot, NULL);
      break;
    }
    if (old) sum += ms_release(m->a, old);
  }
  t->sum += sum;
  return NULL;
}

BENCH_KERNEL(classic_mstress) {
  mstress_t *m = calloc(1, sizeof *m);
  ms_thread_t *t = calloc(p->threads, sizeof *t);
  if (!m || !t) bench_fail("out of memory");
  m->a = a;
  m->steps = p->n / ((uint64_t)p->threads * MS_ROUNDS) + 1;
  bench_region_begin();
  for (unsigned round = 0; round < MS_ROUNDS; round++) {
    for (unsigned i = 0; i < p->threads; i++)
      t[i] = (ms_thread_t){m, p->seed + round * 1000 + i, t[i].sum};
    bench_run_threads(p->threads, ms_thread, t, sizeof *t);
  }
  bench_region_end();
  uint64_t sum = 0;
  for (unsigned i = 0; i < p->threads; i++)
    sum += t[i].sum;
  for (size_t k = 0; k < MS_SLOTS; k++) {
    uint64_t *q = atomic_load(&m->slots[k]);
    if (q) sum += ms_release(a, q);
  }
  uint64_t ops = m->steps * p->threads * MS_ROUNDS;
  free(t);
  free(m);
  return (bench_result_t){ops, sum};
}
