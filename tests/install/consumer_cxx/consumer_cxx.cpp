// consumer_cxx.cpp - loads the C++ plugin and runs its check.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    std::fprintf(stderr, "consumer_cxx: %s\n", dlerror());
    return 1;
  }
  auto check = reinterpret_cast<int (*)(void)>(dlsym(plugin, "cxxplug_check"));
  int status = check ? check() : 1;
  std::printf("cxxplug_: %s\n", status == 0 ? "ok" : "FAILED");
  dlclose(plugin);
  return status;
}
