/*
 * call.c - calling Lua code as lua5.4 does: under a message handler that
 * appends a traceback, with Ctrl-C (SIGINT) raising "interrupted!", and
 * reporting errors as `progname: message`.
 */
#include "call.h"

#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>

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

/* Ctrl-C: the signal handler may only set a hook; the hook raises the error at
 * the next instruction the state runs. The handler is reset by the first
 * SIGINT (SA_RESETHAND), so a second one stops a program that runs no Lua
 * code (a long C call) the default way. */
static lua_State *interruptible;

static void interrupt_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

static void on_sigint(int signal_number) {
  (void)signal_number;
  lua_sethook(interruptible, interrupt_hook,
              LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

static void catch_sigint(void (*handler)(int)) {
  struct sigaction action = {.sa_handler = handler, .sa_flags = SA_RESETHAND};
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, NULL);
}

int host_call(lua_State *L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  interruptible = L;
  catch_sigint(on_sigint);
  int status = lua_pcall(L, nargs, nresults, base);
  catch_sigint(SIG_DFL);
  lua_remove(L, base);
  return status;
}

int host_report(lua_State *L, const char *progname, int status) {
  const char *message = lua_tostring(L, -1);
  if (progname) fprintf(stderr, "%s: ", progname);
  fprintf(stderr, "%s\n", message ? message : "(error object is not a string)");
  fflush(stderr);
  lua_pop(L, 1);
  return status;
}
