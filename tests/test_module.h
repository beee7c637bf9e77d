/*
 * test_module.h - for the tests that load modules with dlopen().
 */
#ifndef NSALLOC_TEST_MODULE_H
#define NSALLOC_TEST_MODULE_H

#include <dlfcn.h>
#include <stdbool.h>

/* Whether dlclose() really unloads a module (glibc), or keeps every module
 * for good (musl): loaded and closed once, is it still there? */
static inline bool test_loader_unloads(const char *path) {
  void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!module) return false;
  dlclose(module);
  module = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (module) dlclose(module);
  return module == NULL;
}

#endif
