/*
 * arm.c - binds the kernels' vtable to one allocator. Compiled once per arm
 * executable with exactly one of:
 *   ARM_STDLIB=name  the C names (malloc, free, ...): glibc, or jemalloc and
 *                    tcmalloc when their library is linked ahead of libc
 *   ARM_MIMALLOC     mimalloc's own API (mi_malloc, ...)
 *   ARM_TCMALLOC     tcmalloc's own API (tc_malloc, ...)
 *   ARM_MODULE       the vtable a private-copy module exports (nsalloc_module.c)
 *   ARM_DLOPEN       the same vtable, from the module BENCH_MODULE names,
 *                    dlopen()ed at start-up: the shape of a Python extension,
 *                    a Lua C module or a NIF (nsalloc_module.c,
 *                    mimalloc_module.c)
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
static const bench_alloc_t arm = BENCH_PREFIXED_ARM("mimalloc", mi_);
const bench_alloc_t *const bench_arm = &arm;

#elif defined(ARM_TCMALLOC)
#include <gperftools/tcmalloc.h>
static const bench_alloc_t arm = {"tcmalloc", tc_malloc,   tc_free,       tc_realloc,
                                  tc_calloc,  tc_memalign, tc_malloc_size};
const bench_alloc_t *const bench_arm = &arm;

#elif defined(ARM_MODULE)
extern const bench_alloc_t bench_module_arm;
const bench_alloc_t *const bench_arm = &bench_module_arm;

#elif defined(ARM_DLOPEN)
#include <dlfcn.h>
/* A copy of the module's vtable: the same function pointers, so a kernel's
 * call costs what it costs through the module's own table. Filled before
 * main() runs; every kernel reads it only after. */
static bench_alloc_t loaded;
const bench_alloc_t *const bench_arm = &loaded;

__attribute__((constructor)) static void load_module(void) {
  const char *path = getenv("BENCH_MODULE");
  if (!path || !*path) bench_fail("BENCH_MODULE (the module to dlopen) is not set");
  void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!module) bench_fail("dlopen %s: %s", path, dlerror());
  const bench_alloc_t *arm = dlsym(module, "bench_module_arm");
  if (!arm) bench_fail("%s exports no bench_module_arm", path);
  loaded = *arm;
}

#else
#error "define one of ARM_STDLIB, ARM_MIMALLOC, ARM_TCMALLOC, ARM_MODULE, ARM_DLOPEN"
#endif
