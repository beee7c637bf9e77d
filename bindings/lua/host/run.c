/*
 * run.c - running the command line in a state, in lua5.4's order (Lua manual
 * §7): LUA_INIT_5_4 or LUA_INIT (unless -E), then -e, -l and -W in the order
 * given, then the script with the `arg` table's positive entries as its
 * arguments, then interactive mode (-i). With no script and no -e (or -v) it
 * runs standard input: interactively when that is a terminal.
 */
#include "run.h"

#include "call.h"
#include "repl.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct run_request_s {
  int argc;
  char **argv;
  const host_options_t *options;
} run_request_t;

/* Runs a loaded chunk (or the load error) and reports an error. */
static int run_loaded(lua_State *L, const char *progname, int status) {
  if (status == LUA_OK) status = host_call(L, 0, 0);
  return status == LUA_OK ? LUA_OK : host_report(L, progname, status);
}

/* arg[0] is the script, arg[1..] its arguments, arg[-1..] the interpreter's
 * own arguments down to the program name. Without a script arg[0] is the
 * program name and every argument is positive. */
static void set_arg_table(lua_State *L, const run_request_t *request) {
  int zero = request->options->script;
  lua_createtable(L, request->argc - zero - 1, zero + 1);
  for (int i = 0; i < request->argc; i++) {
    lua_pushstring(L, request->argv[i]);
    lua_rawseti(L, -2, i - zero);
  }
  lua_setglobal(L, "arg");
}

static int run_init(lua_State *L, const char *progname) {
  const char *name = "=LUA_INIT_5_4"; /* the chunk's name: '=' and the variable */
  const char *init = getenv(name + 1);
  if (!init) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (!init) return LUA_OK;
  if (init[0] == '@') return run_loaded(L, progname, luaL_loadfile(L, init + 1));
  return run_loaded(L, progname, luaL_loadbuffer(L, init, strlen(init), name));
}

/* -l mod: global mod = require "mod"; -l g=mod: global g = require "mod". */
static int require_library(lua_State *L, const char *progname, const char *spec) {
  const char *equals = strchr(spec, '=');
  const char *module = equals ? equals + 1 : spec;
  lua_getglobal(L, "require");
  lua_pushstring(L, module);
  int status = host_call(L, 1, 1);
  if (status != LUA_OK) return host_report(L, progname, status);
  lua_pushglobaltable(L);
  lua_pushlstring(L, spec, equals ? (size_t)(equals - spec) : strlen(spec));
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  lua_pop(L, 2);
  return LUA_OK;
}

static int run_options(lua_State *L, const run_request_t *request) {
  char **argv = request->argv;
  const char *progname = argv[0];
  for (int i = 1; i < request->options->option_end; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-' || (arg[1] != 'e' && arg[1] != 'l' && arg[1] != 'W')) continue;
    if (arg[1] == 'W') {
      lua_warning(L, "@on", 0);
      continue;
    }
    const char *value = arg[2] ? arg + 2 : argv[++i];
    int status =
        arg[1] == 'e'
            ? run_loaded(L, progname, luaL_loadbuffer(L, value, strlen(value), "=(command line)"))
            : require_library(L, progname, value);
    if (status != LUA_OK) return status;
  }
  return LUA_OK;
}

static int run_script(lua_State *L, const run_request_t *request) {
  int script = request->options->script;
  const char *name = request->argv[script];
  /* "-" is standard input, unless it follows "--" */
  if (strcmp(name, "-") == 0 && strcmp(request->argv[script - 1], "--") != 0) name = NULL;
  int status = luaL_loadfile(L, name);
  if (status != LUA_OK) return host_report(L, request->argv[0], status);
  if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
  int n = (int)luaL_len(L, -1);
  luaL_checkstack(L, n + 3, "too many arguments to script");
  for (int i = 1; i <= n; i++)
    lua_rawgeti(L, -i, i);
  lua_remove(L, -n - 1);
  status = host_call(L, n, 0);
  return status == LUA_OK ? LUA_OK : host_report(L, request->argv[0], status);
}

static void print_version(void) {
  fputs(LUA_COPYRIGHT "\n", stdout);
  fflush(stdout);
}

/* The protected body: returns a boolean, true when everything ran. */
static int protected_main(lua_State *L) {
  const run_request_t *request = lua_touserdata(L, 1);
  const host_options_t *options = request->options;
  const char *progname = request->argv[0];
  if (options->version) print_version();
  if (options->ignore_env) { /* the package library then ignores LUA_PATH and LUA_CPATH */
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  lua_gc(L, LUA_GCSTOP);
  luaL_openlibs(L);
  set_arg_table(L, request);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  bool ok = (options->ignore_env || run_init(L, progname) == LUA_OK) &&
            run_options(L, request) == LUA_OK &&
            (!options->script || run_script(L, request) == LUA_OK);
  if (ok && options->interactive) {
    host_repl(L, progname);
  } else if (ok && !options->script && !options->has_e && !options->version) {
    if (isatty(STDIN_FILENO)) {
      print_version();
      host_repl(L, progname);
    } else {
      /* As lua5.4 does, an error here is reported but leaves the status
       * alone: standard input run as the implicit script exits 0 (a "-"
       * script is a script, run_script above, and exits 1). */
      run_loaded(L, progname, luaL_loadfile(L, NULL));
    }
  }
  lua_pushboolean(L, ok);
  return 1;
}

bool host_run(lua_State *L, int argc, char **argv, const host_options_t *options) {
  run_request_t request = {argc, argv, options};
  lua_pushcfunction(L, protected_main);
  lua_pushlightuserdata(L, &request);
  int status = lua_pcall(L, 1, 1, 0);
  if (status != LUA_OK) return host_report(L, argv[0], status) == LUA_OK;
  bool ok = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return ok;
}
