/*
 * context.h - the per-state context behind nsalloc_lua_alloc's `ud`.
 *
 * The layout is shared by every copy of the binding (CONTEXT_ABI names it):
 * code of one copy may inspect and retune a context made by another, and it
 * reaches the maker's heap only through the function pointers stored here.
 * Every field is touched by one thread at a time (the thread using the state).
 */
#ifndef NSALLOC_LUA_CONTEXT_H
#define NSALLOC_LUA_CONTEXT_H

#include "nsalloc_lua.h"

#include <stdbool.h>

#define CONTEXT_MAGIC 0x6e736c7561637478ull /* "nsluactx" */
#define CONTEXT_ABI   2u                    /* 2: warnings, untracked, counting_alloc appended */
/* Registry field naming the state's context (a light userdata). */
#define CONTEXT_REGISTRY_KEY "nsalloc.lua.context"

struct nsalloc_lua_context_s {
  uint64_t magic; /* CONTEXT_MAGIC while live */
  uint32_t abi;   /* CONTEXT_ABI of the copy that made it */
  /* Hot fields: every allocation reads or writes these. */
  nsalloc_heap_t *heap; /* NULL once the state is closed */
  size_t in_use;        /* Lua's own count: sum of requested sizes of live blocks */
  size_t peak;
  size_t limit; /* SIZE_MAX: none */
  uint64_t allocations;
  uint64_t allocation_limit; /* UINT64_MAX: none */
  void *main_block;          /* the state's first block, freed last by lua_close */
  uint64_t type_count[NSALLOC_LUA_TYPE_COUNT];
  uint64_t type_bytes[NSALLOC_LUA_TYPE_COUNT];
  /* Cold fields. */
  uint64_t limit_hits;
  nsalloc_lua_limit_fn on_limit;
  void *on_limit_arg;
  bool owned_by_state; /* lua_close frees the context too */
  lua_Alloc previous;  /* adopted states: the allocator of the blocks made before */
  void *previous_ud;
  /* The maker copy's functions (a context may be used by other copies). */
  void (*heap_stats)(const nsalloc_heap_t *heap, nsalloc_stats_t *out);
  const char *copy_prefix;
  /* The warning handler's state (state.c). It lives here, not in a Lua
   * object, so no Lua code (debug.getregistry) can free it under the handler;
   * the context outlives every warning, the last of which lua_close emits
   * before it frees the main block. Only the maker copy reads it. */
  int warnings;
  bool untracked;           /* the state runs on lua_alloc_untracked */
  lua_Alloc counting_alloc; /* the maker copy's nsalloc_lua_alloc, for nsalloc_lua_track */
};

/* Does `ctx` look like a live context of this layout? (ctx must be readable.) */
static inline bool context_is_valid(const nsalloc_lua_context_t *ctx) {
  return ctx && ctx->magic == CONTEXT_MAGIC && ctx->abi == CONTEXT_ABI;
}

/* context.c: start the accounting at Lua's own count of the bytes in use
 * (blocks allocated before, possibly by another allocator, then balance). */
void context_start_count(nsalloc_lua_context_t *ctx, lua_State *L);

/* lua_alloc.c: the allocator of untracked states (no limits, no counting). */
void *lua_alloc_untracked(void *ud, void *ptr, size_t osize, size_t nsize);

/* state.c: record the state's context in its registry; false when memory ran
 * out or the state already runs on a context. state_prepare also gives a new state the handlers
 * luaL_newstate would (panic message, warnings off until "@on"). */
bool state_register(lua_State *L, nsalloc_lua_context_t *ctx);
bool state_prepare(lua_State *L, nsalloc_lua_context_t *ctx);

#endif /* NSALLOC_LUA_CONTEXT_H */
