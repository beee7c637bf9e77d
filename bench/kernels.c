/*
 * kernels.c - the registry: name, entry point, default size (the full
 * benchmark's size; the runner scales it) and default thread count.
 */
#include "kernels.h"

#include <string.h>

const bench_kernel_t bench_kernels[] = {
    {"small", op_small, 1000000, 1, "malloc+free pair, 16-128 B"},
    {"medium", op_medium, 200000, 1, "malloc+free pair, 1-32 KiB"},
    {"large", op_large, 20000, 1, "malloc+free pair, 64 KiB-1 MiB"},
    {"huge", op_huge, 2000, 1, "malloc+free pair, 4-8 MiB"},
    {"batch-lifo", op_batch_lifo, 1000000, 1, "1,000 small allocations, freed newest first"},
    {"batch-fifo", op_batch_fifo, 1000000, 1, "1,000 small allocations, freed oldest first"},
    {"realloc-chain", op_realloc_chain, 500000, 1, "realloc growth 16 B -> 64 KiB by x1.25"},
    {"realloc-large", op_realloc_large, 100000, 1, "realloc growth 64 KiB -> 1 MiB by x1.25"},
    {"calloc", op_calloc, 500000, 1, "calloc+free pair, 16-1024 B"},
    {"aligned", op_aligned, 300000, 1, "aligned_alloc+free pair, alignment 64 B-4 KiB"},
    {"usable-size", op_usable_size, 2000000, 1, "usable_size of 1,024 live blocks"},
    {"working-set", op_working_set, 1000000, 1, "65,536 live blocks, random replacement"},
    {"live-set", op_live_set, 1000000, 1, "1,024 live blocks of 16-112 B, random replacement"},
    {"aligned-64", op_aligned_64, 1000000, 1, "1,024 live aligned_alloc(64) blocks, replaced"},
    {"aligned-4096", op_aligned_4096, 200000, 1, "256 live aligned_alloc(4096) blocks, replaced"},
    {"cfrac-like", op_cfrac_like, 1000000, 1, "2-4 short-lived 16-64 B temporaries per step"},
    {"tree", op_tree, 409600, 1, "4,096-node search tree of 33-64 B nodes, built and freed"},
    {"fastpath", op_fastpath, 1000000, 1, "50 mallocs of 32 B, then their frees"},
    {"xthread-free", op_xthread_free, 500000, 2, "every block freed by another thread"},
    {"glibc-simple", classic_glibc_simple, 1000000, 1, "batches of 25..1600 fixed-size blocks"},
    {"larson", classic_larson, 2000000, 2, "threads replace random blocks, hand sets on"},
    {"xmalloc", classic_xmalloc, 4000000, 2, "producers allocate, consumers free"},
    {"mstress", classic_mstress, 1000000, 2, "shared slots: alloc/free/swap/realloc, thread waves"},
    {"alloc-test", classic_alloc_test, 4000000, 2, "Pareto sizes <= 1 KiB, private live sets"},
    {"cache-scratch", classic_cache_scratch, 2000, 2, "false sharing of small blocks"},
    {"malloc-large", classic_malloc_large, 400, 1, "20 live blocks of 5-25 MiB, replaced"},
    {"large-churn", large_churn, 100, 2, "10 live blocks of 5-25 MiB per thread, replaced"},
    {"idle-rss", idle_rss, 256, 1, "n MiB of small blocks freed, then 1 s idle (RSS samples)"},
    {"idle-rss-live", idle_rss_live, 256, 1, "as idle-rss, the first 32 MiB staying live"},
    {"churn-waves", churn_waves, 40, 4, "thread waves over a bounded live set (RSS samples)"},
};
const size_t bench_kernel_count = sizeof bench_kernels / sizeof bench_kernels[0];

const bench_kernel_t *bench_kernel_find(const char *name) {
  for (size_t i = 0; i < bench_kernel_count; i++)
    if (strcmp(bench_kernels[i].name, name) == 0) return &bench_kernels[i];
  return NULL;
}
