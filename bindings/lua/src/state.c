/*
 * state.c - what a fresh state gets besides its allocator: the handlers
 * luaL_newstate would install (a panic message, warnings that are off until
 * "@on") and the registry entry naming its context, which
 * nsalloc_lua_context_of reads.
 */
#include "context.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

static int on_panic(lua_State *L) {
  const char *message = lua_tostring(L, -1);
  fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n",
          message ? message : "error object is not a string");
  fflush(stderr);
  return 0; /* Lua aborts */
}

/* Warnings: control messages are one-piece messages starting with '@'; a message may come in pieces
 * (to_continue set on all but the last). The context (the handler's ud) keeps
 * the on/off switch and whether a message is half printed. */
enum warn_state { WARN_OFF = 0, WARN_ON, WARN_CONTINUING };

static void on_warning(void *ud, const char *piece, int to_continue) {
  int *state = &((nsalloc_lua_context_t *)ud)->warnings;
  if (*state != WARN_CONTINUING && !to_continue && piece[0] == '@') {
    if (strcmp(piece, "@on") == 0)
      *state = WARN_ON;
    else if (strcmp(piece, "@off") == 0)
      *state = WARN_OFF;
    return;
  }
  if (*state == WARN_OFF) return;
  if (*state == WARN_ON) fputs("Lua warning: ", stderr);
  fputs(piece, stderr);
  if (to_continue) {
    *state = WARN_CONTINUING;
  } else {
    fputc('\n', stderr);
    *state = WARN_ON;
  }
}

/* The registry names the context; it counts only while it is still the `ud`
 * of the state's allocator (a host may have swapped allocators since). */
nsalloc_lua_context_t *nsalloc_lua_context_of(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, CONTEXT_REGISTRY_KEY);
  nsalloc_lua_context_t *ctx = lua_touserdata(L, -1);
  lua_pop(L, 1);
  void *ud = NULL;
  lua_getallocf(L, &ud);
  return ctx && ctx == ud && context_is_valid(ctx) ? ctx : NULL;
}

static int register_context(lua_State *L) {
  if (nsalloc_lua_context_of(L)) return luaL_error(L, "the state already runs on nsalloc");
  lua_pushvalue(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, CONTEXT_REGISTRY_KEY);
  return 0;
}

/* Run fn(arg) in protected mode (lookups and new keys may run out of memory). */
static bool run_protected(lua_State *L, lua_CFunction fn, void *arg) {
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, arg);
  bool ok = lua_pcall(L, 1, 0, 0) == LUA_OK;
  if (!ok) lua_pop(L, 1);
  return ok;
}

bool state_register(lua_State *L, nsalloc_lua_context_t *ctx) {
  return run_protected(L, register_context, ctx);
}

bool state_prepare(lua_State *L, nsalloc_lua_context_t *ctx) {
  lua_atpanic(L, on_panic);
  ctx->warnings = WARN_OFF;
  lua_setwarnf(L, on_warning, ctx);
  return state_register(L, ctx);
}
