/*
 * test_lua_state.c - Lua states on nsalloc contexts: the memory limit as a
 * Lua program sees it (a catchable error, the state goes on, the limit can be
 * raised), lua_close releasing everything, the registry link to the context
 * and the per-type statistics.
 */
#include "nsalloc_lua.h"
#include "test_util.h"

#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs `code`; returns its first result as a string, or the error message,
 * copied into `out`. Returns the pcall status. */
static int run(lua_State *L, const char *code, char *out, size_t capacity) {
  int status = luaL_loadstring(L, code);
  if (status == LUA_OK) status = lua_pcall(L, 0, 1, 0);
  const char *text = lua_tostring(L, -1);
  snprintf(out, capacity, "%s", text ? text : "(nil)");
  lua_pop(L, 1);
  return status;
}

static nsalloc_lua_stats_t stats_of(const nsalloc_lua_context_t *ctx) {
  nsalloc_lua_stats_t stats;
  nsalloc_lua_context_stats(ctx, &stats);
  return stats;
}

static size_t copy_blocks(void) {
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  return stats.in_use_blocks;
}

static const char grow_until_refused[] =
    "local t = {}\n"
    "local ok, err = pcall(function() for i = 1, 1e7 do t[i] = ('x'):rep(100) .. i end end)\n"
    "local n = #t\n"
    "t = nil\n"
    "collectgarbage()\n"
    "return tostring(ok) .. ' ' .. tostring(err) .. ' ' .. n";

static void test_limit_error_is_catchable_and_state_goes_on(void) {
  size_t blocks_before = copy_blocks();
  nsalloc_lua_options_t options = {.memory_limit = 2 << 20};
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(&options);
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  CHECK(L != NULL);
  luaL_openlibs(L);
  char out[256];
  CHECK_EQ(run(L, grow_until_refused, out, sizeof out), LUA_OK);
  CHECK(strncmp(out, "false not enough memory ", 24) == 0);
  long filled = strtol(out + 24, NULL, 10);
  CHECK(filled > 1000 && filled < 30000);
  nsalloc_lua_stats_t stats = stats_of(ctx);
  CHECK(stats.limit_hits >= 2); /* Lua retried after its emergency collection */
  CHECK(stats.peak_bytes <= (size_t)2 << 20);
  CHECK(stats.in_use_bytes < (size_t)1 << 20); /* the garbage is gone */

  /* The state goes on working, and a larger limit lets it hold more. */
  CHECK_EQ(run(L, "return ('ok'):rep(3)", out, sizeof out), LUA_OK);
  CHECK(strcmp(out, "okokok") == 0);
  CHECK_EQ(nsalloc_lua_context_set_limit(ctx, 8 << 20), 2 << 20);
  CHECK_EQ(run(L, grow_until_refused, out, sizeof out), LUA_OK);
  CHECK(strncmp(out, "false not enough memory ", 24) == 0);
  CHECK(strtol(out + 24, NULL, 10) > 3 * filled);
  nsalloc_lua_context_set_limit(ctx, 0);
  CHECK_EQ(run(L, "return #(('y'):rep(16 * 1024 * 1024))", out, sizeof out), LUA_OK);
  CHECK(strcmp(out, "16777216") == 0);

  lua_close(L);
  stats = stats_of(ctx);
  CHECK_EQ(stats.in_use_bytes, 0);
  CHECK_EQ(stats.heap_bytes, 0);
  CHECK_EQ(stats.heap_page_bytes, 0);
  nsalloc_lua_context_delete(ctx);
  CHECK_EQ(copy_blocks(), blocks_before); /* the context and every heap block are gone */
}

/* The emergency collection frees garbage, then the retried request fits.
 * (Lua's core allocations get that retry; luaL_Buffer, behind string.rep and
 * table.concat, calls the allocator directly and fails at once.) */
static void test_emergency_collection_makes_room(void) {
  nsalloc_lua_options_t options = {.memory_limit = 3 << 20};
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(&options);
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  luaL_openlibs(L);
  char out[128];
  CHECK_EQ(run(L,
               "collectgarbage('stop')\n"
               "for i = 1, 8 do local garbage = ('g'):rep(100000) .. i end\n"
               "local array = {}\n"
               "for i = 1, 1 << 17 do array[i] = i end\n" /* a 2 MiB array part */
               "return #array",
               out, sizeof out),
           LUA_OK);
  CHECK(strcmp(out, "131072") == 0);
  CHECK(stats_of(ctx).limit_hits >= 1);
  lua_close(L);
  nsalloc_lua_context_delete(ctx);
}

/* A limit too small for the state itself: no state, nothing left behind. */
static void test_newstate_below_its_own_size(void) {
  size_t blocks_before = copy_blocks();
  for (size_t limit = 64; limit <= 16384; limit *= 2) {
    nsalloc_lua_options_t options = {.memory_limit = limit};
    lua_State *L = nsalloc_lua_newstate(&options);
    if (L) {
      CHECK(limit >= 1024);
      lua_close(L);
    }
  }
  CHECK_EQ(copy_blocks(), blocks_before);
}

static void test_context_of(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  CHECK(nsalloc_lua_context_of(L) == ctx);
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  lua_setallocf(L, f, NULL); /* a host swapped the ud: no longer the context's */
  CHECK(nsalloc_lua_context_of(L) == NULL);
  lua_setallocf(L, f, ud);
  lua_close(L);
  nsalloc_lua_context_delete(ctx);

  lua_State *plain = luaL_newstate();
  CHECK(nsalloc_lua_context_of(plain) == NULL);
  lua_close(plain);

  L = nsalloc_lua_newstate(NULL); /* owned: lua_close frees the context */
  CHECK(nsalloc_lua_context_of(L) != NULL);
  lua_close(L);
}

static void test_stats_by_type(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  luaL_openlibs(L);
  nsalloc_lua_stats_t before = stats_of(ctx);
  char out[64];
  CHECK_EQ(run(L,
               "local keep = {}\n"
               "for i = 1, 1000 do\n"
               "  keep[#keep + 1] = {i}\n"
               "  keep[#keep + 1] = 'string number ' .. i\n"
               "  keep[#keep + 1] = function() return i end\n"
               "  keep[#keep + 1] = coroutine.create(print)\n"
               "end\n"
               "return #keep",
               out, sizeof out),
           LUA_OK);
  for (int i = 0; i < 1000; i++)
    lua_newuserdatauv(L, 24, 0);
  lua_settop(L, 0);
  nsalloc_lua_stats_t after = stats_of(ctx);
  static const nsalloc_lua_type_t types[] = {NSALLOC_LUA_TYPE_TABLE, NSALLOC_LUA_TYPE_STRING,
                                             NSALLOC_LUA_TYPE_FUNCTION, NSALLOC_LUA_TYPE_THREAD,
                                             NSALLOC_LUA_TYPE_USERDATA};
  for (size_t i = 0; i < TEST_COUNT(types); i++) {
    uint64_t made = after.by_type[types[i]].count - before.by_type[types[i]].count;
    CHECK(made >= 1000 && made < 2100); /* the strings of the numbers come too */
  }
  CHECK(after.by_type[NSALLOC_LUA_TYPE_USERDATA].bytes -
            before.by_type[NSALLOC_LUA_TYPE_USERDATA].bytes >=
        1000 * 24);
  uint64_t counted = 0;
  for (int type = 0; type < NSALLOC_LUA_TYPE_COUNT; type++)
    counted += after.by_type[type].count;
  CHECK_EQ(counted, after.allocations);
  lua_close(L);
  nsalloc_lua_context_delete(ctx);
}

/* One state per context: a second newstate on a context with a live state,
 * and a newstate on a context whose state was closed (its heap is gone), both
 * return NULL; the first state is unharmed. */
static void test_one_state_per_context(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  CHECK(L != NULL);
  CHECK(nsalloc_lua_context_newstate(ctx) == NULL);
  luaL_openlibs(L);
  char out[64];
  CHECK_EQ(run(L, "local t = {} for i = 1, 1000 do t[i] = 'v' .. i end return #t", out, sizeof out),
           LUA_OK);
  CHECK(strcmp(out, "1000") == 0);
  lua_close(L);
  CHECK(nsalloc_lua_context_newstate(ctx) == NULL);
  CHECK_EQ(stats_of(ctx).in_use_bytes, 0);
  nsalloc_lua_context_delete(ctx);
  CHECK_EQ(copy_blocks(), 0);
}

/* Deleting a context whose state is still open would leave the state
 * allocating through freed memory: the delete names the state and says what
 * to do, and aborts. The child prints the state's address first. */
static void delete_with_open_state(void *close_first) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  fprintf(stderr, "state=%p\n", (void *)L);
  if (close_first) lua_close(L);
  nsalloc_lua_context_delete(ctx);
  fprintf(stderr, "deleted\n");
}

static void test_delete_with_open_state_names_it(void) {
  char output[1024], expected[128];
  int status = test_in_child(delete_with_open_state, NULL, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  void *state = NULL;
  CHECK(sscanf(output, "state=%p", &state) == 1 && state != NULL);
  snprintf(expected, sizeof expected, "its Lua state %p is still open; call lua_close", state);
  CHECK(strstr(output, expected) != NULL);
  /* Named like every diagnostic of the copy: prefix and module file. */
  snprintf(expected, sizeof expected, "nsalloc[%s in ", nsalloc_prefix());
  CHECK(strstr(output, expected) != NULL && strstr(output, "test_lua_state]: lua: ") != NULL);
  CHECK(strstr(output, "deleted") == NULL);
  /* The control: closed first, the same delete goes through. */
  status = test_in_child(delete_with_open_state, (void *)1, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(strstr(output, "deleted") != NULL);
}

/* The warning handler's state must be out of Lua's reach: a script that
 * removes every registry entry the binding made and collects must leave the
 * handler working, and its switches must not write into blocks that now hold
 * other objects (strings of the size class the handler's state would have
 * had: a write there breaks the collector's list or their contents). */
static void test_warning_state_survives_registry_wipe(void) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(NULL);
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  luaL_openlibs(L);
  char out[64];
  CHECK_EQ(
      run(L,
          "local reg = debug.getregistry()\n"
          "for k in pairs(reg) do\n"
          "  if type(k) == 'string' and k:find('^nsalloc') then reg[k] = nil end\n"
          "end\n"
          "collectgarbage() collectgarbage()\n"
          "local keep = {}\n"
          "for i = 1, 4000 do keep[i] = ('%0' .. (8 + i % 24) .. 'd'):format(i) end\n"
          "for i = 1, 50 do warn('@on') warn('@off') end\n"
          "collectgarbage()\n"
          "for i = 1, 4000 do\n"
          "  if keep[i] ~= ('%0' .. (8 + i % 24) .. 'd'):format(i) then return 'lost ' .. i end\n"
          "end\n"
          "return 'intact'",
          out, sizeof out),
      LUA_OK);
  CHECK(strcmp(out, "intact") == 0);
  lua_close(L);
  nsalloc_lua_context_delete(ctx);
}

/* An untracked state counts nothing until nsalloc_lua_track; then it counts
 * from Lua's own figure, and limits apply. A limit makes a context tracked. */
static void test_untracked_until_tracked(void) {
  nsalloc_lua_context_t *limited =
      nsalloc_lua_context_new(&(nsalloc_lua_options_t){.untracked = true, .memory_limit = 1 << 20});
  CHECK(stats_of(limited).tracked);
  nsalloc_lua_context_delete(limited);

  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(&(nsalloc_lua_options_t){.untracked = true});
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  luaL_openlibs(L);
  char out[64];
  CHECK_EQ(run(L, "t = {} for i = 1, 5000 do t[i] = 'u' .. i end return #t", out, sizeof out),
           LUA_OK);
  nsalloc_lua_stats_t untracked = stats_of(ctx);
  CHECK(!untracked.tracked);
  CHECK_EQ(untracked.in_use_bytes, 0);
  CHECK_EQ(untracked.allocations, 0);
  CHECK(untracked.heap_bytes > 5000 * 16);
  CHECK(nsalloc_lua_track(L));
  size_t lua_count = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
  CHECK(stats_of(ctx).tracked);
  CHECK_EQ(stats_of(ctx).in_use_bytes, lua_count);
  nsalloc_lua_context_set_limit(ctx, lua_count + (256 << 10));
  CHECK_EQ(run(L, "return select(2, pcall(string.rep, 'x', 1 << 20))", out, sizeof out), LUA_OK);
  CHECK(strcmp(out, "not enough memory") == 0);
  CHECK_EQ(run(L, "t = nil collectgarbage() return 'freed'", out, sizeof out), LUA_OK);
  lua_count = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
  CHECK_EQ(stats_of(ctx).in_use_bytes, lua_count); /* frees of blocks made before balance */
  lua_close(L);
  CHECK_EQ(stats_of(ctx).in_use_bytes, 0);
  CHECK_EQ(stats_of(ctx).heap_bytes, 0);
  nsalloc_lua_context_delete(ctx);
  CHECK_EQ(copy_blocks(), 0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_limit_error_is_catchable_and_state_goes_on),
      TEST(test_emergency_collection_makes_room),
      TEST(test_newstate_below_its_own_size),
      TEST(test_context_of),
      TEST(test_stats_by_type),
      TEST(test_one_state_per_context),
      TEST(test_delete_with_open_state_names_it),
      TEST(test_warning_state_survives_registry_wipe),
      TEST(test_untracked_until_tracked),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
