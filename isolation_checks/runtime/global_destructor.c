/*
 * global_destructor.c - two copies built with exports and one prefix (the
 * broken build the shape checks flag), both loaded RTLD_GLOBAL: closing the
 * second must not touch the first. Its destructor once called the public
 * nsalloc_shutdown(), which symbol interposition bound to the FIRST copy: its
 * thread-exit key was deleted and its segment cache unmapped.
 *
 * usage: iso-global-destructor FIRST.so SECOND.so
 * The negative control calls the first copy's exported shutdown directly and
 * checks the same measurement sees it.
 */
#include "iso_module.h"

#include "test_util.h"

#include <dlfcn.h>

static const char *first_path, *second_path;

static const iso_module_api *open_copy(const char *path, void **handle) {
  *handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  CHECK(*handle != NULL);
  if (!*handle) return NULL;
  return ((iso_module_entry_fn)dlsym(*handle, ISO_MODULE_ENTRY))();
}

/* The first copy's unmap count after it cached a freed huge segment, and
 * after `event`: a shutdown of that copy unmaps the cached segment. */
static void unmaps_around(void (*event)(void *first, void **second), uint64_t *before,
                          uint64_t *after) {
  void *first, *second;
  const iso_module_api *api = open_copy(first_path, &first);
  if (!api || !open_copy(second_path, &second)) return;
  api->free(api->malloc((size_t)3 << 20)); /* a huge segment, now cached */
  nsalloc_stats_t stats;
  api->stats(&stats);
  *before = stats.os_unmaps;
  event(first, &second);
  api->stats(&stats);
  *after = stats.os_unmaps;
  if (second) dlclose(second);
  dlclose(first);
}

static void close_second(void *first, void **second) {
  (void)first;
  CHECK_EQ(dlclose(*second), 0);
  *second = NULL;
}

static void shut_first_down(void *first, void **second) {
  (void)second;
  void (*shutdown)(void) = (void (*)(void))dlsym(first, "iso_bad_shutdown");
  CHECK(shutdown != NULL);
  if (shutdown) shutdown();
}

static void test_closing_one_copy_leaves_the_other(void) {
  uint64_t before = 0, after = 0;
  unmaps_around(close_second, &before, &after);
  CHECK_EQ(after, before);
}

static void test_control_shutdown_is_seen(void) {
  uint64_t before = 0, after = 0;
  unmaps_around(shut_first_down, &before, &after);
  CHECK(after > before);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s FIRST.so SECOND.so [TEST...]\n", argv[0]);
    return 2;
  }
  first_path = argv[1];
  second_path = argv[2];
  static const test_case tests[] = {TEST(test_closing_one_copy_leaves_the_other),
                                    TEST(test_control_shutdown_is_seen)};
  return test_main(argc - 2, argv + 2, tests, TEST_COUNT(tests));
}
