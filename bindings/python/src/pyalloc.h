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

#define PYALLOC_DOMAIN_COUNT       3 /* PYMEM_DOMAIN_RAW, _MEM, _OBJ */
#define PYALLOC_DOMAIN_BIT(domain) (1u << (domain))
#define PYALLOC_ALL_DOMAINS        ((1u << PYALLOC_DOMAIN_COUNT) - 1)

typedef struct pyalloc_domain_stats_s {
  bool installed;
  uint64_t forwarded_frees; /* foreign blocks handed to the previous allocator */
  uint64_t forwarded_reallocs;
} pyalloc_domain_stats_t;

/* Lower-case domain name ("raw", "mem", "obj"); NULL for an unknown domain. */
const char *pyalloc_domain_name(PyMemAllocatorDomain domain);

/* Install the copy into every domain of `domains` (a PYALLOC_DOMAIN_BIT mask),
 * wrapping each domain's current allocator: blocks the copy does not own go
 * to that allocator with its saved ctx. With route_foreign false they meet
 * the copy's own foreign policy instead (abort unless NSALLOC_PY_OPTIONS
 * says otherwise: a diagnostic, the negative control of the tests); the
 * choice holds for the whole copy. Call with the GIL held, or before
 * initialisation. Returns NULL, or why nothing was installed. */
const char *pyalloc_install(unsigned domains, bool route_foreign);

/* The PYALLOC_DOMAIN_BIT mask of installed domains. */
unsigned pyalloc_installed(void);

void pyalloc_domain_stats(PyMemAllocatorDomain domain, pyalloc_domain_stats_t *out);

#endif /* NSALLOC_PYALLOC_H */
