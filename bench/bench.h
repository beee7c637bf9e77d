/*
 * bench.h - what every benchmark kernel sees: the allocator vtable of the arm
 * it is linked into, its parameters, the measured region, a deterministic
 * random generator and the helpers that make work parity checkable.
 *
 * Every kernel is written once against bench_alloc_t. The kernels are compiled
 * once (one object library) and linked into one executable per arm, so the
 * harness instructions are byte-identical across arms and the allocator is the
 * only variable.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The allocator under test. Every entry is the allocator's own function (no
 * wrapper) wherever the signature allows, so an arm pays no extra call. */
typedef struct bench_alloc_s {
  const char *name;
  void *(*malloc)(size_t size);
  void (*free)(void *p);
  void *(*realloc)(void *p, size_t size);
  void *(*calloc)(size_t count, size_t size);
  void *(*aligned)(size_t alignment, size_t size);
  size_t (*usable_size)(void *p);
} bench_alloc_t;

/* Casts a function with a compatible ABI but a differently-qualified
 * signature (e.g. `const void *` parameters) to a vtable slot type. */
#define BENCH_FN(type, fn) ((type)(void (*)(void))(fn))

/* The vtable of an allocator whose API is <prefix>malloc, <prefix>free, ...
 * <prefix>aligned_alloc, <prefix>usable_size: mimalloc's mi_, nsalloc's
 * nsalloc_ (which its header maps on to the copy's own prefix). */
#define BENCH_PREFIXED_ARM(name, prefix)                                                           \
  {                                                                                                \
    name, prefix##malloc, prefix##free, prefix##realloc, prefix##calloc, prefix##aligned_alloc,    \
        BENCH_FN(size_t (*)(void *), prefix##usable_size)                                          \
  }

/* Defined by the arm (bench/arm.c). */
extern const bench_alloc_t *const bench_arm;

typedef struct bench_params_s {
  uint64_t n;       /* measured operations (kernel-specific unit) */
  unsigned threads; /* worker threads, for the multi-threaded kernels */
  uint64_t seed;
} bench_params_t;

typedef struct bench_result_s {
  uint64_t ops;      /* operations inside the measured region */
  uint64_t checksum; /* allocator-independent digest of the work done */
} bench_result_t;

typedef bench_result_t (*bench_kernel_fn)(const bench_alloc_t *a, const bench_params_t *p);

typedef struct bench_kernel_s {
  const char *name;
  bench_kernel_fn run;
  uint64_t default_n;
  unsigned default_threads;
  const char *what; /* one line for --list */
} bench_kernel_t;

/* The measured region: callgrind instruments only between begin and end (the
 * runner starts it with --instr-atstart=no) and the wall clock and CPU time
 * reported are its duration. Each kernel calls begin and end exactly once, after warm-up and
 * before teardown. */
void bench_region_begin(void);
void bench_region_end(void);
bool bench_region_done(void);
double bench_region_seconds(void);
double bench_region_cpu_seconds(void); /* user + system, all threads */

/* Prints a message and exits with status 2 (an allocation failed, a block lost
 * its contents, an alignment was not honoured...). */
__attribute__((noreturn, format(printf, 1, 2))) void bench_fail(const char *format, ...);

/* Records a correctness defect of the allocator that the kernel can survive
 * (e.g. a misaligned aligned_alloc): the run goes on, the count is reported as
 * defects=N and the first few are printed to stderr. */
__attribute__((format(printf, 1, 2))) void bench_defect(const char *format, ...);
uint64_t bench_defect_count(void);

/* Resident set size of this process in KiB (from /proc/self/statm). */
size_t bench_rss_kib(void);

/* ---- deterministic randomness ------------------------------------------- */
/* splitmix64: a full-period generator with a one-word state. */
static inline uint64_t bench_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* Uniform in [lo, hi]. */
static inline size_t bench_range(uint64_t *state, size_t lo, size_t hi) {
  return lo + (size_t)(bench_rand(state) % (hi - lo + 1));
}

/* n rounded up to a multiple of the power of two a (aligned_alloc sizes). */
static inline size_t bench_round_up(size_t n, size_t a) {
  return (n + a - 1) & ~(a - 1);
}

/* ---- work parity ---------------------------------------------------------- */
/* Every block a kernel allocates gets a value written into its first word and
 * its last byte; reading them back when the block is freed (volatile, so the
 * compiler can elide neither the block nor the pair) both proves the
 * allocator kept the contents and folds the value into the checksum. Blocks
 * are at least 16 bytes. */
static inline void bench_stamp(void *p, size_t size, uint64_t value) {
  volatile uint64_t *word = p;
  volatile uint8_t *last = (uint8_t *)p + size - 1;
  *word = value;
  *last = (uint8_t)value;
}
static inline uint64_t bench_read(const void *p, size_t size) {
  const volatile uint64_t *word = p;
  const volatile uint8_t *last = (const uint8_t *)p + size - 1;
  uint64_t value = *word;
  if (*last != (uint8_t)value) bench_fail("block %p lost its contents", p);
  return value;
}
static inline void *bench_check(void *p, size_t size) {
  if (!p) bench_fail("allocation of %zu bytes failed", size);
  return p;
}
/* A block of `size` bytes with every page written (a program that uses its
 * memory: the page faults of fresh mappings count), stamped with `value`. */
static inline void *bench_fill_pages(const bench_alloc_t *a, size_t size, uint64_t value) {
  uint8_t *q = bench_check(a->malloc(size), size);
  for (size_t off = 0; off < size; off += 4096)
    ((volatile uint8_t *)q)[off] = (uint8_t)value;
  bench_stamp(q, size, value);
  return q;
}
/* Order-independent fold: kernels whose frees race still get one answer. */
static inline uint64_t bench_mix(uint64_t value) {
  value ^= value >> 33;
  value *= 0xff51afd7ed558ccdull;
  return value ^ (value >> 33);
}

#endif /* BENCH_H */
