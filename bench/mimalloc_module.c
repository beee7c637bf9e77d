/*
 * mimalloc_module.c - the peer of nsalloc_module.c: a module exporting only
 * the vtable of mimalloc's own API, so the module arm runs mimalloc in the
 * shape nsalloc ships in. Linked two ways (bench/CMakeLists.txt): with the
 * prebuilt libmimalloc-bundled.a inside the module (hidden, every symbol
 * local: the way a binding would bundle it) and against libmimalloc.so.
 */
#include "bench.h"

#include <mimalloc.h>

__attribute__((visibility("default"))) const bench_alloc_t bench_module_arm =
    BENCH_PREFIXED_ARM(BENCH_MODULE_NAME, mi_);
