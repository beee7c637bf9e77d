/*
 * control_module.c - the multi-copy RSS control: a module shaped like a copy
 * module (same exported vtable) that holds no allocator and forwards to the C
 * library. Loading it measures what dlopen() of any small module costs, which
 * is not a cost of nsalloc.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <malloc.h>
#include <stdlib.h>

__attribute__((visibility("default"))) const bench_alloc_t bench_module_arm = {
    "control", malloc, free, realloc, calloc, aligned_alloc, malloc_usable_size};
