/*
 * threads.h - run one function on T threads and wait for them all.
 */
#ifndef BENCH_THREADS_H
#define BENCH_THREADS_H

#include <stddef.h>
#include <stdint.h>

/* Starts fn(args + i * stride) on `count` threads, i = 0..count-1, and joins
 * them. Fails the run when a thread cannot be created. */
void bench_run_threads(unsigned count, void *(*fn)(void *), void *args, size_t stride);

/* The same as the kernel's measured region, then the sum of the uint64_t
 * every argument holds at `sum_offset` (each thread's checksum). */
uint64_t bench_run_measured_threads(unsigned count, void *(*fn)(void *), void *args, size_t stride,
                                    size_t sum_offset);

#endif /* BENCH_THREADS_H */
