/*
 * nsalloc_lua.h - run Lua 5.4 states on nsalloc: a lua_Alloc whose `ud` is a
 * per-state context holding a first-class heap (no thread-local lookup on any
 * allocation), memory and allocation-count limits, and per-state statistics.
 *
 * Like nsalloc.h, every name below is mapped onto the build's prefix, so the
 * binding compiles into any private copy. A context made by one copy can be
 * inspected through the API of another (the Lua module `nsalloc` does exactly
 * that): contexts carry a magic, a layout version and the functions of the
 * copy that made them.
 *
 * Threads: a state and its context are used by one thread at a time; they may
 * move between threads (hand them over with the usual synchronisation).
 */
#ifndef NSALLOC_LUA_H
#define NSALLOC_LUA_H

#include "nsalloc.h"

#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Visibility. Like the core, the binding is private to the module that
 * compiles it: its own files (context.h defines NSALLOC_LUA_BUILDING) define
 * these functions hidden however they are built (a plain `cc -shared`, a
 * LuaRocks builtin rockspec), so a Lua module bundling it exports only its
 * luaopen_ function; NSALLOC_EXPORTS (a shared library meant to serve
 * others) exports them. Code that merely calls them uses the core's rule. */
#if defined(NSALLOC_LUA_BUILDING) && !defined(NSALLOC_EXPORTS) && !defined(_WIN32)
#define NSALLOC_LUA_API __attribute__((visibility("hidden")))
#else
#define NSALLOC_LUA_API NSALLOC_API
#endif

#define nsalloc_lua_alloc                   NSALLOC_NAME(lua_alloc)
#define nsalloc_lua_context_new             NSALLOC_NAME(lua_context_new)
#define nsalloc_lua_context_delete          NSALLOC_NAME(lua_context_delete)
#define nsalloc_lua_context_newstate        NSALLOC_NAME(lua_context_newstate)
#define nsalloc_lua_context_stats           NSALLOC_NAME(lua_context_stats)
#define nsalloc_lua_context_set_limit       NSALLOC_NAME(lua_context_set_limit)
#define nsalloc_lua_context_set_alloc_limit NSALLOC_NAME(lua_context_set_alloc_limit)
#define nsalloc_lua_context_of              NSALLOC_NAME(lua_context_of)
#define nsalloc_lua_newstate                NSALLOC_NAME(lua_newstate)
#define nsalloc_lua_adopt                   NSALLOC_NAME(lua_adopt)
#define nsalloc_lua_track                   NSALLOC_NAME(lua_track)
#define nsalloc_lua_type_name               NSALLOC_NAME(lua_type_name)

typedef struct nsalloc_lua_context_s nsalloc_lua_context_t;

/* Which limit refused a request. */
typedef enum nsalloc_lua_limit_kind_e {
  NSALLOC_LUA_LIMIT_MEMORY = 0, /* in_use_bytes would exceed limit_bytes */
  NSALLOC_LUA_LIMIT_ALLOCATIONS /* allocations would exceed allocation_limit */
} nsalloc_lua_limit_kind_t;

typedef struct nsalloc_lua_limit_event_s {
  nsalloc_lua_limit_kind_t kind;
  size_t requested;    /* the new size Lua asked for */
  size_t in_use_bytes; /* at the time of the request */
  size_t limit_bytes;
  uint64_t allocations;
  uint64_t allocation_limit;
} nsalloc_lua_limit_event_t;

/* Called (from inside the allocator) each time a limit refuses a request. It
 * must not call the Lua API, raise an error or free Lua objects; it may change
 * the context's limits, and the request is then checked once more against the
 * new limits. Lua retries a refused request once after an emergency
 * collection, so a request that finally fails is usually seen twice. */
typedef void (*nsalloc_lua_limit_fn)(nsalloc_lua_context_t *ctx,
                                     const nsalloc_lua_limit_event_t *event, void *arg);

typedef struct nsalloc_lua_options_s {
  size_t memory_limit;           /* bytes Lua may hold at once (its own count); 0: none */
  uint64_t allocation_limit;     /* blocks the state may allocate over its life; 0: none */
  nsalloc_lua_limit_fn on_limit; /* may be NULL */
  void *on_limit_arg;
  /* No limits and no statistics until nsalloc_lua_track: the state's
   * allocator only calls the heap (the fastest path). Ignored when a limit is
   * given. */
  bool untracked;
} nsalloc_lua_options_t;

/* Object types Lua names when it allocates (the type code it passes as osize
 * with ptr == NULL); OTHER is everything else: prototypes, upvalues, arrays,
 * hash parts, stacks, buffers. */
typedef enum nsalloc_lua_type_e {
  NSALLOC_LUA_TYPE_STRING = 0,
  NSALLOC_LUA_TYPE_TABLE,
  NSALLOC_LUA_TYPE_FUNCTION,
  NSALLOC_LUA_TYPE_USERDATA,
  NSALLOC_LUA_TYPE_THREAD,
  NSALLOC_LUA_TYPE_OTHER,
  NSALLOC_LUA_TYPE_COUNT
} nsalloc_lua_type_t;

typedef struct nsalloc_lua_stats_s {
  size_t in_use_bytes;       /* bytes Lua holds, as Lua counts them (requested sizes) */
  size_t peak_bytes;         /* high-water mark of in_use_bytes */
  size_t limit_bytes;        /* 0: no limit */
  uint64_t allocations;      /* blocks allocated (ptr == NULL requests served) */
  uint64_t allocation_limit; /* 0: no limit */
  uint64_t limit_hits;       /* requests a limit refused */
  size_t heap_bytes;         /* bytes of the heap's live blocks (block granularity) */
  size_t heap_page_bytes;    /* bytes of the heap's pages */
  const char *copy;          /* prefix of the nsalloc copy serving the state */
  bool tracked;              /* false: untracked, only the heap_* figures are counted */
  struct {
    uint64_t count; /* objects of this type allocated over the state's life */
    uint64_t bytes; /* their sizes at allocation */
  } by_type[NSALLOC_LUA_TYPE_COUNT];
} nsalloc_lua_stats_t;

/* The lua_Alloc. `ud` must be a context of this copy. */
NSALLOC_LUA_API void *nsalloc_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* A context for one state (options may be NULL). The caller deletes it after
 * lua_close; lua_close already destroys its heap, leaving the statistics.
 * Deleting a context whose state is still open prints a message naming the
 * state and aborts. */
NSALLOC_LUA_API nsalloc_lua_context_t *
nsalloc_lua_context_new(const nsalloc_lua_options_t *options);
NSALLOC_LUA_API void nsalloc_lua_context_delete(nsalloc_lua_context_t *ctx);
/* A state on `ctx`: lua_newstate plus a panic handler, a warning handler (off
 * until "@on") and the registry entry that lets nsalloc_lua_context_of find
 * the context. One state per context: NULL when `ctx` already has a state (or
 * an adopted one), when its state was closed, and when memory is short. */
NSALLOC_LUA_API lua_State *nsalloc_lua_context_newstate(nsalloc_lua_context_t *ctx);
/* Call from the thread using the state. Works on any copy's context. */
NSALLOC_LUA_API void nsalloc_lua_context_stats(const nsalloc_lua_context_t *ctx,
                                               nsalloc_lua_stats_t *out);
/* Set a limit (0: none); returns the previous one. Lowering the memory limit
 * below what is in use only refuses growth from then on. */
NSALLOC_LUA_API size_t nsalloc_lua_context_set_limit(nsalloc_lua_context_t *ctx, size_t bytes);
NSALLOC_LUA_API uint64_t nsalloc_lua_context_set_alloc_limit(nsalloc_lua_context_t *ctx,
                                                             uint64_t allocations);
/* The context `L` currently allocates through (made by any copy), or NULL
 * when the state does not run on nsalloc. */
NSALLOC_LUA_API nsalloc_lua_context_t *nsalloc_lua_context_of(lua_State *L);

/* Like luaL_newstate, on a context that the state owns: lua_close destroys the
 * heap and frees the context. NULL when out of memory. */
NSALLOC_LUA_API lua_State *nsalloc_lua_newstate(const nsalloc_lua_options_t *options);

/* Move a running state (e.g. from luaL_newstate) onto nsalloc: new blocks come
 * from a fresh context, blocks allocated before are freed and resized through
 * the previous allocator (with their exact old size) via this copy's foreign
 * pointer FORWARD policy, which this call installs for the whole copy. A
 * resized old block moves into the heap. Returns the context (the caller
 * deletes it after lua_close), or NULL when the state already runs on nsalloc
 * or memory is short. Call from the thread using the state, outside any
 * allocation. */
NSALLOC_LUA_API nsalloc_lua_context_t *nsalloc_lua_adopt(lua_State *L,
                                                         const nsalloc_lua_options_t *options);

/* Start counting on an untracked state (options.untracked): from now on its
 * limits apply and its statistics count, starting from Lua's own count of the
 * bytes in use (peak, allocations and by_type count from here). Blocks
 * allocated before are freed against that starting count, never below zero:
 * Lua's count may not cover blocks C code took through lua_getallocf
 * (docs/lua.md, Limits). Same for nsalloc_lua_adopt. Does nothing
 * on a tracked state. Returns false when `L` does not run on nsalloc. Call
 * from the thread using the state, outside any allocation. Works on any
 * copy's context (the Lua module calls it). */
NSALLOC_LUA_API bool nsalloc_lua_track(lua_State *L);

/* "string", "table", "function", "userdata", "thread", "other". */
NSALLOC_LUA_API const char *nsalloc_lua_type_name(nsalloc_lua_type_t type);

#ifdef __cplusplus
}
#endif
#endif /* NSALLOC_LUA_H */
