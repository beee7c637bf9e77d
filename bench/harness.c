/*
 * harness.c - main() of every arm executable:
 *
 *   bench-<arm> KERNEL [n=N] [threads=T] [seed=S]   run one kernel
 *   bench-<arm> --list                              kernel names and defaults
 *   bench-<arm> --info                              arm name and where malloc lives
 *
 * A run prints one line of key=value pairs the runner parses:
 *   kernel=... arm=... ops=... checksum=... seconds=... cpu_seconds=...
 *   rss_final_kib=... defects=...
 * BENCH_PERTURB=1 flips the checksum's low bit: the negative control that
 * proves the runner's parity check fails when an arm does different work.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "kernels.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shared object that defines the arm's malloc: the runner checks it names
 * the allocator the arm claims to be (a preload or link order gone wrong would
 * otherwise silently benchmark glibc). */
static int print_info(void) {
  Dl_info info;
  const char *object = "?";
  if (dladdr((void *)bench_arm->malloc, &info) && info.dli_fname) object = info.dli_fname;
  printf("arm=%s malloc_object=%s\n", bench_arm->name, object);
  return 0;
}

static int list_kernels(void) {
  for (size_t i = 0; i < bench_kernel_count; i++) {
    const bench_kernel_t *k = &bench_kernels[i];
    printf("%-14s n=%-9" PRIu64 " threads=%u  %s\n", k->name, k->default_n, k->default_threads,
           k->what);
  }
  return 0;
}

static uint64_t parse_u64(const char *text) {
  char *end;
  unsigned long long v = strtoull(text, &end, 10);
  if (*end != '\0') bench_fail("bad number '%s'", text);
  return v;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s KERNEL [n=N] [threads=T] [seed=S] | --list | --info\n", argv[0]);
    return 1;
  }
  if (strcmp(argv[1], "--info") == 0) return print_info();
  if (strcmp(argv[1], "--list") == 0) return list_kernels();
  const bench_kernel_t *kernel = bench_kernel_find(argv[1]);
  if (!kernel) bench_fail("unknown kernel '%s' (see --list)", argv[1]);
  bench_params_t params = {kernel->default_n, kernel->default_threads, 42};
  for (int i = 2; i < argc; i++) {
    if (strncmp(argv[i], "n=", 2) == 0)
      params.n = parse_u64(argv[i] + 2);
    else if (strncmp(argv[i], "threads=", 8) == 0)
      params.threads = (unsigned)parse_u64(argv[i] + 8);
    else if (strncmp(argv[i], "seed=", 5) == 0)
      params.seed = parse_u64(argv[i] + 5);
    else
      bench_fail("bad argument '%s'", argv[i]);
  }
  if (params.threads == 0) params.threads = 1;
  bench_result_t result = kernel->run(bench_arm, &params);
  if (!bench_region_done()) bench_fail("kernel %s did not close its measured region", kernel->name);
  const char *perturb = getenv("BENCH_PERTURB");
  if (perturb && strcmp(perturb, "1") == 0) result.checksum ^= 1;
  printf("kernel=%s arm=%s ops=%" PRIu64 " checksum=%016" PRIx64 " seconds=%.6f cpu_seconds=%.6f "
         "rss_final_kib=%zu defects=%" PRIu64 "\n",
         kernel->name, bench_arm->name, result.ops, result.checksum, bench_region_seconds(),
         bench_region_cpu_seconds(), bench_rss_kib(), bench_defect_count());
  return 0;
}
