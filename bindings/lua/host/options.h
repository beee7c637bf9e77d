/*
 * options.h - the command line of nsalloc-lua.
 */
#ifndef NSALLOC_LUA_HOST_OPTIONS_H
#define NSALLOC_LUA_HOST_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct host_options_s {
  bool system_alloc; /* --alloc=system: Lua's standard allocator (C malloc) */
  size_t limit;      /* --limit=BYTES; 0: none */
  bool print_stats;  /* --stats */
  bool warnings;     /* -W */
  bool show_version; /* -v, --version: print versions and exit */
  bool has_chunks;   /* some -e */
  int script;        /* argv index of the script ("-": stdin); 0: none */
  int option_end;    /* argv index after the interpreter's own arguments */
} host_options_t;

#define HOST_RUN (-1)

/* Parses argv. Returns HOST_RUN, or the exit status after --help or a usage
 * error (reported on stderr). */
int host_parse_options(int argc, char **argv, host_options_t *out);

#endif
