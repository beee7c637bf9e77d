/*
 * fastpath_count.c - loads fastpath_module.so and drives its two loops; run
 * under `valgrind --tool=callgrind` by fastpath_count.sh, which divides the
 * instructions of the calls each loop makes by their number.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 50 /* live blocks per round: the pairs do not always hit one slot */

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
  void (*mallocs)(void **, unsigned, size_t) =
      (void (*)(void **, unsigned, size_t))dlsym(module, "fastpath_mallocs");
  void (*frees)(void **, unsigned) = (void (*)(void **, unsigned))dlsym(module, "fastpath_frees");
  if (!mallocs || !frees) {
    fprintf(stderr, "%s: missing fastpath_mallocs/fastpath_frees\n", argv[1]);
    return 1;
  }
  void *blocks[BATCH];
  /* The first round maps the segment and carves the page; the profile counts
   * it too, amortised over the 20,000 rounds as in any long-running program. */
  for (unsigned round = 0; round < 20000; round++) {
    mallocs(blocks, BATCH, 32);
    frees(blocks, BATCH);
  }
  return 0;
}
