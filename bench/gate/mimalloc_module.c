/*
 * mimalloc_module.c - the yardstick of the gate's module shape: mimalloc
 * bundled the way an extension bundles it (libmimalloc-bundled.a linked into
 * a shared module with -Wl,--exclude-libs,ALL, nothing exported but this
 * vtable), the counterpart of bench/nsalloc_module.c. Linked to the bench
 * harness (bench/arm.c with ARM_MODULE), so both arms run byte-identical
 * kernels and differ only in the module.
 */
#include "bench.h"

#include <mimalloc.h>

__attribute__((visibility("default")))
const bench_alloc_t bench_module_arm = {"mimalloc-bundled",
                                        mi_malloc,
                                        mi_free,
                                        mi_realloc,
                                        mi_calloc,
                                        mi_aligned_alloc,
                                        BENCH_FN(size_t (*)(void *), mi_usable_size)};
