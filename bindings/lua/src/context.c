/*
 * context.c - creating, inspecting and deleting per-state contexts, and the
 * states that run on them.
 */
#include "context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void apply_options(nsalloc_lua_context_t *ctx, const nsalloc_lua_options_t *options) {
  ctx->limit = SIZE_MAX;
  ctx->allocation_limit = UINT64_MAX;
  if (!options) return;
  if (options->memory_limit) ctx->limit = options->memory_limit;
  if (options->allocation_limit) ctx->allocation_limit = options->allocation_limit;
  ctx->on_limit = options->on_limit;
  ctx->on_limit_arg = options->on_limit_arg;
  ctx->untracked = options->untracked && !options->memory_limit && !options->allocation_limit;
}

void context_count_from(nsalloc_lua_context_t *ctx, lua_State *L) {
  ctx->in_use = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
  ctx->earlier_bytes = ctx->in_use;
  ctx->peak = ctx->in_use;
}

/* The untracked state's blocks become earlier blocks: they keep their heap,
 * and the blocks allocated from now on come from a new one, so lua_alloc_late
 * tells them apart. */
static bool start_tracking(nsalloc_lua_context_t *ctx, lua_State *L) {
  nsalloc_heap_t *heap = nsalloc_heap_new();
  if (!heap) return false;
  ctx->earlier_heap = ctx->heap;
  ctx->heap = heap;
  context_count_from(ctx, L);
  ctx->untracked = false;
  lua_setallocf(L, lua_alloc_late, ctx);
  return true;
}

nsalloc_lua_context_t *nsalloc_lua_context_new(const nsalloc_lua_options_t *options) {
  nsalloc_lua_context_t *ctx = nsalloc_calloc(1, sizeof(*ctx));
  if (!ctx) return NULL;
  ctx->heap = nsalloc_heap_new();
  if (!ctx->heap) {
    nsalloc_free(ctx);
    return NULL;
  }
  ctx->magic = CONTEXT_MAGIC;
  ctx->abi = CONTEXT_ABI;
  ctx->heap_stats = nsalloc_heap_stats;
  ctx->copy_prefix = nsalloc_prefix();
  ctx->start_tracking = start_tracking;
  apply_options(ctx, options);
  return ctx;
}

/* A context whose state is open still serves it: deleting it would leave the
 * state allocating through freed memory (and lua_close would then free every
 * block into a destroyed heap). The main block starts with the main thread's
 * extra space, then the main thread itself (lstate.c's LX; adopt.c relies on
 * the same layout), which is how the state is named. */
void nsalloc_lua_context_delete(nsalloc_lua_context_t *ctx) {
  if (!ctx) return;
  if (ctx->main_block) {
    nsalloc_message("lua: nsalloc_lua_context_delete(%p): its Lua state %p is still open; call "
                    "lua_close on that state first, then delete the context; aborting",
                    (void *)ctx, (void *)((char *)ctx->main_block + LUA_EXTRASPACE));
    abort();
  }
  context_free(ctx);
}

/* One state per context: a context whose state is live (or was adopted) has a
 * main block, and one whose state was closed has no heap any more. */
lua_State *nsalloc_lua_context_newstate(nsalloc_lua_context_t *ctx) {
  if (!context_is_valid(ctx) || !ctx->heap || ctx->main_block) return NULL;
  lua_State *L = lua_newstate(ctx->untracked ? lua_alloc_untracked : nsalloc_lua_alloc, ctx);
  if (L && !state_prepare(L, ctx)) {
    lua_close(L);
    return NULL;
  }
  return L;
}

lua_State *nsalloc_lua_newstate(const nsalloc_lua_options_t *options) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(options);
  if (!ctx) return NULL;
  lua_State *L = nsalloc_lua_context_newstate(ctx);
  if (L)
    ctx->owned_by_state = true;
  else
    nsalloc_lua_context_delete(ctx);
  return L;
}

static void add_heap_stats(const nsalloc_lua_context_t *ctx, const nsalloc_heap_t *heap,
                           nsalloc_lua_stats_t *out) {
  if (!heap) return;
  nsalloc_stats_t stats;
  ctx->heap_stats(heap, &stats);
  out->heap_bytes += stats.in_use_bytes;
  out->heap_page_bytes += stats.page_bytes;
}

void nsalloc_lua_context_stats(const nsalloc_lua_context_t *ctx, nsalloc_lua_stats_t *out) {
  memset(out, 0, sizeof(*out));
  out->in_use_bytes = ctx->in_use;
  out->peak_bytes = ctx->peak;
  out->limit_bytes = ctx->limit == SIZE_MAX ? 0 : ctx->limit;
  out->allocations = ctx->allocations;
  out->allocation_limit = ctx->allocation_limit == UINT64_MAX ? 0 : ctx->allocation_limit;
  out->limit_hits = ctx->limit_hits;
  out->copy = ctx->copy_prefix;
  out->tracked = !ctx->untracked;
  for (size_t type = 0; type < NSALLOC_LUA_TYPE_COUNT; type++) {
    out->by_type[type].count = ctx->type_count[type];
    out->by_type[type].bytes = ctx->type_bytes[type];
  }
  /* The heaps belong to the copy that made the context. */
  add_heap_stats(ctx, ctx->heap, out);
  add_heap_stats(ctx, ctx->earlier_heap, out);
}

size_t nsalloc_lua_context_set_limit(nsalloc_lua_context_t *ctx, size_t bytes) {
  size_t previous = ctx->limit == SIZE_MAX ? 0 : ctx->limit;
  ctx->limit = bytes ? bytes : SIZE_MAX;
  return previous;
}

uint64_t nsalloc_lua_context_set_alloc_limit(nsalloc_lua_context_t *ctx, uint64_t allocations) {
  uint64_t previous = ctx->allocation_limit == UINT64_MAX ? 0 : ctx->allocation_limit;
  ctx->allocation_limit = allocations ? allocations : UINT64_MAX;
  return previous;
}

bool nsalloc_lua_track(lua_State *L) {
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_of(L);
  if (!ctx) return false;
  return !ctx->untracked || ctx->start_tracking(ctx, L);
}

const char *nsalloc_lua_type_name(nsalloc_lua_type_t type) {
  static const char *const names[NSALLOC_LUA_TYPE_COUNT] = {
      [NSALLOC_LUA_TYPE_STRING] = "string",     [NSALLOC_LUA_TYPE_TABLE] = "table",
      [NSALLOC_LUA_TYPE_FUNCTION] = "function", [NSALLOC_LUA_TYPE_USERDATA] = "userdata",
      [NSALLOC_LUA_TYPE_THREAD] = "thread",     [NSALLOC_LUA_TYPE_OTHER] = "other",
  };
  return (unsigned)type < NSALLOC_LUA_TYPE_COUNT ? names[type] : "?";
}
