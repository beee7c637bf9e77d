/*
 * test_lua_adopt.c - a host that created its state on another allocator
 * switches it to nsalloc (nsalloc_lua_adopt): the blocks made before are
 * freed and resized through the previous allocator with their exact size, the
 * state keeps working, and lua_close leaves nothing behind in either
 * allocator. Negative controls: switching with a bare lua_setallocf (no
 * forwarding) is caught, not silently corrupting.
 */
#include "nsalloc_lua.h"
#include "test_util.h"

#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The previous allocator: malloc with a 16-byte header holding the size, so
 * it can tell whether every osize it is given is exact. */
typedef struct counting_s {
  long live;
  long osize_mismatches;
  long calls_after_switch;
  bool switched;
} counting_t;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  counting_t *counting = ud;
  counting->calls_after_switch += counting->switched;
  size_t *header = ptr ? (size_t *)ptr - 2 : NULL;
  if (header && header[0] != osize) counting->osize_mismatches++;
  if (nsize == 0) {
    if (header) counting->live--;
    free(header);
    return NULL;
  }
  size_t *block = realloc(header, nsize + 2 * sizeof(size_t));
  if (!block) return NULL;
  if (!header) counting->live++;
  block[0] = nsize;
  return block + 2;
}

static const char before_switch[] = "old_strings = {}\n"
                                    "for i = 1, 2000 do old_strings[i] = 'old ' .. i end\n"
                                    "old_array = {}\n"
                                    "for i = 1, 100 do old_array[i] = i end\n"
                                    "old_closure = function() return #old_strings end";

static const char after_switch[] =
    "for i = 101, 5000 do old_array[i] = i end\n" /* resizes a block made before */
    "for i = 1, 2000, 2 do old_strings[i] = nil end\n"
    "collectgarbage()\n"
    "local fresh = {}\n"
    "for i = 1, 3000 do fresh[i] = {tostring(i)} end\n"
    "for i = 2, 2000, 2 do assert(old_strings[i] == 'old ' .. i) end\n"
    "for i = 1, 5000 do assert(old_array[i] == i) end\n"
    "assert(old_closure() == 2000)\n"
    "old_strings = nil; old_array = nil; old_closure = nil\n"
    "collectgarbage()";

static uint64_t forwarded(void) {
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  return stats.forwarded;
}

static void test_adopt_forwards_old_blocks_with_exact_sizes(void) {
  counting_t counting = {0};
  lua_State *L = lua_newstate(counting_alloc, &counting);
  luaL_openlibs(L);
  CHECK(luaL_dostring(L, before_switch) == LUA_OK);
  long old_blocks = counting.live;
  uint64_t forwarded_before = forwarded();

  nsalloc_lua_context_t *ctx = nsalloc_lua_adopt(L, NULL);
  CHECK(ctx != NULL);
  CHECK(nsalloc_lua_context_of(L) == ctx);
  CHECK(nsalloc_lua_adopt(L, NULL) == NULL); /* already on nsalloc */
  counting.switched = true;
  CHECK(luaL_dostring(L, after_switch) == LUA_OK);
  CHECK(counting.live < old_blocks / 2); /* old blocks went back to their allocator */
  CHECK(counting.calls_after_switch > 0);
  CHECK(forwarded() > forwarded_before);
  nsalloc_lua_stats_t stats;
  nsalloc_lua_context_stats(ctx, &stats);
  CHECK(stats.allocations > 3000);
  CHECK(stats.heap_bytes > 0);
  lua_Integer lua_count = lua_gc(L, LUA_GCCOUNT) * 1024 + lua_gc(L, LUA_GCCOUNTB);
  CHECK_EQ(stats.in_use_bytes, lua_count); /* the accounting matches Lua's own */

  lua_close(L);
  CHECK_EQ(counting.live, 0);
  CHECK_EQ(counting.osize_mismatches, 0);
  nsalloc_lua_context_stats(ctx, &stats);
  CHECK_EQ(stats.in_use_bytes, 0);
  CHECK_EQ(stats.heap_bytes, 0);
  nsalloc_lua_context_delete(ctx);
}

/* The common case: a state from luaL_newstate (the C library's malloc). Under
 * ASan, a block freed into the wrong allocator would be reported. */
static void test_adopt_luaL_newstate(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  CHECK(luaL_dostring(L, before_switch) == LUA_OK);
  nsalloc_lua_options_t options = {.memory_limit = 64 << 20};
  nsalloc_lua_context_t *ctx = nsalloc_lua_adopt(L, &options);
  CHECK(ctx != NULL);
  CHECK(luaL_dostring(L, after_switch) == LUA_OK);
  CHECK(luaL_dostring(L, "local ok, err = pcall(string.rep, 'x', 100 << 20)\n"
                         "assert(not ok and err:find('not enough memory'))") == LUA_OK);
  lua_close(L);
  nsalloc_lua_stats_t stats;
  nsalloc_lua_context_stats(ctx, &stats);
  CHECK_EQ(stats.in_use_bytes, 0);
  CHECK(stats.limit_hits > 0);
  nsalloc_lua_context_delete(ctx);
}

/* Negative controls, each in a child: switching with a bare lua_setallocf
 * hands old blocks to nsalloc, which refuses them loudly. */
static void bare_switch(void *install_forwarding_first) {
  if (install_forwarding_first) { /* another state was adopted: FORWARD is on */
    lua_State *other = luaL_newstate();
    nsalloc_lua_context_t *ctx = nsalloc_lua_adopt(other, NULL);
    lua_close(other);
    nsalloc_lua_context_delete(ctx);
  } else {
    nsalloc_set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
  }
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  if (luaL_dostring(L, before_switch) != LUA_OK) return;
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  lua_setallocf(L, nsalloc_lua_alloc, ctx);
  luaL_dostring(L, after_switch);
  fprintf(stderr, "survived\n");
}

static void test_bare_setallocf_is_caught(void) {
  char output[1024];
  int status = test_in_child(bare_switch, NULL, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  CHECK(strstr(output, "pointer not owned by this copy (foreign); aborting") != NULL);
  CHECK(strstr(output, "survived") == NULL);

  status = test_in_child(bare_switch, (void *)1, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  CHECK(strstr(output, "foreign pointer") && strstr(output, "outside an adopted Lua state"));
  CHECK(strstr(output, "survived") == NULL);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_adopt_forwards_old_blocks_with_exact_sizes),
      TEST(test_adopt_luaL_newstate),
      TEST(test_bare_setallocf_is_caught),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
