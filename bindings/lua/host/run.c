/*
 * run.c - running the command line's chunks and script in a state: the
 * standard libraries, the `arg` table, -e chunks in order, then the script
 * with its arguments as `...`. Everything runs in protected mode; an error
 * is printed with its traceback.
 */
#include "run.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

typedef struct run_request_s {
  int argc;
  char **argv;
  const host_options_t *options;
} run_request_t;

/* Message handler: the error as a string, with the traceback appended. */
static int traceback(lua_State *L) {
  const char *message = lua_tostring(L, 1);
  if (!message) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    message = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, message, 1);
  return 1;
}

/* Call the function below `nargs` arguments on the stack under the traceback
 * handler. On error the message stays on the stack. */
static int call_traced(lua_State *L, int nargs) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, 0, base);
  lua_remove(L, base);
  return status;
}

/* arg[0] is the script, arg[1..] its arguments, arg[-1..] the interpreter's
 * own arguments down to the program name. */
static void set_arg_table(lua_State *L, const run_request_t *request) {
  int zero = request->options->script ? request->options->script : request->argc;
  lua_createtable(L, request->argc - zero, zero + 1);
  for (int i = 0; i < request->argc; i++) {
    lua_pushstring(L, request->argv[i]);
    lua_rawseti(L, -2, i - zero);
  }
  lua_setglobal(L, "arg");
}

static int run_chunks(lua_State *L, const run_request_t *request) {
  char **argv = request->argv;
  for (int i = 1; i < request->options->option_end; i++) {
    if (strncmp(argv[i], "-e", 2) != 0) continue;
    const char *chunk = argv[i][2] ? argv[i] + 2 : argv[++i];
    int status = luaL_loadbuffer(L, chunk, strlen(chunk), "=(command line)");
    if (status == LUA_OK) status = call_traced(L, 0);
    if (status != LUA_OK) return status;
  }
  return LUA_OK;
}

static int run_script(lua_State *L, const run_request_t *request) {
  int script = request->options->script;
  const char *name = script ? request->argv[script] : "-";
  int status = luaL_loadfile(L, strcmp(name, "-") == 0 ? NULL : name);
  if (status != LUA_OK) return status;
  int first = script ? script + 1 : request->argc;
  luaL_checkstack(L, request->argc - first, "too many arguments to script");
  for (int i = first; i < request->argc; i++)
    lua_pushstring(L, request->argv[i]);
  return call_traced(L, request->argc - first);
}

/* The protected body; an error goes on with its message (traced where it
 * arose when it came from running a chunk). */
static int protected_main(lua_State *L) {
  const run_request_t *request = lua_touserdata(L, 1);
  luaL_openlibs(L);
  set_arg_table(L, request);
  if (request->options->warnings) lua_warning(L, "@on", 0);
  int status = run_chunks(L, request);
  bool wants_script = request->options->script || !request->options->has_chunks;
  if (status == LUA_OK && wants_script) status = run_script(L, request);
  if (status != LUA_OK) return lua_error(L); /* already traced: pass the message on */
  return 0;
}

bool host_run(lua_State *L, int argc, char **argv, const host_options_t *options) {
  run_request_t request = {argc, argv, options};
  lua_pushcfunction(L, protected_main);
  lua_pushlightuserdata(L, &request);
  if (lua_pcall(L, 1, 0, 0) == LUA_OK) return true;
  const char *message = lua_tostring(L, -1);
  fprintf(stderr, "nsalloc-lua: %s\n", message ? message : "(error object is not a string)");
  fflush(stderr);
  lua_pop(L, 1);
  return false;
}
