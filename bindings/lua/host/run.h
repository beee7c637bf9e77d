/*
 * run.h - running nsalloc-lua's command line in a state.
 */
#ifndef NSALLOC_LUA_HOST_RUN_H
#define NSALLOC_LUA_HOST_RUN_H

#include "options.h"

#include <lua.h>

/* Opens the standard libraries (generational GC, as lua5.4 runs), sets `arg`,
 * runs LUA_INIT, the -e/-l/-W options in order, the script, and interactive
 * mode. Returns false after printing an error to stderr. */
bool host_run(lua_State *L, int argc, char **argv, const host_options_t *options);

/* Calls the function below `nargs` arguments with `nresults` results under a
 * message handler that appends a traceback, and with Ctrl-C (SIGINT) turned
 * into the error "interrupted!". On error the message is left on the stack. */
int host_call(lua_State *L, int nargs, int nresults);

/* Prints the message on top of the stack (after `progname: ` unless NULL) to
 * stderr and pops it. Returns `status`. */
int host_report(lua_State *L, const char *progname, int status);

/* repl.c: the interactive loop, until end of input. */
void host_repl(lua_State *L, const char *progname);

#endif
