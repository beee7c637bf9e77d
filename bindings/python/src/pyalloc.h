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

/* The binding's files share these functions and nothing else may see them:
 * hidden by the source itself, so that a module built without the project's
 * flags (a plain `cc -shared`) still exports only PyInit_<name>. */
#if defined(__GNUC__) || defined(__clang__)
#define PYALLOC_INTERNAL __attribute__((visibility("hidden")))
#else
#define PYALLOC_INTERNAL
#endif

#define PYALLOC_DOMAIN_COUNT       3 /* PYMEM_DOMAIN_RAW, _MEM, _OBJ */
#define PYALLOC_DOMAIN_BIT(domain) (1u << (domain))
#define PYALLOC_ALL_DOMAINS        ((1u << PYALLOC_DOMAIN_COUNT) - 1)

typedef struct pyalloc_domain_stats_s {
  bool installed;
  uint64_t forwarded_frees; /* foreign blocks handed to the previous allocator */
  uint64_t forwarded_reallocs;
} pyalloc_domain_stats_t;

/* Lower-case domain name ("raw", "mem", "obj"); NULL for an unknown domain. */
PYALLOC_INTERNAL const char *pyalloc_domain_name(PyMemAllocatorDomain domain);

/* Validate an install of `*domains` (a PYALLOC_DOMAIN_BIT mask) and drop
 * from it the domains this copy already serves (installing again is a
 * no-op). Touches no allocator. Returns NULL, or why the install would fail
 * (e.g. a domain the copy was installed in and another allocator replaced). */
PYALLOC_INTERNAL const char *pyalloc_plan(unsigned *domains, bool route_foreign);

/* Install the copy into every domain of `domains` not installed yet,
 * wrapping each domain's current allocator: blocks the copy does not own go
 * to that allocator with its saved ctx. With route_foreign false they meet
 * the copy's own foreign policy instead (abort unless NSALLOC_PY_OPTIONS
 * says otherwise: a diagnostic, the negative control of the tests); the
 * choice holds for the whole copy. Call with the GIL held, or before
 * initialisation. Returns NULL, or why nothing was installed (pyalloc_plan). */
PYALLOC_INTERNAL const char *pyalloc_install(unsigned domains, bool route_foreign);

/* Are CPython's debug hooks (PYTHONMALLOC=debug, -X dev...) on top of every
 * domain, or right beneath tracemalloc when it traces (tracemalloc started
 * after initialisation wraps them)? A late install must not wrap them: the
 * copy would serve new blocks itself, so the hooks would check none of them
 * (no overflow report), and those they still serve are block + 2 words of
 * pymalloc, whose large blocks come from RAW, i.e. from the copy: freed
 * through the copy, such a block is an interior pointer of its own. */
PYALLOC_INTERNAL bool pyalloc_debug_hooks_in_chain(bool tracemalloc_tracing);

/* The PYALLOC_DOMAIN_BIT mask of domains installed whose new blocks still
 * come from the copy (with the GIL held, after initialisation). */
PYALLOC_INTERNAL unsigned pyalloc_serving(void);

PYALLOC_INTERNAL void pyalloc_domain_stats(PyMemAllocatorDomain domain,
                                           pyalloc_domain_stats_t *out);

#endif /* NSALLOC_PYALLOC_H */
