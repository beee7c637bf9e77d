/*
 * options.c - parsing nsalloc-lua's command line.
 */
#include "options.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: nsalloc-lua [options] [script [args...]]\n"
    "  -e CHUNK         run CHUNK (repeatable; also -eCHUNK)\n"
    "  -W               turn warnings on\n"
    "  --alloc=KIND     nsalloc (default: the state runs on its own nsalloc heap)\n"
    "                   or system (Lua's standard allocator, the C library's malloc)\n"
    "  --limit=BYTES    memory limit of the state, suffix K, M or G allowed (nsalloc only)\n"
    "  --stats          print the state's allocation statistics to stderr at the end\n"
    "  -v, --version    print the versions\n"
    "  -h, --help       print this help\n"
    "  --               stop handling options\n"
    "  -                run standard input as the script\n"
    "With neither a script nor -e, runs standard input.\n";

static int usage_error(const char *what, const char *arg) {
  fprintf(stderr, "nsalloc-lua: %s '%s'\n%s", what, arg, usage);
  return 1;
}

/* "123", "64K", "8M", "1G" -> bytes; false when malformed or zero. */
static bool parse_bytes(const char *text, size_t *out) {
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || end == text) return false;
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k')
    shift = 10;
  else if (*end == 'M' || *end == 'm')
    shift = 20;
  else if (*end == 'G' || *end == 'g')
    shift = 30;
  if (shift) end++;
  if (*end || value == 0 || value > (SIZE_MAX >> shift)) return false;
  *out = (size_t)value << shift;
  return true;
}

static int parse_long_option(const char *arg, host_options_t *out) {
  if (strcmp(arg, "--alloc=nsalloc") == 0)
    out->system_alloc = false;
  else if (strcmp(arg, "--alloc=system") == 0)
    out->system_alloc = true;
  else if (strncmp(arg, "--limit=", 8) == 0) {
    if (!parse_bytes(arg + 8, &out->limit)) return usage_error("bad byte count in", arg);
  } else if (strcmp(arg, "--stats") == 0)
    out->print_stats = true;
  else if (strcmp(arg, "--help") == 0) {
    fputs(usage, stdout);
    return 0;
  } else if (strcmp(arg, "--version") == 0)
    out->show_version = true;
  else
    return usage_error("unknown option", arg);
  return HOST_RUN;
}

int host_parse_options(int argc, char **argv, host_options_t *out) {
  memset(out, 0, sizeof(*out));
  int i = 1;
  for (; i < argc; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-' || strcmp(arg, "-") == 0) break; /* the script */
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    if (strncmp(arg, "-e", 2) == 0) {
      if (arg[2] == '\0' && ++i >= argc) return usage_error("missing chunk after", arg);
      out->has_chunks = true;
    } else if (strcmp(arg, "-W") == 0) {
      out->warnings = true;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "-v") == 0) {
      int status = parse_long_option(arg[1] == 'h' ? "--help" : "--version", out);
      if (status != HOST_RUN) return status;
    } else if (strncmp(arg, "--", 2) == 0) {
      int status = parse_long_option(arg, out);
      if (status != HOST_RUN) return status;
    } else {
      return usage_error("unknown option", arg);
    }
  }
  if (out->limit && out->system_alloc) return usage_error("--limit needs", "--alloc=nsalloc");
  out->option_end = i;
  out->script = i < argc ? i : 0;
  return HOST_RUN;
}
