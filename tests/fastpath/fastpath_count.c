/*
 * fastpath_count.c - loads fastpath_module.so and runs its loop; run under
 * `valgrind --tool=callgrind` by fastpath_count.sh, which divides the
 * instructions of nsalloc's malloc and free by their call counts.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODULE\n", argv[0]);
    return 2;
  }
  void *module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  void (*run)(unsigned, unsigned, size_t) =
      (void (*)(unsigned, unsigned, size_t))dlsym(module, "fastpath_run");
  run(1000, 50, 32); /* warm up: pages exist before the measured rounds */
  run(20000, 50, 32);
  return 0;
}
