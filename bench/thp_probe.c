/*
 * thp_probe.c - what advising transparent huge pages for one program's big
 * blocks costs it in resident memory, whatever allocator gives the advice
 * (docs/performance.md, "Huge blocks: which to advise").
 *
 * An LD_PRELOAD interposer: malloc and calloc of at least THP_PROBE_MIN bytes
 * (default 4 MiB) get a mapping of their own, 2 MiB aligned, advised
 * MADV_HUGEPAGE when THP_PROBE names the call ("malloc", "calloc", "both";
 * anything else: none) and the size is at most THP_PROBE_MAX (default: no
 * limit); every other call goes to the next allocator. Run the program under
 * /usr/bin/time with each setting and compare the peak RSS:
 *
 *   THP_PROBE=malloc LD_PRELOAD=build/bench/libthp-probe.so \
 *     /usr/bin/time -f '%M KiB %R faults' xz -c -6 -T1 input.txt >/dev/null
 *
 * Single-threaded programs only (the slot table has no lock); up to
 * PROBE_SLOTS probe blocks live at once (more go to the next allocator);
 * realloc of one is not supported (the probe aborts), nor is any memalign.
 * Enough for programs that hold a few big buffers, which is what it is for.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE   ((size_t)2 << 20)
#define PROBE_SLOTS 64

static struct {
  void *block, *base;
  size_t length;
} slots[PROBE_SLOTS];

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);

static size_t env_size(const char *name, size_t fallback) {
  const char *value = getenv(name);
  return value && *value ? (size_t)strtoull(value, NULL, 0) : fallback;
}

static int probe_slot(const void *block) {
  for (int i = 0; i < PROBE_SLOTS; i++)
    if (block && slots[i].block == block) return i;
  return -1;
}

/* A block of `size` bytes on its own 2 MiB-aligned mapping, or NULL when no
 * slot is free or the mapping fails (then the next allocator serves it). */
static void *probe_block(size_t size, int advise) {
  int slot = -1;
  for (int i = 0; i < PROBE_SLOTS && slot < 0; i++)
    if (!slots[i].block) slot = i;
  if (slot < 0) return NULL;
  size_t length = size + HUGE_PAGE;
  char *base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return NULL;
  char *block = (char *)(((uintptr_t)base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
  if (advise && madvise(block, size, MADV_HUGEPAGE) != 0) perror("thp_probe: madvise");
  slots[slot].block = block;
  slots[slot].base = base;
  slots[slot].length = length;
  return block;
}

/* Does THP_PROBE ask for `call`'s big blocks to be advised? */
static int probe_advises(const char *call, size_t size) {
  const char *which = getenv("THP_PROBE");
  if (!which || size > env_size("THP_PROBE_MAX", SIZE_MAX)) return 0;
  return !strcmp(which, call) || !strcmp(which, "both");
}

static int probe_wants(size_t size) {
  return size >= env_size("THP_PROBE_MIN", (size_t)4 << 20);
}

__attribute__((constructor)) static void probe_init(void) {
  next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}

/* dlsym itself may call calloc before probe_init has run: a small static
 * buffer answers that one call (glibc's dlerror buffer). */
static char early[256];

void *malloc(size_t size) {
  void *block = probe_wants(size) ? probe_block(size, probe_advises("malloc", size)) : NULL;
  return block ? block : next_malloc(size);
}

void *calloc(size_t count, size_t size) {
  if (!next_calloc) return count * size <= sizeof early ? early : NULL;
  size_t total;
  if (__builtin_mul_overflow(count, size, &total)) return NULL;
  void *block = probe_wants(total) ? probe_block(total, probe_advises("calloc", total)) : NULL;
  return block ? block : next_calloc(count, size); /* fresh mappings read as zero */
}

void *realloc(void *block, size_t size) {
  if (probe_slot(block) >= 0) {
    fputs("thp_probe: realloc of a probe block is not supported\n", stderr);
    abort();
  }
  return next_realloc(block, size);
}

void free(void *block) {
  if (block == early) return;
  int slot = probe_slot(block);
  if (slot < 0) {
    next_free(block);
    return;
  }
  munmap(slots[slot].base, slots[slot].length);
  slots[slot].block = NULL;
}
