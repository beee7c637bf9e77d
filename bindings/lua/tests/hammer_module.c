/*
 * hammer_module.c - a Lua C module that bundles a private copy and keeps byte
 * buffers in it, for the "several copies in one interpreter" tests. The same
 * source is built as several modules (HAMMER_NAME), with different prefixes
 * and with one prefix twice.
 *
 * A buffer's bytes follow a pattern of (seed, index), so any resize that
 * loses or moves content - the incident's realloc that copied 0 bytes - shows
 * in buffer:check(). HAMMER_BROKEN_RESIZE builds the incident's behaviour on
 * purpose: the negative control the tests must catch.
 */
#include "nsalloc.h"

#include <lauxlib.h>
#include <lua.h>
#include <string.h>

#define NAME_STRING_(name) #name
#define NAME_STRING(name)  NAME_STRING_(name)
#define OPEN_NAME_(name)   luaopen_##name
#define OPEN_NAME(name)    OPEN_NAME_(name)
#define BUFFER_TYPE        NAME_STRING(HAMMER_NAME) ".buffer"

typedef struct buffer_s {
  uint8_t *bytes;
  size_t size;
  lua_Integer seed; /* the pattern the bytes follow */
} buffer_t;

static uint8_t pattern(lua_Integer seed, size_t i) {
  return (uint8_t)(i * 131u + (uint64_t)seed * 7u + (i >> 8));
}

static void fill(buffer_t *buffer, size_t from) {
  for (size_t i = from; i < buffer->size; i++)
    buffer->bytes[i] = pattern(buffer->seed, i);
}

static buffer_t *check_buffer(lua_State *L) {
  return luaL_checkudata(L, 1, BUFFER_TYPE);
}

static size_t check_size(lua_State *L, int arg) {
  lua_Integer size = luaL_checkinteger(L, arg);
  luaL_argcheck(L, size > 0, arg, "size must be positive");
  return (size_t)size;
}

static buffer_t *push_buffer(lua_State *L, size_t size, lua_Integer seed) {
  buffer_t *buffer = lua_newuserdatauv(L, sizeof(*buffer), 0);
  buffer->bytes = NULL;
  luaL_setmetatable(L, BUFFER_TYPE);
  buffer->bytes = nsalloc_malloc(size);
  if (!buffer->bytes) luaL_error(L, "%s: out of memory", NAME_STRING(HAMMER_NAME));
  buffer->size = size;
  buffer->seed = seed;
  return buffer;
}

/* m.new(size, seed) -> a buffer of `size` pattern bytes */
static int hammer_new(lua_State *L) {
  size_t size = check_size(L, 1);
  buffer_t *buffer = push_buffer(L, size, luaL_checkinteger(L, 2));
  fill(buffer, 0);
  return 1;
}

/* m.from(string, seed) -> a buffer holding a copy of `string`, whose bytes
 * must follow the pattern of `seed` (buffer:bytes() of a buffer of that seed). */
static int hammer_from(lua_State *L) {
  size_t size;
  const char *bytes = luaL_checklstring(L, 1, &size);
  luaL_argcheck(L, size > 0, 1, "empty string");
  buffer_t *buffer = push_buffer(L, size, luaL_checkinteger(L, 2));
  memcpy(buffer->bytes, bytes, size);
  return 1;
}

#ifdef HAMMER_BROKEN_RESIZE
/* The incident: the new block is zeroed, nothing is copied. */
static uint8_t *resize_bytes(uint8_t *bytes, size_t size) {
  uint8_t *moved = nsalloc_calloc(1, size);
  if (moved) nsalloc_free(bytes);
  return moved;
}
#else
static uint8_t *resize_bytes(uint8_t *bytes, size_t size) {
  return nsalloc_realloc(bytes, size);
}
#endif

/* buffer:resize(size): realloc; the new tail gets the pattern. */
static int buffer_resize(lua_State *L) {
  buffer_t *buffer = check_buffer(L);
  size_t size = check_size(L, 2), old_size = buffer->size;
  uint8_t *bytes = resize_bytes(buffer->bytes, size);
  if (!bytes) return luaL_error(L, "%s: out of memory", NAME_STRING(HAMMER_NAME));
  buffer->bytes = bytes;
  buffer->size = size;
  if (size > old_size) fill(buffer, old_size);
  return 0;
}

/* buffer:check() -> true when every byte follows the pattern and the block
 * is one of this copy's. */
static int buffer_check(lua_State *L) {
  buffer_t *buffer = check_buffer(L);
  bool ok = nsalloc_owns(buffer->bytes) && nsalloc_usable_size(buffer->bytes) >= buffer->size;
  for (size_t i = 0; ok && i < buffer->size; i++)
    ok = buffer->bytes[i] == pattern(buffer->seed, i);
  lua_pushboolean(L, ok);
  return 1;
}

static int buffer_bytes(lua_State *L) {
  buffer_t *buffer = check_buffer(L);
  lua_pushlstring(L, (const char *)buffer->bytes, buffer->size);
  return 1;
}

static int buffer_size(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_buffer(L)->size);
  return 1;
}

static int buffer_gc(lua_State *L) {
  buffer_t *buffer = check_buffer(L);
  nsalloc_free(buffer->bytes);
  buffer->bytes = NULL;
  return 0;
}

/* m.raw_alloc(size) -> light userdata; m.raw_free(p) frees it in THIS copy:
 * handing one copy's block to another copy's free must be caught. */
static int hammer_raw_alloc(lua_State *L) {
  lua_pushlightuserdata(L, nsalloc_malloc(check_size(L, 1)));
  return 1;
}

static int hammer_raw_free(lua_State *L) {
  luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
  nsalloc_free(lua_touserdata(L, 1));
  return 0;
}

/* m.stats() -> {blocks, foreign, invalid} of this copy */
static int hammer_stats(lua_State *L) {
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, (lua_Integer)stats.in_use_blocks);
  lua_setfield(L, -2, "blocks");
  lua_pushinteger(L, (lua_Integer)stats.foreign_pointers);
  lua_setfield(L, -2, "foreign");
  lua_pushinteger(L, (lua_Integer)stats.invalid_pointers);
  lua_setfield(L, -2, "invalid");
  return 1;
}

__attribute__((visibility("default"))) int OPEN_NAME(HAMMER_NAME)(lua_State *L);

int OPEN_NAME(HAMMER_NAME)(lua_State *L) {
  static const luaL_Reg buffer_methods[] = {
      {"resize", buffer_resize},
      {"check", buffer_check},
      {"bytes", buffer_bytes},
      {"size", buffer_size},
      {NULL, NULL},
  };
  static const luaL_Reg functions[] = {
      {"new", hammer_new},           {"from", hammer_from},   {"raw_alloc", hammer_raw_alloc},
      {"raw_free", hammer_raw_free}, {"stats", hammer_stats}, {NULL, NULL},
  };
  luaL_newmetatable(L, BUFFER_TYPE);
  luaL_newlib(L, buffer_methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, buffer_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newlib(L, functions);
  lua_pushstring(L, nsalloc_prefix());
  lua_setfield(L, -2, "copy");
  return 1;
}
