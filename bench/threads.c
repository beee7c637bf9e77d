/*
 * threads.c - bench_run_threads(): the one place kernels create threads.
 */
#include "threads.h"

#include "bench.h"

#include <pthread.h>

#define MAX_THREADS 256

void bench_run_threads(unsigned count, void *(*fn)(void *), void *args, size_t stride) {
  pthread_t ids[MAX_THREADS];
  if (count > MAX_THREADS) bench_fail("at most %d threads", MAX_THREADS);
  for (unsigned i = 0; i < count; i++)
    if (pthread_create(&ids[i], NULL, fn, (char *)args + i * stride) != 0)
      bench_fail("pthread_create failed");
  for (unsigned i = 0; i < count; i++)
    pthread_join(ids[i], NULL);
}

uint64_t bench_run_measured_threads(unsigned count, void *(*fn)(void *), void *args, size_t stride,
                                    size_t sum_offset) {
  bench_region_begin();
  bench_run_threads(count, fn, args, stride);
  bench_region_end();
  uint64_t sum = 0;
  for (unsigned i = 0; i < count; i++)
    sum += *(const uint64_t *)((const char *)args + i * stride + sum_offset);
  return sum;
}
