/*
 * churn.c - the memory section's long-running churn: waves of threads, each
 * thread churning a private live set of mixed sizes (70% 16-512 B, 25%
 * 1-16 KiB, 5% 32-256 KiB), then leaving a few blocks in a shared survivor
 * pool (freeing what they displace: cross-thread frees of an earlier wave's
 * blocks), freeing the rest and exiting. Between waves the main thread sleeps
 * briefly and samples RSS against the live set (the survivors), printing
 *   sample wave=W rss_kib=R live_kib=L
 * An allocator that returns memory shows RSS falling back toward the live set
 * after every wave. One op = one replacement.
 */
#define _GNU_SOURCE
#include "kernels.h"
#include "threads.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHURN_LIVE      1024
#define CHURN_STEPS     20000
#define CHURN_SURVIVORS 4096
#define CHURN_KEEP      16 /* a thread leaves 1 block in 16 to the pool */
#define CHURN_PAUSE_MS  50

typedef struct churn_s {
  const bench_alloc_t *a;
  _Atomic(uint64_t *) survivors[CHURN_SURVIVORS];
  _Atomic(size_t) live_bytes;
} churn_t;

typedef struct churn_thread_s {
  churn_t *shared;
  uint64_t seed, sum;
} churn_thread_t;

static size_t churn_size(uint64_t r) {
  unsigned pick = (unsigned)(r % 100);
  if (pick < 70) return 16 + (size_t)((r >> 8) % 497);
  if (pick < 95) return 1024 + (size_t)((r >> 8) % (15 * 1024 + 1));
  return 32768 + (size_t)((r >> 8) % (224 * 1024 + 1));
}

/* Blocks carry their size in word 1 (sizes are >= 16, and the stamp's last
 * byte is past word 1 for every size >= 17; 16-byte blocks skip that byte). */
static uint64_t *churn_alloc(const bench_alloc_t *a, size_t size, uint64_t value) {
  if (size < 17) size = 17;
  uint64_t *q = bench_check(a->malloc(size), size);
  /* Touch every page, so the live set is resident and RSS compares to it. */
  for (size_t off = 4096; off < size; off += 4096)
    ((volatile uint8_t *)q)[off] = 1;
  q[1] = size;
  bench_stamp(q, size, value);
  return q;
}

static uint64_t churn_release(const bench_alloc_t *a, uint64_t *q) {
  uint64_t value = bench_read(q, (size_t)q[1]);
  a->free(q);
  return bench_mix(value);
}

static void *churn_thread(void *arg) {
  churn_thread_t *t = arg;
  uint64_t sum = 0; /* local: a shared line written per step would measure false sharing */
  churn_t *c = t->shared;
  uint64_t *live[CHURN_LIVE] = {0};
  uint64_t rng = t->seed;
  for (uint64_t s = 0; s < CHURN_STEPS; s++) {
    uint64_t r = bench_rand(&rng);
    size_t k = (size_t)(r % CHURN_LIVE);
    if (live[k]) sum += churn_release(c->a, live[k]);
    live[k] = churn_alloc(c->a, churn_size(r >> 10), r);
  }
  for (size_t k = 0; k < CHURN_LIVE; k++) {
    if (!live[k]) continue;
    uint64_t r = bench_rand(&rng);
    if (r % CHURN_KEEP == 0) {
      atomic_fetch_add(&c->live_bytes, (size_t)live[k][1]);
      uint64_t *old = atomic_exchange(&c->survivors[(r >> 8) % CHURN_SURVIVORS], live[k]);
      if (old) {
        atomic_fetch_sub(&c->live_bytes, (size_t)old[1]);
        sum += churn_release(c->a, old);
      }
    } else {
      sum += churn_release(c->a, live[k]);
    }
  }
  t->sum += sum;
  return NULL;
}

BENCH_KERNEL(churn_waves) {
  churn_t *c = calloc(1, sizeof *c);
  churn_thread_t *t = calloc(p->threads, sizeof *t);
  if (!c || !t) bench_fail("out of memory");
  c->a = a;
  uint64_t sum = 0;
  bench_region_begin();
  for (uint64_t wave = 0; wave < p->n; wave++) {
    for (unsigned i = 0; i < p->threads; i++)
      t[i] = (churn_thread_t){c, p->seed + wave * 1000 + i, 0};
    bench_run_threads(p->threads, churn_thread, t, sizeof *t);
    for (unsigned i = 0; i < p->threads; i++)
      sum += t[i].sum;
    nanosleep(&(struct timespec){0, CHURN_PAUSE_MS * 1000000L}, NULL);
    printf("sample wave=%llu rss_kib=%zu live_kib=%zu\n", (unsigned long long)wave, bench_rss_kib(),
           atomic_load(&c->live_bytes) / 1024);
    fflush(stdout);
  }
  bench_region_end();
  for (size_t k = 0; k < CHURN_SURVIVORS; k++) {
    uint64_t *q = atomic_load(&c->survivors[k]);
    if (q) sum += churn_release(a, q);
  }
  free(t);
  free(c);
  return (bench_result_t){p->n * p->threads * CHURN_STEPS, sum};
}
