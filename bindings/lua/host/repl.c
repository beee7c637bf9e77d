/*
 * repl.c - interactive mode, as lua5.4 runs it (Lua manual §7): each line is
 * first tried as an expression (`return <line>`; a leading '=' means the
 * same), whose values are printed with the global `print`; otherwise as a
 * statement, reading more lines (prompt _PROMPT2) while the chunk is
 * incomplete. The prompts are the globals _PROMPT and _PROMPT2 (any value,
 * converted with __tostring), "> " and ">> " by default. Lines come through
 * GNU readline, with history, as in Debian's lua5.4.
 */
#include "repl.h"

#include "call.h"

#include <lauxlib.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pushes the next line (without its newline); false at end of input. */
static bool push_line(lua_State *L, bool first) {
  if (lua_getglobal(L, first ? "_PROMPT" : "_PROMPT2") == LUA_TNIL)
    lua_pushstring(L, first ? "> " : ">> ");
  else
    luaL_tolstring(L, -1, NULL);
  char *line = readline(lua_tostring(L, -1));
  lua_pop(L, 2);
  if (!line) return false;
  if (line[0] != '\0') add_history(line);
  if (first && line[0] == '=')
    lua_pushfstring(L, "return %s", line + 1);
  else
    lua_pushstring(L, line);
  free(line);
  return true;
}

/* A syntax error at the end of the text: more lines may complete it. */
static bool is_incomplete(lua_State *L, int status) {
  size_t length;
  const char *message = lua_tolstring(L, -1, &length);
  static const char eof[] = "<eof>";
  return status == LUA_ERRSYNTAX && length >= sizeof eof - 1 &&
         strcmp(message + length - (sizeof eof - 1), eof) == 0;
}

/* Leaves the compiled chunk (LUA_OK) or the error message on the stack;
 * returns -1 at end of input. */
static int read_statement(lua_State *L) {
  if (!push_line(L, true)) return -1;
  const char *expression = lua_pushfstring(L, "return %s", lua_tostring(L, -1));
  int status = luaL_loadbuffer(L, expression, strlen(expression), "=stdin");
  lua_remove(L, -2); /* the expression's text */
  if (status == LUA_OK) {
    lua_remove(L, -2); /* the line */
    return LUA_OK;
  }
  lua_pop(L, 1); /* not an expression: a statement, possibly on several lines */
  for (;;) {
    size_t length;
    const char *text = lua_tolstring(L, -1, &length);
    status = luaL_loadbuffer(L, text, length, "=stdin");
    if (!is_incomplete(L, status) || !push_line(L, false)) break;
    lua_remove(L, -2); /* the error: text, new line */
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
  lua_remove(L, -2); /* the text */
  return status;
}

static void print_results(lua_State *L, const char *progname, int base) {
  int n = lua_gettop(L) - base;
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_getglobal(L, "print");
  lua_insert(L, base + 1);
  if (lua_pcall(L, n, 0, 0) != LUA_OK) {
    lua_pushfstring(L, "error calling 'print' (%s)", lua_tostring(L, -1));
    lua_remove(L, -2);
    host_report(L, progname, LUA_ERRRUN);
  }
}

void host_repl(lua_State *L, const char *progname) {
  int base = lua_gettop(L);
  for (int status; (status = read_statement(L)) != -1; lua_settop(L, base)) {
    if (status == LUA_OK) status = host_call(L, 0, LUA_MULTRET);
    if (status == LUA_OK)
      print_results(L, progname, base);
    else
      host_report(L, NULL, status);
  }
  lua_settop(L, base);
  fputc('\n', stdout);
  fflush(stdout);
}
