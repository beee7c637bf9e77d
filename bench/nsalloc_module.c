/*
 * nsalloc_module.c - a shared module holding one private nsalloc copy (the
 * shape every binding ships: its own prefix, hidden API, TLS from a shared
 * object) and exporting only its vtable, `bench_module_arm`. The vtable points
 * straight at the copy's functions, so a kernel call costs what a binding's
 * call costs. Built as the nsalloc arm and as the multi-copy modules.
 */
#include "bench.h"
#include "nsalloc.h"

#ifndef BENCH_MODULE_NAME
#define BENCH_MODULE_NAME "nsalloc"
#endif

__attribute__((visibility("default"))) const bench_alloc_t bench_module_arm =
    BENCH_PREFIXED_ARM(BENCH_MODULE_NAME, nsalloc_);
