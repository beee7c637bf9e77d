/*
 * launcher.c - nsalloc-python: `python3` with nsalloc as the allocator of
 * every domain from the start.
 *
 * It does what Py_BytesMain does, with one step added: after
 * Py_PreInitialize (which applies PYTHONMALLOC, -X dev, -E, -I ...) and before
 * the interpreter exists, the copy is installed into RAW, MEM and OBJ, so no
 * object is ever allocated by pymalloc. The preinitialisation holds no block
 * of its allocators at that point (CPython allows any allocator to be set
 * there); the copy still wraps them, and the tests check nothing is
 * forwarded. When the preinitialisation set up debug hooks (PYTHONMALLOC=
 * debug, malloc_debug, pymalloc_debug, -X dev), they are put back on top of
 * the copy. The copy is also the built-in module `nsalloc`.
 *
 * NSALLOC_PYTHON_STATS=1 prints the copy's statistics at exit.
 */
#include "pyalloc.h"

#include <stdio.h>
#include <stdlib.h>

PyMODINIT_FUNC PyInit_nsalloc(void);

static void print_stats(void) {
  nsalloc_stats_t copy;
  nsalloc_stats(&copy);
  fprintf(stderr,
          "nsalloc-python: copy %s: %zu blocks / %zu bytes in use, pages %zu bytes (peak %zu), "
          "reserved %zu bytes, foreign pointers %llu (forwarded %llu), invalid pointers %llu\n",
          nsalloc_prefix(), copy.in_use_blocks, copy.in_use_bytes, copy.page_bytes,
          copy.peak_page_bytes, copy.reserved_bytes, (unsigned long long)copy.foreign_pointers,
          (unsigned long long)copy.forwarded, (unsigned long long)copy.invalid_pointers);
  for (int id = 0; id < PYALLOC_DOMAIN_COUNT; id++) {
    pyalloc_domain_stats_t s;
    pyalloc_domain_stats((PyMemAllocatorDomain)id, &s);
    fprintf(stderr, "nsalloc-python: %s: forwarded frees %llu, forwarded reallocs %llu\n",
            pyalloc_domain_name((PyMemAllocatorDomain)id), (unsigned long long)s.forwarded_frees,
            (unsigned long long)s.forwarded_reallocs);
  }
}

static void exit_on_error(PyStatus status, PyConfig *config) {
  if (!PyStatus_Exception(status)) return;
  if (config) PyConfig_Clear(config);
  Py_ExitStatusException(status); /* also the normal end of --version, --help */
}

int main(int argc, char **argv) {
  /* Before preinitialisation RAW is CPython's static default; only debug
   * hooks ever change it there (every PYTHONMALLOC allocator keeps RAW on
   * malloc). */
  PyMemAllocatorEx default_raw, preinit_raw;
  PyMem_GetAllocator(PYMEM_DOMAIN_RAW, &default_raw);

  PyPreConfig preconfig;
  PyPreConfig_InitPythonConfig(&preconfig);
  exit_on_error(Py_PreInitializeFromBytesArgs(&preconfig, argc, argv), NULL);

  PyMem_GetAllocator(PYMEM_DOMAIN_RAW, &preinit_raw);
  const char *error = pyalloc_install(PYALLOC_ALL_DOMAINS, true);
  if (error) {
    fprintf(stderr, "nsalloc-python: %s\n", error);
    return 1;
  }
  if (preinit_raw.malloc != default_raw.malloc) PyMem_SetupDebugHooks();
  if (PyImport_AppendInittab("nsalloc", PyInit_nsalloc) < 0) {
    fprintf(stderr, "nsalloc-python: cannot register the nsalloc module\n");
    return 1;
  }

  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  exit_on_error(PyConfig_SetBytesArgv(&config, argc, argv), &config);
  exit_on_error(Py_InitializeFromConfig(&config), &config);
  PyConfig_Clear(&config);

  int exit_code = Py_RunMain();
  const char *show_stats = getenv("NSALLOC_PYTHON_STATS");
  if (show_stats && *show_stats && strcmp(show_stats, "0") != 0) print_stats();
  return exit_code;
}
