/*
 * call.h - calling Lua code and reporting its errors, as lua5.4 does.
 */
#ifndef NSALLOC_LUA_HOST_CALL_H
#define NSALLOC_LUA_HOST_CALL_H

#include <lua.h>

/* Calls the function below `nargs` arguments with `nresults` results under a
 * message handler that appends a traceback, and with Ctrl-C (SIGINT) turned
 * into the error "interrupted!". On error the message is left on the stack. */
int host_call(lua_State *L, int nargs, int nresults);

/* Prints the message on top of the stack (after `progname: ` unless NULL) to
 * stderr and pops it. Returns `status`. */
int host_report(lua_State *L, const char *progname, int status);

#endif
