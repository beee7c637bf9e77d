/*
 * run.h - running nsalloc-lua's command line in a state.
 */
#ifndef NSALLOC_LUA_HOST_RUN_H
#define NSALLOC_LUA_HOST_RUN_H

#include "options.h"

#include <lua.h>

/* Opens the standard libraries, sets `arg`, runs the -e chunks and the script.
 * Returns false after printing the error (with its traceback) to stderr. */
bool host_run(lua_State *L, int argc, char **argv, const host_options_t *options);

#endif
