/*
 * idle.c - the idle-RSS kernels of issue 22: what a program's RSS is once it
 * stops calling the allocator.
 *
 * idle-rss       allocates n MiB of small blocks (16-1024 B), frees them all,
 *                then sleeps 1 s without calling the allocator
 * idle-rss-live  the same, but the first 32 MiB allocated stay live
 *
 * Prints one line the runner reads,
 *   sample start_kib=S freed_kib=F idle_kib=I live_kib=L
 * with the RSS (/proc/self/statm) before the first allocation, right after
 * the last free and after the sleep, and the bytes still live. The target is
 * idle - start <= live + 10% of live + 1 MiB. One op = one block.
 */
#define _GNU_SOURCE
#include "kernels.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define IDLE_MIN_SIZE 16
#define IDLE_MAX_SIZE 1024
#define IDLE_LIVE_MIB 32

static size_t idle_size(uint64_t *rng) {
  return bench_range(rng, IDLE_MIN_SIZE, IDLE_MAX_SIZE);
}

/* Blocks until `total` bytes are reached: the sizes are a fixed sequence, so a
 * dry run of the generator sizes the table exactly. */
static size_t idle_count(uint64_t seed, size_t total) {
  size_t count = 0;
  for (size_t bytes = 0; bytes < total; count++)
    bytes += idle_size(&seed);
  return count;
}

/* The block table comes from mmap, written before the start sample: the
 * preloaded arms' malloc is the allocator under test, and the table must be
 * neither its memory nor growth the samples attribute to it. */
static void **idle_table(size_t count) {
  void **table =
      mmap(NULL, count * sizeof *table, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (table == MAP_FAILED) bench_fail("mmap of the block table failed");
  memset(table, 0, count * sizeof *table);
  return table;
}

/* Each block holds its index in word 0 and its size in word 1 (blocks are
 * >= 16 B); reading both back when it is freed is its parity check. */
static uint64_t idle_release(const bench_alloc_t *a, uint64_t *block, size_t index) {
  if (block[0] != index) bench_fail("block %p lost its contents", (void *)block);
  uint64_t value = bench_mix(block[0] ^ (block[1] << 32));
  a->free(block);
  return value;
}

static bench_result_t idle_run(const bench_alloc_t *a, const bench_params_t *p, size_t live_mib) {
  size_t total = (size_t)p->n << 20, keep = live_mib << 20;
  if (keep > total)
    bench_fail("idle: n=%llu MiB is less than the live set", (unsigned long long)p->n);
  size_t count = idle_count(p->seed, total);
  uint64_t **blocks = (uint64_t **)idle_table(count);
  uint64_t rng = p->seed, sum = 0;
  size_t allocated = 0, live = 0, kept = 0;
  size_t start = bench_rss_kib();
  bench_region_begin();
  for (size_t i = 0; i < count; i++) {
    size_t size = idle_size(&rng);
    blocks[i] = bench_check(a->malloc(size), size);
    blocks[i][0] = i;
    blocks[i][1] = size;
    allocated += size;
    if (allocated <= keep) {
      kept = i + 1;
      live = allocated;
    }
  }
  for (size_t i = kept; i < count; i++)
    sum += idle_release(a, blocks[i], i);
  size_t freed = bench_rss_kib();
  nanosleep(&(struct timespec){1, 0}, NULL);
  size_t idle = bench_rss_kib();
  bench_region_end();
  printf("sample start_kib=%zu freed_kib=%zu idle_kib=%zu live_kib=%zu\n", start, freed, idle,
         live / 1024);
  for (size_t i = 0; i < kept; i++)
    sum += idle_release(a, blocks[i], i);
  munmap(blocks, count * sizeof *blocks);
  return (bench_result_t){count, sum};
}

BENCH_KERNEL(idle_rss) {
  return idle_run(a, p, 0);
}

BENCH_KERNEL(idle_rss_live) {
  return idle_run(a, p, IDLE_LIVE_MIB);
}
