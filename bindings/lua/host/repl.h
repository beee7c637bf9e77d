/*
 * repl.h - nsalloc-lua's interactive mode.
 */
#ifndef NSALLOC_LUA_HOST_REPL_H
#define NSALLOC_LUA_HOST_REPL_H

#include <lua.h>

/* The interactive loop, until end of input. */
void host_repl(lua_State *L, const char *progname);

#endif
