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

#include <string.h>

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
 * the heaps go wholesale. An adopted state's main block is the previous
 * allocator's, and goes back to it. */
static void destroy_heaps(nsalloc_lua_context_t *ctx) {
  if (ctx->heap) nsalloc_heap_destroy(ctx->heap);
  if (ctx->earlier_heap) nsalloc_heap_destroy(ctx->earlier_heap);
  ctx->heap = ctx->earlier_heap = NULL;
}

void context_free(nsalloc_lua_context_t *ctx) {
  destroy_heaps(ctx);
  ctx->magic = 0;
  nsalloc_free(ctx);
}

static void context_close(nsalloc_lua_context_t *ctx, void *main_block, size_t size) {
  destroy_heaps(ctx);
  ctx->main_block = NULL;
  if (ctx->previous) ctx->previous(ctx->previous_ud, main_block, size, 0);
  if (ctx->owned_by_state) context_free(ctx);
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

/* A limit refused `growth` more bytes for a request of `nsize`: count it,
 * tell the host, and say whether the limits allow it now (the callback may
 * have raised them). */
static __attribute__((noinline)) bool
allowed_after_refusal(nsalloc_lua_context_t *ctx, bool new_block, size_t nsize, size_t growth) {
  ctx->limit_hits++;
  if (!ctx->on_limit) return false;
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
  return within_limits(ctx, new_block, growth);
}

/* May the state grow by `growth` bytes (and one more block when new_block)? */
static inline bool may_grow(nsalloc_lua_context_t *ctx, bool new_block, size_t nsize,
                            size_t growth) {
  return likely(within_limits(ctx, new_block, growth)) ||
         allowed_after_refusal(ctx, new_block, nsize, growth);
}

/* Free a block, or close the state when it is the main block. */
static inline void discard(nsalloc_lua_context_t *ctx, void *ptr, size_t osize) {
  if (unlikely(ptr == ctx->main_block))
    context_close(ctx, ptr, osize);
  else
    nsalloc_heap_free(ctx->heap, ptr);
}

/* The three kinds of request, each in its own function: the dispatcher below
 * then only jumps, and each path saves no more registers than it needs. */
static __attribute__((noinline)) void *release(nsalloc_lua_context_t *ctx, void *ptr,
                                               size_t osize) {
  if (ptr) {
    ctx->in_use -= osize;
    discard(ctx, ptr, osize);
  }
  return NULL;
}

static __attribute__((noinline)) void *allocate(nsalloc_lua_context_t *ctx, size_t type_code,
                                                size_t nsize) {
  if (!may_grow(ctx, true, nsize, nsize)) return NULL;
  return allocate_unchecked(ctx, type_code, nsize);
}

static __attribute__((noinline)) void *resize(nsalloc_lua_context_t *ctx, void *ptr, size_t osize,
                                              size_t nsize) {
  if (nsize > osize && !may_grow(ctx, false, nsize, nsize - osize)) return NULL;
  return resize_unchecked(ctx, ptr, osize, nsize);
}

void *nsalloc_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  if (nsize == 0) return release(ud, ptr, osize);
  if (!ptr) return allocate(ud, osize, nsize);
  return resize(ud, ptr, osize, nsize);
}

/* States with earlier blocks (context.h: earlier_bytes). An earlier block
 * counts for what in_use still holds of the earlier count, never more: Lua's
 * count may not have covered it (C code's blocks), and subtracting its whole
 * size could take in_use below the blocks allocated since - and wrap. */
static size_t earlier_share(nsalloc_lua_context_t *ctx, size_t osize) {
  return osize < ctx->earlier_bytes ? osize : ctx->earlier_bytes;
}

/* An earlier block goes back through its own heap (freed through `heap` it
 * would wait on its page as a remote free that no one collects), or for an
 * adopted state, whose earlier blocks no heap owns, through `heap` to the
 * previous allocator (adopt.c's forward hooks). */
static void free_earlier(nsalloc_lua_context_t *ctx, void *ptr) {
  nsalloc_heap_free(ctx->earlier_heap ? ctx->earlier_heap : ctx->heap, ptr);
}

static __attribute__((noinline)) void *release_earlier(nsalloc_lua_context_t *ctx, void *ptr,
                                                       size_t osize) {
  size_t share = earlier_share(ctx, osize);
  ctx->earlier_bytes -= share;
  ctx->in_use -= share;
  if (ptr == ctx->main_block)
    context_close(ctx, ptr, osize);
  else
    free_earlier(ctx, ptr);
  return NULL;
}

/* A resized earlier block moves into `heap` (nsalloc_heap_realloc could leave
 * it in place, still looking earlier): from then on it counts like a block
 * allocated since. */
static __attribute__((noinline)) void *resize_earlier(nsalloc_lua_context_t *ctx, void *ptr,
                                                      size_t osize, size_t nsize) {
  size_t share = earlier_share(ctx, osize);
  if (nsize > share && !may_grow(ctx, false, nsize, nsize - share)) return NULL;
  void *moved = nsalloc_heap_malloc(ctx->heap, nsize);
  if (unlikely(!moved)) return nsize > osize ? NULL : ptr; /* a shrink never fails */
  memcpy(moved, ptr, osize < nsize ? osize : nsize);
  free_earlier(ctx, ptr);
  ctx->earlier_bytes -= share;
  ctx->in_use = ctx->in_use - share + nsize; /* in_use >= earlier_bytes >= share */
  if (ctx->in_use > ctx->peak) ctx->peak = ctx->in_use;
  return moved;
}

void *lua_alloc_late(void *ud, void *ptr, size_t osize, size_t nsize) {
  nsalloc_lua_context_t *ctx = ud;
  if (ptr && !nsalloc_heap_owns(ctx->heap, ptr))
    return nsize == 0 ? release_earlier(ctx, ptr, osize) : resize_earlier(ctx, ptr, osize, nsize);
  return nsalloc_lua_alloc(ud, ptr, osize, nsize);
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
