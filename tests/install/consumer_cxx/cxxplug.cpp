// cxxplug.cpp - a C++ plugin with a private copy: its one entry point
// duplicates a string through the copy and reports the copy's prefix.
#include "nsalloc.h"

#include <cstring>

extern "C" __attribute__((visibility("default"))) int cxxplug_check(void) {
  char *s = nsalloc_strdup("plugin");
  bool ok = s && std::strcmp(s, "plugin") == 0 && nsalloc_owns(s) &&
            std::strcmp(nsalloc_prefix(), "cxxplug_") == 0;
  nsalloc_free(s);
  return ok ? 0 : 1;
}
