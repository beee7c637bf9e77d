/*
 * ops_live.c - per-operation scan: a live set under random replacement (free
 * one block, allocate its successor), plain and through aligned_alloc, and a
 * cfrac-like shape of short-lived temporaries beside a few long-lived blocks.
 * One op = one allocation + one free.
 */
#include "kernels.h"

#define LIVE_MAX 65536 /* the largest live set; every set is a power of two */

/* `live` blocks of lo..hi bytes (rounded up to `align` when it is not 0, and
 * then allocated with aligned_alloc); p->n random replacements measured after
 * one replacement per block of warm-up. */
static bench_result_t live_replace(const bench_alloc_t *a, const bench_params_t *p, size_t live,
                                   size_t lo, size_t hi, size_t align) {
  static void *blocks[LIVE_MAX];
  static size_t sizes[LIVE_MAX];
  uint64_t rng = p->seed, sum = 0;
  for (uint64_t i = 0; i < live + (live + p->n); i++) {
    if (i == live + live) bench_region_begin();
    uint64_t r = bench_rand(&rng);
    size_t k = i < live ? (size_t)i : (size_t)r & (live - 1);
    if (i >= live) {
      sum += bench_mix(bench_read(blocks[k], sizes[k]));
      a->free(blocks[k]);
    }
    size_t size = lo + (size_t)((r >> 20) % (hi - lo + 1));
    if (align) {
      size = bench_round_up(size, align);
      blocks[k] = bench_check(a->aligned(align, size), size);
      if ((uintptr_t)blocks[k] & (align - 1))
        bench_defect("aligned_alloc(%zu, %zu) returned %p, misaligned", align, size, blocks[k]);
    } else {
      blocks[k] = bench_check(a->malloc(size), size);
    }
    sizes[k] = size;
    bench_stamp(blocks[k], size, i);
  }
  bench_region_end();
  for (size_t k = 0; k < live; k++) {
    sum += bench_mix(bench_read(blocks[k], sizes[k]));
    a->free(blocks[k]);
  }
  return (bench_result_t){p->n, sum};
}

BENCH_KERNEL(op_working_set) {
  return live_replace(a, p, 65536, 16, 512, 0);
}
BENCH_KERNEL(op_live_set) {
  return live_replace(a, p, 1024, 16, 112, 0);
}
BENCH_KERNEL(op_aligned_64) {
  return live_replace(a, p, 1024, 16, 112, 64);
}
BENCH_KERNEL(op_aligned_4096) {
  return live_replace(a, p, 256, 16, 8192, 4096);
}

#define CFRAC_TEMPS 4   /* temporaries per step, at most */
#define CFRAC_KEPT  256 /* long-lived results, replaced at random */

/* cfrac (mimalloc-bench) factors with bignums: each arithmetic step allocates
 * a few small temporaries and frees them newest first, and now and then a
 * result outlives the step, replacing an older one. */
BENCH_KERNEL(op_cfrac_like) {
  static void *kept[CFRAC_KEPT];
  static size_t kept_sizes[CFRAC_KEPT];
  void *temps[CFRAC_TEMPS];
  size_t temp_sizes[CFRAC_TEMPS];
  uint64_t rng = p->seed, sum = 0, ops = 0;
  for (size_t k = 0; k < CFRAC_KEPT; k++) {
    kept_sizes[k] = bench_range(&rng, 16, 64);
    kept[k] = bench_check(a->malloc(kept_sizes[k]), kept_sizes[k]);
    bench_stamp(kept[k], kept_sizes[k], k);
  }
  uint64_t warm = 1000;
  for (uint64_t step = 0; ops < p->n; step++) {
    if (step == warm) bench_region_begin();
    uint64_t r = bench_rand(&rng);
    size_t count = 2 + (size_t)(r & 3) % 3;
    for (size_t t = 0; t < count; t++) {
      temp_sizes[t] = 16 + (size_t)((r >> (8 + 6 * t)) % 49); /* 16..64 B */
      temps[t] = bench_check(a->malloc(temp_sizes[t]), temp_sizes[t]);
      bench_stamp(temps[t], temp_sizes[t], step + t);
    }
    size_t keep = (r >> 40) % 8 == 0 ? 1 : 0; /* the oldest temporary survives */
    if (keep) {
      size_t k = (size_t)(r >> 48) % CFRAC_KEPT;
      sum += bench_mix(bench_read(kept[k], kept_sizes[k]));
      a->free(kept[k]);
      kept[k] = temps[0];
      kept_sizes[k] = temp_sizes[0];
    }
    for (size_t t = count; t-- > keep;) {
      sum += bench_mix(bench_read(temps[t], temp_sizes[t]));
      a->free(temps[t]);
    }
    if (step >= warm) ops += count;
  }
  bench_region_end();
  for (size_t k = 0; k < CFRAC_KEPT; k++) {
    sum += bench_mix(bench_read(kept[k], kept_sizes[k]));
    a->free(kept[k]);
  }
  return (bench_result_t){ops, sum};
}
