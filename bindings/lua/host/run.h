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

#endif
