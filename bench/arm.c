/*
 * arm.c - binds the kernels' vtable to one allocator. Compiled once per arm
 * executable with exactly one of:
 *   ARM_STDLIB=name  the C names (malloc, free, ...): glibc, or jemalloc and
 *                    tcmalloc when their library is linked ahead of libc
 *   ARM_MIMALLOC     mimalloc's own API (mi_malloc, ...)
 *   ARM_TCMALLOC     tcmalloc's own API (tc_malloc, ...)
 *   ARM_MODULE       the vtable a private-copy module exports (nsalloc_module.c)
 * The harness's --info reports which object malloc really resolved to.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdlib.h>

#if defined(ARM_STDLIB)
#include <malloc.h>
#define STR_(x) #x
#define STR(x)  STR_(x)
static const bench_alloc_t arm = {STR(ARM_STDLIB),   malloc, free, realloc, calloc, aligned_alloc,
                                  malloc_usable_size};
const bench_alloc_t *const bench_arm = &arm;

#elif defined(ARM_MIMALLOC)
#include <mimalloc.h>
static const bench_alloc_t arm = {"mimalloc",
                                  mi_malloc,
                                  mi_free,
                                  mi_realloc,
                                  mi_calloc,
                                  mi_aligned_alloc,
                                  BENCH_FN(size_t (*)(void *), mi_usable_size)};
const bench_alloc_t *const bench_arm = &arm;

#elif defined(ARM_TCMALLOC)
#include <gperftools/tcmalloc.h>
static const bench_alloc_t arm = {"tcmalloc", tc_malloc,   tc_free,       tc_realloc,
                                  tc_calloc,  tc_memalign, tc_malloc_size};
const bench_alloc_t *const bench_arm = &arm;

#elif defined(ARM_MODULE)
extern const bench_alloc_t bench_module_arm;
const bench_alloc_t *const bench_arm = &bench_module_arm;

#else
#error "define one of ARM_STDLIB, ARM_MIMALLOC, ARM_TCMALLOC, ARM_MODULE"
#endif
