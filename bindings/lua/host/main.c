/*
 * main.c - nsalloc-lua: a drop-in for lua5.4 (same options, environment,
 * interactive mode and exit statuses) whose state runs on its own nsalloc
 * heap (or, with --alloc=system, on Lua's standard allocator, so that
 * benchmarks compare allocators under the very same host).
 */
#include "options.h"
#include "report.h"
#include "run.h"

#include <lauxlib.h>
#include <stdlib.h>

/* run_on_system and run_on_nsalloc run the command line on a state of their
 * allocator and return the exit status. */
static int run_on_system(int argc, char **argv, const host_options_t *options) {
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "%s: cannot create state: not enough memory\n", argv[0]);
    return 1;
  }
  bool ok = host_run(L, argc, argv, options);
  lua_close(L);
  if (options->print_stats)
    fputs("nsalloc-lua stats: --alloc=system has no per-state statistics\n", stderr);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int run_on_nsalloc(int argc, char **argv, const host_options_t *options) {
  /* Counting costs the allocator a few instructions per call: only --limit
   * and --stats need it from the start (require "nsalloc" starts it). */
  nsalloc_lua_options_t lua_options = {.memory_limit = options->limit,
                                       .untracked = !options->print_stats};
  nsalloc_lua_context_t *ctx = nsalloc_lua_context_new(&lua_options);
  lua_State *L = ctx ? nsalloc_lua_context_newstate(ctx) : NULL;
  if (!L) {
    fprintf(stderr, "%s: cannot create state: not enough memory\n", argv[0]);
    nsalloc_lua_context_delete(ctx);
    return 1;
  }
  bool ok = host_run(L, argc, argv, options);
  nsalloc_lua_stats_t stats;
  if (options->print_stats) {
    nsalloc_lua_context_stats(ctx, &stats);
    host_report_stats(stderr, "at exit", &stats);
  }
  lua_close(L);
  if (options->print_stats) {
    nsalloc_lua_context_stats(ctx, &stats);
    fprintf(stderr, "  after lua_close: in use %zu bytes, heap blocks %zu bytes\n",
            stats.in_use_bytes, stats.heap_bytes);
  }
  nsalloc_lua_context_delete(ctx);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

int main(int argc, char **argv) {
  host_options_t options;
  int status = host_parse_options(argc, argv, &options);
  if (status != HOST_RUN) return status;
  if (options.long_version) {
    printf("nsalloc-lua %s (nsalloc copy %s), %s\n", nsalloc_version(), nsalloc_prefix(),
           LUA_RELEASE);
    return 0;
  }
  return options.system_alloc ? run_on_system(argc, argv, &options)
                              : run_on_nsalloc(argc, argv, &options);
}
