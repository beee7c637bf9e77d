/*
 * nsalloc_module.c - `require "nsalloc"`: the statistics and memory limit of
 * the running state.
 *
 * A state that runs on an nsalloc context (nsalloc-lua, nsalloc_lua_newstate)
 * is inspected as it is (an untracked one starts counting): the module bundles its own private
 * copy, yet the context was made by the host's copy, which the binding reaches only through the
 * function pointers the context carries. Any other state (stock lua5.4, a host's luaL_newstate) is
 * moved onto the module's copy at the require (nsalloc_lua_adopt: blocks made before go back to the
 * previous allocator), so one `require` gives a plain `lua` its limits and statistics.
 */
#define _GNU_SOURCE /* dladdr */
#include "context.h"

#include <dlfcn.h>
#include <lauxlib.h>

/* An adopted state allocates through this module's code until the very end
 * of lua_close, after Lua has closed its C libraries: the module must stay
 * mapped, so it marks itself RTLD_NODELETE. */
static bool keep_module_loaded(void) {
  Dl_info info;
  return dladdr((void *)keep_module_loaded, &info) && info.dli_fname &&
         dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

/* The state's context counts from now on: the one it runs on (tracked, if
 * it was not), or a new one it adopts (owned by the state: lua_close frees
 * it). */
static void track_state(lua_State *L) {
  if (nsalloc_lua_track(L)) return;
  if (!keep_module_loaded()) luaL_error(L, "nsalloc: cannot keep the module loaded: %s", dlerror());
  nsalloc_lua_context_t *ctx = nsalloc_lua_adopt(L, NULL);
  if (!ctx) luaL_error(L, "nsalloc: cannot move the state onto nsalloc: not enough memory");
  ctx->owned_by_state = true;
}

static nsalloc_lua_context_t *checked_context(lua_State *L) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_of(L);
  if (!ctx)
    luaL_error(L, "nsalloc: this Lua state no longer runs on nsalloc (its allocator was "
                  "replaced after the module was loaded)");
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
  track_state(L);
  luaL_newlib(L, functions);
  lua_pushstring(L, nsalloc_prefix());
  lua_setfield(L, -2, "module_copy");
  return 1;
}
