/*
 * nsalloc_module.c - `require "nsalloc"`: the statistics and memory limit of
 * the running state, when it runs on an nsalloc context.
 *
 * The module bundles its own private copy, yet the context it inspects was
 * made by the host's copy: the binding reaches that copy's heap only through
 * the function pointers the context carries.
 */
#include "nsalloc_lua.h"

#include <lauxlib.h>

static nsalloc_lua_context_t *checked_context(lua_State *L) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_of(L);
  if (!ctx)
    luaL_error(L, "nsalloc: this Lua state does not run on nsalloc (create it with "
                  "nsalloc_lua_newstate, or run it under nsalloc-lua --alloc=nsalloc)");
  return ctx;
}

static void set_integer(lua_State *L, const char *key, uint64_t value) {
  lua_pushinteger(L, (lua_Integer)value);
  lua_setfield(L, -2, key);
}

/* nsalloc.stats() -> {in_use, peak, limit, allocations, allocation_limit,
 * limit_hits, heap_bytes, heap_page_bytes, copy, by_type = {string = {count,
 * bytes}, ...}} */
static int module_stats(lua_State *L) {
  nsalloc_lua_stats_t stats;
  nsalloc_lua_context_stats(checked_context(L), &stats);
  lua_createtable(L, 0, 10);
  set_integer(L, "in_use", stats.in_use_bytes);
  set_integer(L, "peak", stats.peak_bytes);
  set_integer(L, "limit", stats.limit_bytes);
  set_integer(L, "allocations", stats.allocations);
  set_integer(L, "allocation_limit", stats.allocation_limit);
  set_integer(L, "limit_hits", stats.limit_hits);
  set_integer(L, "heap_bytes", stats.heap_bytes);
  set_integer(L, "heap_page_bytes", stats.heap_page_bytes);
  lua_pushstring(L, stats.copy);
  lua_setfield(L, -2, "copy");
  lua_createtable(L, 0, NSALLOC_LUA_TYPE_COUNT);
  for (int type = 0; type < NSALLOC_LUA_TYPE_COUNT; type++) {
    lua_createtable(L, 0, 2);
    set_integer(L, "count", stats.by_type[type].count);
    set_integer(L, "bytes", stats.by_type[type].bytes);
    lua_setfield(L, -2, nsalloc_lua_type_name(type));
  }
  lua_setfield(L, -2, "by_type");
  return 1;
}

/* nsalloc.limit([bytes]) -> the limit before the call (0: none); bytes = 0
 * removes the limit. */
static int module_limit(lua_State *L) {
  nsalloc_lua_context_t *ctx = checked_context(L);
  if (lua_isnoneornil(L, 1)) {
    nsalloc_lua_stats_t stats;
    nsalloc_lua_context_stats(ctx, &stats);
    lua_pushinteger(L, (lua_Integer)stats.limit_bytes);
    return 1;
  }
  lua_Integer bytes = luaL_checkinteger(L, 1);
  luaL_argcheck(L, bytes >= 0, 1, "the limit must be >= 0");
  lua_pushinteger(L, (lua_Integer)nsalloc_lua_context_set_limit(ctx, (size_t)bytes));
  return 1;
}

/* The one exported name (the copy and everything else are hidden). */
__attribute__((visibility("default"))) int luaopen_nsalloc(lua_State *L);

int luaopen_nsalloc(lua_State *L) {
  static const luaL_Reg functions[] = {
      {"stats", module_stats},
      {"limit", module_limit},
      {NULL, NULL},
  };
  luaL_newlib(L, functions);
  lua_pushstring(L, nsalloc_prefix());
  lua_setfield(L, -2, "module_copy");
  return 1;
}
