/*
 * options.h - the command line of nsalloc-lua: lua5.4's options (Lua manual
 * §7) plus the host's own long options.
 */
#ifndef NSALLOC_LUA_HOST_OPTIONS_H
#define NSALLOC_LUA_HOST_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct host_options_s {
  bool system_alloc; /* --alloc=system: Lua's standard allocator (C malloc) */
  size_t limit;      /* --limit=BYTES; 0: none */
  bool print_stats;  /* --stats */
  bool long_version; /* --version: print the versions and exit */
  bool version;      /* -v (and -i): print Lua's version line first */
  bool interactive;  /* -i: enter interactive mode after the script */
  bool ignore_env;   /* -E: ignore LUA_INIT and the LUA_*PATH variables */
  bool has_e;        /* some -e: standard input is then not run by default */
  int script;        /* argv index of the script ("-": stdin); 0: none */
  int option_end;    /* argv index of the script, or argc: -e/-l/-W run up to here */
} host_options_t;

#define HOST_RUN (-1)

/* Parses argv. Returns HOST_RUN, or the exit status after --help or a usage
 * error (reported on stderr the way lua5.4 reports it). */
int host_parse_options(int argc, char **argv, host_options_t *out);

#endif
