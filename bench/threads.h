/*
 * threads.h - run one function on T threads and wait for them all.
 */
#ifndef BENCH_THREADS_H
#define BENCH_THREADS_H

#include <stddef.h>

/* Starts fn(args + i * stride) on `count` threads, i = 0..count-1, and joins
 * them. Fails the run when a thread cannot be created. */
void bench_run_threads(unsigned count, void *(*fn)(void *), void *args, size_t stride);

#endif /* BENCH_THREADS_H */
