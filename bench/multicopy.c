/*
 * multicopy.c - many private copies active in one process. Each copy is its
 * own shared module (nsalloc_module.c built with prefix mcNN_), dlopen()ed
 * the way a host loads bindings.
 *
 *   bench-multicopy churn K T N DIR   T threads, N ops each; op i of a thread
 *       frees and re-allocates a random block of a live set spread over K
 *       copies (block slot s belongs to copy s % K). Prints the harness line.
 *   bench-multicopy rss K DIR [control]   RSS growth (all, and anonymous only)
 *       after loading K copies, and after one malloc+free in each (an idle,
 *       initialised copy); `control` loads the allocator-free control module
 *       instead, whose growth is dlopen()'s own cost.
 *
 * The work (sizes, values, checksum) does not depend on K: only how the blocks
 * are spread over copies does, so throughput must stay flat as K grows if the
 * copies share nothing.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "threads.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COPIES 16
#define MC_SLOTS   4096 /* per thread; multiple of every K used */

static const bench_alloc_t *copies[MAX_COPIES];
static unsigned copy_count;

/* k copy modules, or (control) the allocator-free control module once. */
static void load_copies(unsigned k, const char *dir, bool control) {
  if (k < 1 || k > MAX_COPIES || (control && k != 1)) bench_fail("1..%d copies", MAX_COPIES);
  for (unsigned i = 0; i < k; i++) {
    char path[4096];
    if (control)
      snprintf(path, sizeof path, "%s/libbench-copy-control.so", dir);
    else
      snprintf(path, sizeof path, "%s/libbench-copy-%02u.so", dir, i);
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!module) bench_fail("dlopen: %s", dlerror());
    copies[i] = dlsym(module, "bench_module_arm");
    if (!copies[i]) bench_fail("%s: no bench_module_arm", path);
  }
  copy_count = k;
}

typedef struct mc_thread_s {
  uint64_t ops, seed, sum;
} mc_thread_t;

static void *mc_thread(void *arg) {
  mc_thread_t *t = arg;
  uint64_t sum = 0; /* local: a shared line written per step would measure false sharing */
  void **blocks = calloc(MC_SLOTS, sizeof *blocks);
  size_t *sizes = calloc(MC_SLOTS, sizeof *sizes);
  if (!blocks || !sizes) bench_fail("out of memory");
  uint64_t rng = t->seed;
  for (uint64_t i = 0; i < t->ops; i++) {
    uint64_t r = bench_rand(&rng);
    size_t s = (size_t)r & (MC_SLOTS - 1);
    const bench_alloc_t *a = copies[s % copy_count];
    if (blocks[s]) {
      sum += bench_mix(bench_read(blocks[s], sizes[s]));
      a->free(blocks[s]);
    }
    sizes[s] = 16 + (size_t)((r >> 20) % 241); /* 16-256 B */
    blocks[s] = bench_check(a->malloc(sizes[s]), sizes[s]);
    bench_stamp(blocks[s], sizes[s], r);
  }
  for (size_t s = 0; s < MC_SLOTS; s++) {
    if (!blocks[s]) continue;
    sum += bench_mix(bench_read(blocks[s], sizes[s]));
    copies[s % copy_count]->free(blocks[s]);
  }
  free(blocks);
  free(sizes);
  t->sum += sum;
  return NULL;
}

static int churn(unsigned k, unsigned threads, uint64_t n, const char *dir) {
  load_copies(k, dir, false);
  mc_thread_t *t = calloc(threads, sizeof *t);
  if (!t) bench_fail("out of memory");
  for (unsigned i = 0; i < threads; i++)
    t[i] = (mc_thread_t){n, 42 + i, 0};
  bench_region_begin();
  bench_run_threads(threads, mc_thread, t, sizeof *t);
  bench_region_end();
  uint64_t sum = 0;
  for (unsigned i = 0; i < threads; i++)
    sum += t[i].sum;
  free(t);
  printf("kernel=multicopy-%u arm=nsalloc ops=%" PRIu64 " checksum=%016" PRIx64
         " seconds=%.6f cpu_seconds=%.6f rss_final_kib=%zu\n",
         k, n * threads, sum, bench_region_seconds(), bench_region_cpu_seconds(), bench_rss_kib());
  return 0;
}

/* Anonymous resident KiB (smaps_rollup): the part of RSS that is this
 * process's own, as opposed to file pages of the modules' code. */
static size_t anon_kib(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  size_t kib = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Anonymous: %zu kB", &kib) == 1) break;
  if (f) fclose(f);
  return kib;
}

static int rss(unsigned k, const char *dir, bool control) {
  /* Warm-up: a first dlopen() pages in the loader's own code and data, a
   * one-time cost of any module; load and unload the control module first so
   * the measurement starts past it. */
  char path[4096];
  snprintf(path, sizeof path, "%s/libbench-copy-control.so", dir);
  void *warm = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!warm) bench_fail("dlopen: %s", dlerror());
  dlclose(warm);
  size_t base = bench_rss_kib(), base_anon = anon_kib();
  load_copies(k, dir, control);
  size_t loaded = bench_rss_kib(), loaded_anon = anon_kib();
  for (unsigned i = 0; i < k; i++)
    copies[i]->free(bench_check(copies[i]->malloc(64), 64));
  size_t used = bench_rss_kib(), used_anon = anon_kib();
  printf("rss copies=%u loaded_kib=%zu used_kib=%zu loaded_anon_kib=%zu used_anon_kib=%zu\n", k,
         loaded - base, used - base, loaded_anon - base_anon, used_anon - base_anon);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "churn") == 0)
    return churn((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]), strtoull(argv[4], NULL, 10),
                 argv[5]);
  if ((argc == 4 || argc == 5) && strcmp(argv[1], "rss") == 0)
    return rss((unsigned)atoi(argv[2]), argv[3], argc == 5 && strcmp(argv[4], "control") == 0);
  fprintf(stderr, "usage: %s churn K THREADS N DIR | rss K DIR [control]\n", argv[0]);
  return 1;
}
