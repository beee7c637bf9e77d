/*
 * test_lua_alloc.c - the lua_Alloc contract of nsalloc_lua_alloc, case by
 * case, and the limits at the allocator level.
 */
#include "nsalloc_lua.h"
#include "test_util.h"

#include <string.h>

static void *call(nsalloc_lua_context_t *ctx, void *ptr, size_t osize, size_t nsize) {
  return nsalloc_lua_alloc(ctx, ptr, osize, nsize);
}

static nsalloc_lua_stats_t stats_of(const nsalloc_lua_context_t *ctx) {
  nsalloc_lua_stats_t stats;
  nsalloc_lua_context_stats(ctx, &stats);
  return stats;
}

/* With ptr == NULL, osize is a type code: it must neither be counted as a
 * size nor be subtracted, and it sorts the object into its type. */
static void test_type_code_is_not_a_size(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  void *table = call(ctx, NULL, LUA_TTABLE, 56);
  void *string = call(ctx, NULL, LUA_TSTRING, 1000);
  void *proto = call(ctx, NULL, LUA_NUMTYPES + 1, 120); /* a prototype: "other" */
  CHECK(table && string && proto);
  nsalloc_lua_stats_t stats = stats_of(ctx);
  CHECK_EQ(stats.in_use_bytes, 56 + 1000 + 120);
  CHECK_EQ(stats.allocations, 3);
  CHECK_EQ(stats.by_type[NSALLOC_LUA_TYPE_TABLE].count, 1);
  CHECK_EQ(stats.by_type[NSALLOC_LUA_TYPE_TABLE].bytes, 56);
  CHECK_EQ(stats.by_type[NSALLOC_LUA_TYPE_STRING].bytes, 1000);
  CHECK_EQ(stats.by_type[NSALLOC_LUA_TYPE_OTHER].count, 1);
  CHECK(stats.heap_bytes >= stats.in_use_bytes);
  call(ctx, table, 56, 0);
  call(ctx, string, 1000, 0);
  call(ctx, proto, 120, 0);
  CHECK_EQ(stats_of(ctx).in_use_bytes, 0);
  CHECK_EQ(stats_of(ctx).heap_bytes, 0);
  nsalloc_lua_context_delete(ctx);
}

/* nsize == 0 frees and returns NULL; f(ud, NULL, x, 0) does nothing. */
static void test_zero_size_frees(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  CHECK(call(ctx, NULL, 0, 0) == NULL);
  CHECK(call(ctx, NULL, LUA_TTABLE, 0) == NULL);
  CHECK_EQ(stats_of(ctx).allocations, 0);
  CHECK_EQ(stats_of(ctx).in_use_bytes, 0);
  void *p = call(ctx, NULL, LUA_TSTRING, 64);
  CHECK(call(ctx, p, 64, 0) == NULL);
  CHECK_EQ(stats_of(ctx).in_use_bytes, 0);
  CHECK_EQ(stats_of(ctx).heap_bytes, 0);
  nsalloc_lua_context_delete(ctx);
}

/* Growing and shrinking through every size range keeps the common prefix. */
static void test_contents_preserved(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  static const size_t sizes[] = {1,    15,    16,    48,     96,      1000,    1025,
                                 8192, 65536, 70000, 300000, 3 << 20, 9 << 20, 100,
                                 5000, 17,    2,     200000, 64,      1};
  size_t size = sizes[0];
  uint8_t *p = call(ctx, NULL, LUA_TSTRING, size);
  test_fill(p, size, 7);
  for (size_t i = 1; i < TEST_COUNT(sizes); i++) {
    size_t next = sizes[i], kept = next < size ? next : size;
    uint8_t *q = call(ctx, p, size, next);
    CHECK(q != NULL);
    if (!q) break;
    CHECK(test_verify(q, kept, 7));
    test_fill(q, next, 7);
    p = q;
    size = next;
    CHECK_EQ(stats_of(ctx).in_use_bytes, size);
  }
  call(ctx, p, size, 0);
  CHECK_EQ(stats_of(ctx).in_use_bytes, 0);
  nsalloc_lua_context_delete(ctx);
}

static void test_alignment_16(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  void *blocks[300];
  for (size_t i = 0; i < TEST_COUNT(blocks); i++) {
    blocks[i] = call(ctx, NULL, LUA_TUSERDATA, i * 37 + 1);
    CHECK(((uintptr_t)blocks[i] & 15) == 0);
  }
  for (size_t i = 0; i < TEST_COUNT(blocks); i++) {
    void *q = call(ctx, blocks[i], i * 37 + 1, i * 53 + 9);
    CHECK(((uintptr_t)q & 15) == 0);
    call(ctx, q, i * 53 + 9, 0);
  }
  nsalloc_lua_context_delete(ctx);
}

/* Limits refuse growth only: a refused request leaves the block intact, and
 * shrinks and frees go through even above the limit. */
static void test_memory_limit_refuses_growth_only(void) {
  nsalloc_lua_options_t options = {.memory_limit = 4096};
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(&options);
  uint8_t *p = call(ctx, NULL, LUA_TSTRING, 3000);
  test_fill(p, 3000, 3);
  CHECK(call(ctx, p, 3000, 5000) == NULL);
  CHECK(test_verify(p, 3000, 3));
  CHECK(call(ctx, NULL, LUA_TTABLE, 2000) == NULL);
  CHECK(call(ctx, NULL, LUA_TTABLE, 1096) != NULL); /* exactly at the limit */
  CHECK_EQ(stats_of(ctx).limit_hits, 2);
  CHECK_EQ(nsalloc_lua_context_set_limit(ctx, 1000), 4096); /* now far over the limit */
  uint8_t *q = call(ctx, p, 3000, 100);
  CHECK(q != NULL && test_verify(q, 100, 3));
  CHECK(call(ctx, q, 100, 101) == NULL);
  CHECK_EQ(nsalloc_lua_context_set_limit(ctx, 0), 1000);
  CHECK(call(ctx, NULL, LUA_TSTRING, 1 << 20) != NULL); /* no limit any more */
  nsalloc_lua_stats_t stats = stats_of(ctx);
  CHECK_EQ(stats.limit_bytes, 0);
  CHECK_EQ(stats.limit_hits, 3);
  CHECK_EQ(stats.peak_bytes, 100 + 1096 + (1 << 20));
  nsalloc_lua_context_delete(ctx); /* with live blocks: the heap goes wholesale */
}

typedef struct limit_log_s {
  int calls;
  nsalloc_lua_limit_event_t last;
  size_t raise_to; /* 0: leave the limit alone */
} limit_log_t;

static void log_limit(nsalloc_lua_context_t *ctx, const nsalloc_lua_limit_event_t *event,
                      void *arg) {
  limit_log_t *log = arg;
  log->calls++;
  log->last = *event;
  if (log->raise_to) nsalloc_lua_context_set_limit(ctx, log->raise_to);
}

static void test_limit_callback(void) {
  limit_log_t log = {0};
  nsalloc_lua_options_t options = {
      .memory_limit = 1000, .on_limit = log_limit, .on_limit_arg = &log};
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(&options);
  void *p = call(ctx, NULL, LUA_TSTRING, 800);
  CHECK(call(ctx, p, 800, 1200) == NULL);
  CHECK_EQ(log.calls, 1);
  CHECK_EQ(log.last.kind, NSALLOC_LUA_LIMIT_MEMORY);
  CHECK_EQ(log.last.requested, 1200);
  CHECK_EQ(log.last.in_use_bytes, 800);
  CHECK_EQ(log.last.limit_bytes, 1000);
  log.raise_to = 2000; /* the callback raises the limit: the same request now passes */
  p = call(ctx, p, 800, 1200);
  CHECK(p != NULL);
  CHECK_EQ(log.calls, 2);
  CHECK_EQ(stats_of(ctx).limit_bytes, 2000);
  CHECK_EQ(stats_of(ctx).limit_hits, 2);
  call(ctx, p, 1200, 0);
  nsalloc_lua_context_delete(ctx);
}

static void test_allocation_limit(void) {
  limit_log_t log = {0};
  nsalloc_lua_options_t options = {
      .allocation_limit = 10, .on_limit = log_limit, .on_limit_arg = &log};
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(&options);
  void *blocks[10];
  for (int i = 0; i < 10; i++)
    CHECK((blocks[i] = call(ctx, NULL, LUA_TTABLE, 32)) != NULL);
  CHECK(call(ctx, NULL, LUA_TTABLE, 32) == NULL);
  CHECK_EQ(log.last.kind, NSALLOC_LUA_LIMIT_ALLOCATIONS);
  CHECK_EQ(log.last.allocations, 10);
  CHECK_EQ(log.last.allocation_limit, 10);
  blocks[0] = call(ctx, blocks[0], 32, 4000); /* growing a block is not an allocation */
  CHECK(blocks[0] != NULL);
  call(ctx, blocks[1], 32, 0);
  CHECK(call(ctx, NULL, LUA_TTABLE, 32) == NULL); /* the count is over the state's life */
  CHECK_EQ(nsalloc_lua_context_set_alloc_limit(ctx, 11), 10);
  CHECK(call(ctx, NULL, LUA_TTABLE, 32) != NULL);
  CHECK_EQ(stats_of(ctx).allocations, 11);
  CHECK_EQ(stats_of(ctx).limit_hits, 2);
  nsalloc_lua_context_delete(ctx);
}

static void test_type_names(void) {
  CHECK(strcmp(nsalloc_lua_type_name(NSALLOC_LUA_TYPE_STRING), "string") == 0);
  CHECK(strcmp(nsalloc_lua_type_name(NSALLOC_LUA_TYPE_OTHER), "other") == 0);
  CHECK(strcmp(nsalloc_lua_type_name(NSALLOC_LUA_TYPE_COUNT), "?") == 0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_type_code_is_not_a_size),
      TEST(test_zero_size_frees),
      TEST(test_contents_preserved),
      TEST(test_alignment_16),
      TEST(test_memory_limit_refuses_growth_only),
      TEST(test_limit_callback),
      TEST(test_allocation_limit),
      TEST(test_type_names),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
