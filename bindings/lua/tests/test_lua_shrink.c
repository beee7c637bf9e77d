/*
 * test_lua_shrink.c - a shrink never fails, even when the heap cannot get
 * another page: the copy draws its segments from a source the test can shut,
 * the state's heap is filled to the last slice, and then a large block is
 * shrunk to a size whose bin has no page.
 */
#include "nsalloc_lua.h"
#include "test_util.h"

#include <sys/mman.h>

static bool source_open = true;

static void *source_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (!source_open) return NULL;
  uint8_t *raw =
      mmap(NULL, size + alignment, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uint8_t *start = (uint8_t *)(((uintptr_t)raw + alignment - 1) & ~(uintptr_t)(alignment - 1));
  if (start > raw) munmap(raw, (size_t)(start - raw));
  size_t tail = (size_t)(raw + size + alignment - (start + size));
  if (tail) munmap(start + size, tail);
  return start;
}

static void source_free(void *ctx, void *p, size_t size) {
  (void)ctx;
  munmap(p, size);
}

static void test_shrink_succeeds_when_no_page_is_left(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  uint8_t *big = nsalloc_lua_alloc(ctx, NULL, LUA_TSTRING, 1 << 20); /* maps the heap's segment */
  CHECK(big != NULL);
  if (!big) return;
  test_fill(big, 64, 1 << 20);
  source_open = false;
  /* Fill the segment: large blocks, then smaller ones, down to the one-slice
   * pages of the 8 KiB bin. */
  static const size_t sizes[] = {1 << 20, 256 << 10, 96 << 10, 8 << 10};
  size_t filled = 0;
  for (size_t i = 0; i < TEST_COUNT(sizes); i++)
    while (nsalloc_lua_alloc(ctx, NULL, LUA_TSTRING, sizes[i]) != NULL)
      filled++;
  CHECK(filled > 10);
  CHECK(nsalloc_lua_alloc(ctx, NULL, LUA_TSTRING, 32) == NULL); /* no page for 32 bytes */
  /* So the shrink needs a new page and there is none: the old block is kept. */
  void *shrunk = nsalloc_lua_alloc(ctx, big, 1 << 20, 32);
  CHECK(shrunk == big);
  CHECK(test_verify(shrunk, 32, 1 << 20));
  CHECK(nsalloc_lua_alloc(ctx, shrunk, 32, 2 << 20) == NULL); /* growth does fail */
  nsalloc_lua_stats_t stats;
  nsalloc_lua_context_stats(ctx, &stats);
  size_t expected = stats.in_use_bytes;
  CHECK(nsalloc_lua_alloc(ctx, shrunk, 32, 0) == NULL);
  nsalloc_lua_context_stats(ctx, &stats);
  CHECK_EQ(stats.in_use_bytes, expected - 32);
  source_open = true;
  nsalloc_lua_context_delete(ctx);
}

int main(int argc, char **argv) {
  static const nsalloc_os_source_t source = {NULL, source_alloc, source_free};
  CHECK_EQ(nsalloc_set_os_source(&source), 0); /* before this copy's first allocation */
  static const test_case tests[] = {
      TEST(test_shrink_succeeds_when_no_page_is_left),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
