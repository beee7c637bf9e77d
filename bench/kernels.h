/*
 * kernels.h - the kernel registry (kernels.c) and every kernel's entry point.
 *
 * ops_*.c      the per-operation scan (one allocator operation per op)
 * fastpath.c   the per-call fast-path count
 * classic_*.c  the classic allocator benchmarks, re-written from their
 *              public descriptions
 * churn.c      the long-running thread-wave churn of the memory section
 * large_churn.c  the per-thread churn of 5-25 MiB blocks
 * idle.c       RSS after a program frees its memory and goes idle
 */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

#include "bench.h"

extern const bench_kernel_t bench_kernels[];
extern const size_t bench_kernel_count;
const bench_kernel_t *bench_kernel_find(const char *name);

#define BENCH_KERNEL(fn) bench_result_t fn(const bench_alloc_t *a, const bench_params_t *p)

/* per-operation scan */
BENCH_KERNEL(op_small);
BENCH_KERNEL(op_medium);
BENCH_KERNEL(op_large);
BENCH_KERNEL(op_huge);
BENCH_KERNEL(op_batch_lifo);
BENCH_KERNEL(op_batch_fifo);
BENCH_KERNEL(op_realloc_chain);
BENCH_KERNEL(op_realloc_large);
BENCH_KERNEL(op_calloc);
BENCH_KERNEL(op_aligned);
BENCH_KERNEL(op_usable_size);
BENCH_KERNEL(op_working_set);
BENCH_KERNEL(op_live_set);
BENCH_KERNEL(op_aligned_64);
BENCH_KERNEL(op_aligned_4096);
BENCH_KERNEL(op_cfrac_like);
BENCH_KERNEL(op_tree);
BENCH_KERNEL(op_fastpath);
BENCH_KERNEL(op_xthread_free);

/* classic kernels */
BENCH_KERNEL(classic_glibc_simple);
BENCH_KERNEL(classic_larson);
BENCH_KERNEL(classic_xmalloc);
BENCH_KERNEL(classic_mstress);
BENCH_KERNEL(classic_alloc_test);
BENCH_KERNEL(classic_cache_scratch);
BENCH_KERNEL(classic_malloc_large);

/* memory */
BENCH_KERNEL(large_churn);
BENCH_KERNEL(idle_rss);
BENCH_KERNEL(idle_rss_live);
BENCH_KERNEL(churn_waves);

#endif /* BENCH_KERNELS_H */
