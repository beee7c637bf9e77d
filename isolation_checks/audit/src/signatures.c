/*
 * signatures.c - the signature database.
 *
 * Symbol rules are name prefixes: an exact API name is its own prefix
 * ("rpfree"), and a prefix ending in '_' covers a whole namespace ("je_").
 * A rule ending in '$' matches that exact name only: programs name their own
 * helpers after an API they call (redis exports mallctl_int and
 * mallctl_string and calls jemalloc's mallctl in libjemalloc.so.2).
 * Names several allocators share are left out: gperftools also exports
 * jemalloc's nallocx, so nallocx identifies neither.
 * Prefixes are chosen to be specific to one allocator: "tc_" alone would also
 * match traffic-control code, so only tcmalloc's own tc_* entry points are
 * listed. C++ namespaces appear as their mangled form (_ZN8tcmalloc is
 * `tcmalloc::`).
 *
 * Names and byte strings were checked against Debian 12's binaries where
 * Debian ships the allocator (docs/audit.md lists each family with the
 * versions checked, and which are recognised by symbols only).
 */
#include "signatures.h"

#include <string.h>

#define MAX_RULES   24
#define MAX_STRINGS 4

typedef struct family_signature {
  const char *name;
  const char *symbol_prefixes[MAX_RULES]; /* NULL-terminated */
  const char *strings[MAX_STRINGS];       /* NULL-terminated */
} family_signature_t;

static const family_signature_t signatures[FAMILY_COUNT] = {
    [FAMILY_NSALLOC] = {.name = "nsalloc"},
    [FAMILY_MIMALLOC] = {.name = "mimalloc",
                         .symbol_prefixes = {"mi_malloc", "mi_zalloc", "mi_calloc", "mi_realloc",
                                             "mi_free", "mi_heap_", "mi_option_", "mi_stats_",
                                             "mi_thread_", "mi_process_", "_mi_"},
                         .strings = {"mimalloc: error: ", "mimalloc: warning: "}},
    [FAMILY_JEMALLOC] = {.name = "jemalloc",
                         .symbol_prefixes = {"je_", "_rjem_", "mallocx", "rallocx", "xallocx",
                                             "sallocx", "dallocx", "sdallocx", "mallctl$",
                                             "mallctlnametomib$", "mallctlbymib$",
                                             "malloc_stats_print"},
                         .strings = {"<jemalloc>: "}},
    [FAMILY_TCMALLOC] = {.name = "tcmalloc",
                         /* tcmalloc:: also names gperftools utilities that libprofiler
                          * carries, so only tcmalloc's allocator classes count. */
                         .symbol_prefixes = {"_ZN8tcmalloc11ThreadCache",
                                             "_ZN8tcmalloc6Static",
                                             "_ZN8tcmalloc8PageHeap",
                                             "_ZN8tcmalloc15CentralFreeList",
                                             "_ZN8tcmalloc17tcmalloc_internal",
                                             "TCMalloc_",
                                             "_ZN15MallocExtension",
                                             "MallocExtension_",
                                             "tcmalloc_",
                                             "tc_malloc",
                                             "tc_free",
                                             "tc_calloc",
                                             "tc_realloc",
                                             "tc_cfree",
                                             "tc_memalign",
                                             "tc_posix_memalign",
                                             "tc_valloc",
                                             "tc_pvalloc",
                                             "tc_new",
                                             "tc_delete",
                                             "tc_mallopt",
                                             "tc_mallinfo",
                                             "tc_version",
                                             "tc_set_new_mode"},
                         .strings = {"TCMALLOC_RELEASE_RATE", "tcmalloc: "}},
    [FAMILY_RPMALLOC] = {.name = "rpmalloc",
                         .symbol_prefixes = {"rpmalloc", "rpfree", "rpcalloc", "rprealloc",
                                             "rpaligned_", "rpmemalign", "rpposix_memalign",
                                             "rpmalloc_"}},
    [FAMILY_SNMALLOC] = {.name = "snmalloc",
                         .symbol_prefixes = {"_ZN8snmalloc", "sn_rust_", "sn_malloc", "sn_free",
                                             "sn_calloc", "sn_realloc"}},
    [FAMILY_SCUDO] = {.name = "scudo",
                      .symbol_prefixes = {"_ZN5scudo", "__scudo_", "scudo_"},
                      .strings = {"Scudo ERROR: ", "SCUDO_OPTIONS"}},
    [FAMILY_HOARD] = {.name = "hoard",
                      .symbol_prefixes = {"_ZN5Hoard", "xxmalloc", "xxfree", "xxrealloc"},
                      .strings = {"www.hoard.org"}},
    [FAMILY_DLMALLOC] = {.name = "dlmalloc",
                         .symbol_prefixes = {"dlmalloc", "dlfree", "dlcalloc", "dlrealloc",
                                             "dlmemalign", "dlposix_memalign", "dlvalloc",
                                             "dlindependent_", "mspace_", "create_mspace",
                                             "destroy_mspace", "ptmalloc_init"},
                         /* A ptmalloc integrity check message. The malloc_stats() format
                          * ("in use bytes     = %10lu") is not one: any allocator offering
                          * malloc_stats() may print the same lines. */
                         .strings = {"malloc(): corrupted top size"}},
    [FAMILY_BOEHM_GC] = {.name = "boehm-gc",
                         .symbol_prefixes = {"GC_malloc", "GC_init", "GC_gcollect", "GC_free",
                                             "GC_realloc", "GC_register_finalizer", "GC_base",
                                             "GC_debug_malloc", "GC_get_heap_size"},
                         /* An environment variable it reads and its warning prefix. */
                         .strings = {"GC_INITIAL_HEAP_SIZE", "GC Warning: "}},
    /* Chromium's allocator: everything is in namespace partition_alloc. */
    [FAMILY_PARTITIONALLOC] = {.name = "partitionalloc",
                               .symbol_prefixes = {"_ZN15partition_alloc"}},
    /* musl's malloc since 1.2.1, linked statically (in musl's own libc.so it
     * is the system runtime). It prints nothing, so stripped it is not seen. */
    [FAMILY_MUSL_MALLOCNG] = {.name = "musl-mallocng",
                              .symbol_prefixes = {"__malloc_context", "__malloc_alloc_meta",
                                                  "__malloc_size_classes", "__libc_malloc_impl",
                                                  "__malloc_allzerop"}},
    [FAMILY_INTERPOSER] = {.name = "interposer"},
};

const char *family_name(family_t family) {
  return signatures[family].name;
}

family_t family_of_symbol(const char *name) {
  for (int f = 0; f < FAMILY_COUNT; f++) {
    for (const char *const *rule = signatures[f].symbol_prefixes; *rule; rule++) {
      /* First-byte check first: this runs once per symbol per rule. */
      if ((*rule)[0] != name[0]) continue;
      size_t length = strlen(*rule);
      bool exact = (*rule)[length - 1] == '$';
      if (exact ? strlen(name) == length - 1 && strncmp(name, *rule, length - 1) == 0
                : strncmp(name, *rule, length) == 0)
        return (family_t)f;
    }
  }
  return FAMILY_COUNT;
}

size_t family_string_count(family_t family) {
  size_t n = 0;
  while (n < MAX_STRINGS && signatures[family].strings[n])
    n++;
  return n;
}

const char *family_string(family_t family, size_t index) {
  return signatures[family].strings[index];
}

bool standard_allocator_symbol(const char *name) {
  static const char *const exact[] = {"malloc",         "free",          "calloc",   "realloc",
                                      "posix_memalign", "aligned_alloc", "memalign", "valloc"};
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
    if (strcmp(name, exact[i]) == 0) return true;
  }
  /* operator new / new[] / delete / delete[] in every overload, for both
   * size_t manglings (m on LP64, j on ILP32): _Znwm, _ZnamRKSt9nothrow_t,
   * _ZdlPvm, _ZdaPvSt11align_val_t, ... */
  return strncmp(name, "_Znw", 4) == 0 || strncmp(name, "_Zna", 4) == 0 ||
         strncmp(name, "_ZdlPv", 6) == 0 || strncmp(name, "_ZdaPv", 6) == 0;
}
