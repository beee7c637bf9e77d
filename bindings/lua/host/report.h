/*
 * report.h - nsalloc-lua --stats: a state's allocation statistics as text.
 */
#ifndef NSALLOC_LUA_HOST_REPORT_H
#define NSALLOC_LUA_HOST_REPORT_H

#include "nsalloc_lua.h"

#include <stdio.h>

void host_report_stats(FILE *out, const char *when, const nsalloc_lua_stats_t *stats);

#endif
