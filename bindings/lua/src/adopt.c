/*
 * adopt.c - moving a running state onto nsalloc (lua_setallocf).
 *
 * After the switch Lua frees and resizes blocks the previous allocator made.
 * The heap does not own them, so the core hands them to this copy's FORWARD
 * hooks. Those hooks get no old size, yet a lua_Alloc may rely on osize (a
 * counting or debugging allocator does). So the adopted state's lua_Alloc
 * records the call in flight (its context and osize) in a thread-local that
 * the hooks read: each adopted state forwards to its own previous allocator
 * with the exact size, and the non-adopted path pays nothing for it. The
 * copy-wide forward ctx is therefore unused: it could name only one previous
 * allocator, while every adopted state may have its own.
 */
#include "context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct forwarding_call_s {
  nsalloc_lua_context_t *ctx;
  size_t osize;
} forwarding_call_t;

static _Thread_local forwarding_call_t *call_in_flight;

static void *lua_alloc_adopted(void *ud, void *ptr, size_t osize, size_t nsize) {
  forwarding_call_t call = {ud, osize}, *outer = call_in_flight;
  call_in_flight = &call;
  void *result = lua_alloc_late(ud, ptr, osize, nsize);
  call_in_flight = outer;
  return result;
}

/* A foreign pointer outside an adopted state's call has no previous allocator
 * to go to: that is a bug in the host, reported like the core reports it. */
static forwarding_call_t *current_call(const void *p) {
  forwarding_call_t *call = call_in_flight;
  if (!call) {
    nsalloc_message("lua: foreign pointer %p outside an adopted Lua state; aborting", p);
    abort();
  }
  return call;
}

static void forward_free(void *unused, void *p) {
  (void)unused;
  forwarding_call_t *call = current_call(p);
  call->ctx->previous(call->ctx->previous_ud, p, call->osize, 0);
}

/* Resizing an old block moves it into the heap. */
static void *forward_realloc(void *unused, void *p, size_t size) {
  (void)unused;
  forwarding_call_t *call = current_call(p);
  nsalloc_lua_context_t *ctx = call->ctx;
  void *q = nsalloc_heap_malloc(ctx->heap, size);
  if (!q) return NULL;
  memcpy(q, p, call->osize < size ? call->osize : size);
  ctx->previous(ctx->previous_ud, p, call->osize, 0);
  return q;
}

nsalloc_lua_context_t *nsalloc_lua_adopt(lua_State *L, const nsalloc_lua_options_t *options) {
  static const nsalloc_forward_t hooks = {NULL, forward_free, forward_realloc, NULL};
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(options);
  if (!ctx) return NULL;
  if (!state_register(L, ctx)) {
    nsalloc_lua_context_delete(ctx);
    return NULL;
  }
  ctx->previous = lua_getallocf(L, &ctx->previous_ud);
  /* lua_close frees the main block (the main thread's, which starts with its
   * extra space) last, as on a state created on nsalloc: the heap then goes,
   * and the block itself back to the previous allocator (lua_alloc.c). */
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  ctx->main_block = lua_getextraspace(lua_tothread(L, -1));
  lua_pop(L, 1);
  /* The blocks allocated before are earlier blocks (context.h): the count
   * starts at Lua's own, and freeing them never takes it below zero. */
  context_count_from(ctx, L);
  nsalloc_set_foreign_policy(NSALLOC_POLICY_FORWARD, &hooks);
  lua_setallocf(L, lua_alloc_adopted, ctx);
  return ctx;
}
