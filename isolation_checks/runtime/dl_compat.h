/*
 * dl_compat.h - the dlfcn subset the runtime checks use, on Windows too.
 *
 * On Windows a module is a DLL loaded with LoadLibrary and reached through
 * its own handle (GetProcAddress), which is what RTLD_LOCAL gives on Linux.
 * PE has no global symbol namespace, so RTLD_GLOBAL changes nothing there:
 * the --global runs load the DLLs the same way.
 */
#ifndef ISO_DL_COMPAT_H
#define ISO_DL_COMPAT_H

#if defined(_WIN32)
#include <stdint.h>
#include <stdio.h>
#include <windows.h>

#define RTLD_NOW    0
#define RTLD_LOCAL  0
#define RTLD_GLOBAL 1 /* recorded only: see above */

typedef struct Dl_info {
  void *dli_fbase; /* the module's base address (its HMODULE) */
} Dl_info;

static inline void *dlopen(const char *path, int mode) {
  (void)mode;
  return (void *)LoadLibraryA(path);
}
static inline void *dlsym(void *handle, const char *name) {
  return (void *)(uintptr_t)GetProcAddress((HMODULE)handle, name);
}
static inline int dlclose(void *handle) {
  return FreeLibrary((HMODULE)handle) ? 0 : -1;
}
static inline const char *dlerror(void) {
  static char text[32];
  snprintf(text, sizeof text, "error %lu", (unsigned long)GetLastError());
  return text;
}
static inline int dladdr(const void *address, Dl_info *info) {
  HMODULE module;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                              GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          (LPCSTR)address, &module))
    return 0;
  info->dli_fbase = (void *)module;
  return 1;
}
#else
#include <dlfcn.h>
#endif

#endif
