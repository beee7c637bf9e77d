/*
 * lua_alloc.c - nsalloc_lua_alloc, the lua_Alloc of a context.
 *
 * Contract (Lua 5.4): with ptr == NULL, osize is a type code, not a size;
 * nsize == 0 frees and returns NULL; otherwise it behaves like realloc and
 * returns NULL only when the request cannot be met. On top of that: a shrink
 * never fails, and limits refuse only growth (the usual sandbox accounting,
 * in_use += nsize - osize), so a state over its limit can always give memory
 * back. Blocks are 16-byte aligned (every nsalloc block is).
 */
#include "context.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Lua's basic type codes -> our statistics buckets. */
static const uint8_t type_of_code[LUA_NUMTYPES] = {
    [LUA_TNIL] = NSALLOC_LUA_TYPE_OTHER,           [LUA_TBOOLEAN] = NSALLOC_LUA_TYPE_OTHER,
    [LUA_TLIGHTUSERDATA] = NSALLOC_LUA_TYPE_OTHER, [LUA_TNUMBER] = NSALLOC_LUA_TYPE_OTHER,
    [LUA_TSTRING] = NSALLOC_LUA_TYPE_STRING,       [LUA_TTABLE] = NSALLOC_LUA_TYPE_TABLE,
    [LUA_TFUNCTION] = NSALLOC_LUA_TYPE_FUNCTION,   [LUA_TUSERDATA] = NSALLOC_LUA_TYPE_USERDATA,
    [LUA_TTHREAD] = NSALLOC_LUA_TYPE_THREAD,
};

static inline nsalloc_lua_type_t type_of(size_t code) {
  return code < LUA_NUMTYPES ? type_of_code[code] : NSALLOC_LUA_TYPE_OTHER;
}

/* lua_newstate's first block (type "thread": the main thread and the global
 * state) is the one lua_close frees last: everything else is gone by then, so
 * the heap goes wholesale. An adopted state's main block is the previous
 * allocator's, and goes back to it. */
static void context_close(nsalloc_lua_context_t *ctx, void *main_block, size_t size) {
  nsalloc_heap_destroy(ctx->heap);
  ctx->heap = NULL;
  ctx->main_block = NULL;
  if (ctx->previous) ctx->previous(ctx->previous_ud, main_block, size, 0);
  if (ctx->owned_by_state) nsalloc_lua_context_delete(ctx);
}

/* Do the limits allow `growth` more bytes (and, for a new block, one more
 * allocation)? */
static inline bool within_limits(const nsalloc_lua_context_t *ctx, bool new_block, size_t growth) {
  size_t after;
  if (__builtin_add_overflow(ctx->in_use, growth, &after) || after > ctx->limit) return false;
  return !new_block || ctx->allocations < ctx->allocation_limit;
}

/* Serve requests the limits allow. */
static inline void *allocate_unchecked(nsalloc_lua_context_t *ctx, size_t type_code, size_t nsize) {
  void *p = nsalloc_heap_malloc(ctx->heap, nsize);
  if (unlikely(!p)) return NULL;
  if (unlikely(!ctx->main_block) && type_code == LUA_TTHREAD) ctx->main_block = p;
  nsalloc_lua_type_t type = type_of(type_code);
  ctx->type_count[type]++;
  ctx->type_bytes[type] += nsize;
  ctx->allocations++;
  ctx->in_use += nsize;
  if (ctx->in_use > ctx->peak) ctx->peak = ctx->in_use;
  return p;
}

static inline void *resize_unchecked(nsalloc_lua_context_t *ctx, void *ptr, size_t osize,
                                     size_t nsize) {
  void *p = nsalloc_heap_realloc(ctx->heap, ptr, nsize);
  if (unlikely(!p)) {
    if (nsize > osize) return NULL;
    p = ptr; /* a shrink never fails: the old block is big enough */
  }
  ctx->in_use += nsize - osize; /* modular: correct for shrinks too */
  if (ctx->in_use > ctx->peak) ctx->peak = ctx->in_use;
  return p;
}

/* A limit refused the request: count it, tell the host, and check once more
 * (the callback may have raised the limit). */
static __attribute__((noinline)) void *refused(nsalloc_lua_context_t *ctx, void *ptr, size_t osize,
                                               size_t nsize) {
  bool new_block = ptr == NULL;
  size_t growth = nsize - (new_block ? 0 : osize);
  ctx->limit_hits++;
  if (!ctx->on_limit) return NULL;
  size_t after;
  bool memory = __builtin_add_overflow(ctx->in_use, growth, &after) || after > ctx->limit;
  nsalloc_lua_limit_event_t event = {
      .kind = memory ? NSALLOC_LUA_LIMIT_MEMORY : NSALLOC_LUA_LIMIT_ALLOCATIONS,
      .requested = nsize,
      .in_use_bytes = ctx->in_use,
      .limit_bytes = ctx->limit == SIZE_MAX ? 0 : ctx->limit,
      .allocations = ctx->allocations,
      .allocation_limit = ctx->allocation_limit == UINT64_MAX ? 0 : ctx->allocation_limit,
  };
  ctx->on_limit(ctx, &event, ctx->on_limit_arg);
  if (!within_limits(ctx, new_block, growth)) return NULL;
  return new_block ? allocate_unchecked(ctx, osize, nsize)
                   : resize_unchecked(ctx, ptr, osize, nsize);
}

/* The three kinds of request, each in its own function: the dispatcher below
 * then only jumps, and each path saves no more registers than it needs. */
static __attribute__((noinline)) void *release(nsalloc_lua_context_t *ctx, void *ptr,
                                               size_t osize) {
  if (ptr) {
    ctx->in_use -= osize;
    if (unlikely(ptr == ctx->main_block))
      context_close(ctx, ptr, osize);
    else
      nsalloc_heap_free(ctx->heap, ptr);
  }
  return NULL;
}

static __attribute__((noinline)) void *allocate(nsalloc_lua_context_t *ctx, size_t type_code,
                                                size_t nsize) {
  if (unlikely(!within_limits(ctx, true, nsize))) return refused(ctx, NULL, type_code, nsize);
  return allocate_unchecked(ctx, type_code, nsize);
}

static __attribute__((noinline)) void *resize(nsalloc_lua_context_t *ctx, void *ptr, size_t osize,
                                              size_t nsize) {
  if (nsize > osize && unlikely(!within_limits(ctx, false, nsize - osize)))
    return refused(ctx, ptr, osize, nsize);
  return resize_unchecked(ctx, ptr, osize, nsize);
}

void *nsalloc_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  if (nsize == 0) return release(ud, ptr, osize);
  if (!ptr) return allocate(ud, osize, nsize);
  return resize(ud, ptr, osize, nsize);
}

/* Untracked states: only the heap, and the main block marker lua_close needs.
 * nsalloc_lua_track switches a state to nsalloc_lua_alloc at any time: both
 * serve the same heap. As above, each kind of request has its own function,
 * so the dispatcher has no stack frame and allocation is a tail call. */
static __attribute__((noinline)) void *release_untracked(nsalloc_lua_context_t *ctx, void *ptr,
                                                         size_t osize) {
  if (unlikely(ptr == ctx->main_block) && ptr)
    context_close(ctx, ptr, osize);
  else
    nsalloc_heap_free(ctx->heap, ptr);
  return NULL;
}

static __attribute__((noinline)) void *resize_untracked(nsalloc_lua_context_t *ctx, void *ptr,
                                                        size_t osize, size_t nsize) {
  void *p = nsalloc_heap_realloc(ctx->heap, ptr, nsize);
  return likely(p != NULL) || nsize > osize ? p : ptr; /* a shrink never fails */
}

/* lua_newstate's first request: the main block. */
static __attribute__((noinline)) void *allocate_main_block(nsalloc_lua_context_t *ctx,
                                                           size_t nsize) {
  return ctx->main_block = nsalloc_heap_malloc(ctx->heap, nsize);
}

void *lua_alloc_untracked(void *ud, void *ptr, size_t osize, size_t nsize) {
  nsalloc_lua_context_t *ctx = ud;
  if (nsize == 0) return release_untracked(ctx, ptr, osize);
  if (ptr) return resize_untracked(ctx, ptr, osize, nsize);
  if (unlikely(!ctx->main_block)) return allocate_main_block(ctx, nsize);
  return nsalloc_heap_malloc(ctx->heap, nsize);
}
