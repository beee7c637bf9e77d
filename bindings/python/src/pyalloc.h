/*
 * pyalloc.h - one nsalloc copy as CPython's allocator: the hooks of the three
 * domains (PyMem_RawMalloc, PyMem_Malloc, PyObject_Malloc), installing them
 * over the current allocators, and what the wrapper counts.
 *
 * Shared by the extension module (install after Python is running) and the
 * nsalloc-python launcher (install between Py_PreInitialize and
 * initialisation). Both compile it with their own private copy.
 */
#ifndef NSALLOC_PYALLOC_H
#define NSALLOC_PYALLOC_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "nsalloc.h"

#define PYALLOC_DOMAIN_COUNT 3 /* PYMEM_DOMAIN_RAW, _MEM, _OBJ */
#define PYALLOC_DOMAIN_BIT(domain) (1u << (domain))
#define PYALLOC_ALL_DOMAINS        ((1u << PYALLOC_DOMAIN_COUNT) - 1)

/* How a domain's blocks are allocated, chosen at build time per CPython version. */
typedef enum pyalloc_strategy_e {
  PYALLOC_THREAD_HEAPS, /* each thread's own heap: thread-safe, any domain */
  PYALLOC_GIL_HEAP      /* one first-class heap reached through ctx, serialised by the GIL */
} pyalloc_strategy_t;

typedef struct pyalloc_domain_stats_s {
  bool installed;
  pyalloc_strategy_t strategy;
  uint64_t forwarded_frees;    /* foreign blocks handed to the previous allocator */
  uint64_t forwarded_reallocs;
} pyalloc_domain_stats_t;

/* Lower-case domain name ("raw", "mem", "obj"); NULL for an unknown domain. */
const char *pyalloc_domain_name(PyMemAllocatorDomain domain);

/* Install the copy into every domain of `domains` (a PYALLOC_DOMAIN_BIT mask),
 * wrapping each domain's current allocator: blocks the copy does not own go
 * to that allocator with its saved ctx. With route_foreign false every
 * pointer goes to the copy, whose foreign policy then catches the blocks it
 * does not own (a diagnostic: the negative control of the tests). Call with
 * the GIL held, or before initialisation. Returns NULL, or why nothing was
 * installed. */
const char *pyalloc_install(unsigned domains, bool route_foreign);

/* The PYALLOC_DOMAIN_BIT mask of installed domains. */
unsigned pyalloc_installed(void);

void pyalloc_domain_stats(PyMemAllocatorDomain domain, pyalloc_domain_stats_t *out);

/* Statistics of the GIL heap (call with the GIL held). False when this build
 * or installation has none. */
bool pyalloc_gil_heap_stats(nsalloc_stats_t *out);

#endif /* NSALLOC_PYALLOC_H */
