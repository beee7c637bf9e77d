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

/* This file is part of the binding: its API is hidden (nsalloc_lua.h). */
#define NSALLOC_LUA_BUILDING 1
#include "nsalloc_lua.h"

#include <stdbool.h>

#define CONTEXT_MAGIC 0x6e736c7561637478ull /* "nsluactx" */
#define CONTEXT_ABI                                                                                \
  3u /* 3: earlier_bytes, earlier_heap; start_tracking replaced counting_alloc                     \
      */
/* Registry field naming the state's context (a light userdata). */
#define CONTEXT_REGISTRY_KEY "nsalloc.lua.context"

struct nsalloc_lua_context_s {
  uint64_t magic; /* CONTEXT_MAGIC while live */
  uint32_t abi;   /* CONTEXT_ABI of the copy that made it */
  /* Hot fields: every allocation reads or writes these. */
  nsalloc_heap_t *heap; /* NULL once the state is closed */
  size_t in_use;        /* Lua's own count: sum of requested sizes of live blocks (but see
                           earlier_bytes) */
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
  bool untracked; /* the state runs on lua_alloc_untracked */
  /* The maker copy's way to start counting on an untracked state
   * (nsalloc_lua_track may run in another copy, which must not make the
   * heap). False when memory is short. */
  bool (*start_tracking)(nsalloc_lua_context_t *ctx, lua_State *L);
  /* Blocks allocated before tracking began ("earlier blocks": a state adopted
   * or tracked late). Tracking starts in_use at Lua's own count, which covers
   * Lua's objects but not the blocks C code took through lua_getallocf (a
   * luaL_Buffer's box, LPeg's patterns). earlier_bytes is what in_use still
   * holds for earlier blocks: freeing one takes off its size but at most
   * that, so in_use never falls below the bytes of the blocks allocated
   * since, and cannot wrap (lua_alloc_late). Blocks allocated since live in
   * `heap`; that is how an earlier block is told apart. */
  size_t earlier_bytes;
  nsalloc_heap_t *earlier_heap; /* a state tracked late: the heap of its earlier blocks */
};

/* Does `ctx` look like a live context of this layout? (ctx must be readable.) */
static inline bool context_is_valid(const nsalloc_lua_context_t *ctx) {
  return ctx && ctx->magic == CONTEXT_MAGIC && ctx->abi == CONTEXT_ABI;
}

/* The binding's internal functions, shared between its files. Like the API
 * they carry the copy's prefix (two copies linked into one program do not
 * clash) and, whatever flags the build uses, they are hidden: a Lua module
 * built with a plain `cc -shared` exports none of them
 * (isolation.plain_build.lua). */
#if defined(_WIN32)
#define LUA_INTERNAL /* PE exports only what is marked dllexport */
#else
#define LUA_INTERNAL __attribute__((visibility("hidden")))
#endif
#define lua_alloc_untracked NSALLOC_NAME(lua_alloc_untracked)
#define lua_alloc_late      NSALLOC_NAME(lua_alloc_late)
#define context_free        NSALLOC_NAME(lua_context_free)
#define context_count_from  NSALLOC_NAME(lua_context_count_from)
#define state_register      NSALLOC_NAME(lua_state_register)
#define state_prepare       NSALLOC_NAME(lua_state_prepare)

/* lua_alloc.c: the allocator of untracked states (no limits, no counting). */
LUA_INTERNAL void *lua_alloc_untracked(void *ud, void *ptr, size_t osize, size_t nsize);
/* lua_alloc.c: the counting allocator of a state with earlier blocks (adopted
 * or tracked late): nsalloc_lua_alloc, except that an earlier block is freed
 * against earlier_bytes and moves into `heap` when resized. */
LUA_INTERNAL void *lua_alloc_late(void *ud, void *ptr, size_t osize, size_t nsize);
/* lua_alloc.c: destroy what is left of the context's heaps, then the context. */
LUA_INTERNAL void context_free(nsalloc_lua_context_t *ctx);

/* context.c: start the accounting of a state with earlier blocks at Lua's
 * own count of the bytes in use (earlier_bytes, see above). */
LUA_INTERNAL void context_count_from(nsalloc_lua_context_t *ctx, lua_State *L);

/* state.c: record the state's context in its registry; false when memory ran
 * out or the state already runs on a context. state_prepare also gives a new
 * state the handlers luaL_newstate would (panic message, warnings off until
 * "@on"). */
LUA_INTERNAL bool state_register(lua_State *L, nsalloc_lua_context_t *ctx);
LUA_INTERNAL bool state_prepare(lua_State *L, nsalloc_lua_context_t *ctx);

#endif /* NSALLOC_LUA_CONTEXT_H */
