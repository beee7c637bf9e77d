/*
 * options.c - parsing nsalloc-lua's command line. The short options are
 * lua5.4's, with its rules: each is a whole argument ("-iv" is not "-i -v"),
 * -e and -l take the next argument unless one is attached, "-" runs standard
 * input, "--" ends the options. Long options other than "--" are the host's.
 */
#include "options.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: %s [options] [script [args]]\n"
    "Available options are:\n"
    "  -e stat   execute string 'stat'\n"
    "  -i        enter interactive mode after executing 'script'\n"
    "  -l mod    require library 'mod' into global 'mod'\n"
    "  -l g=mod  require library 'mod' into global 'g'\n"
    "  -v        show version information\n"
    "  -E        ignore environment variables\n"
    "  -W        turn warnings on\n"
    "  --        stop handling options\n"
    "  -         stop handling options and execute stdin\n"
    "nsalloc-lua's own options:\n"
    "  --alloc=KIND    nsalloc (default: the state runs on its own nsalloc heap)\n"
    "                  or system (Lua's standard allocator, the C library's malloc)\n"
    "  --limit=BYTES   memory limit of the state, suffix K, M or G allowed (nsalloc only)\n"
    "  --stats         print the state's allocation statistics to stderr at the end\n"
    "  --version       print the versions of nsalloc and Lua\n"
    "  --help          print this help\n";

static int usage_error(const char *progname, const char *format, const char *arg) {
  fprintf(stderr, "%s: ", progname);
  fprintf(stderr, format, arg);
  fputc('\n', stderr);
  fprintf(stderr, usage, progname);
  return EXIT_FAILURE;
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

static int parse_long_option(const char *progname, const char *arg, host_options_t *out) {
  if (strcmp(arg, "--alloc=nsalloc") == 0)
    out->system_alloc = false;
  else if (strcmp(arg, "--alloc=system") == 0)
    out->system_alloc = true;
  else if (strncmp(arg, "--limit=", 8) == 0) {
    if (!parse_bytes(arg + 8, &out->limit))
      return usage_error(progname, "bad byte count in '%s'", arg);
  } else if (strcmp(arg, "--stats") == 0)
    out->print_stats = true;
  else if (strcmp(arg, "--help") == 0) {
    printf(usage, progname);
    return EXIT_SUCCESS;
  } else if (strcmp(arg, "--version") == 0)
    out->long_version = true;
  else
    return usage_error(progname, "unrecognized option '%s'", arg);
  return HOST_RUN;
}

int host_parse_options(int argc, char **argv, host_options_t *out) {
  const char *progname = argc > 0 ? argv[0] : "nsalloc-lua";
  memset(out, 0, sizeof(*out));
  int i = 1;
  for (; i < argc; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-' || arg[1] == '\0') break; /* the script, or "-": stdin */
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    char option = arg[1];
    if (option == '-') {
      int status = parse_long_option(progname, arg, out);
      if (status != HOST_RUN) return status;
    } else if ((option == 'e' || option == 'l')) {
      out->has_e |= option == 'e';
      /* like lua5.4, an argument starting with '-' is not a chunk */
      if (arg[2] == '\0' && (++i >= argc || argv[i][0] == '-'))
        return usage_error(progname, "'%s' needs argument", arg);
    } else if (arg[2] != '\0') {
      return usage_error(progname, "unrecognized option '%s'", arg);
    } else if (option == 'i') {
      out->interactive = out->version = true;
    } else if (option == 'v') {
      out->version = true;
    } else if (option == 'E') {
      out->ignore_env = true;
    } else if (option != 'W') { /* -W runs in order with -e and -l */
      return usage_error(progname, "unrecognized option '%s'", arg);
    }
  }
  if (out->limit && out->system_alloc)
    return usage_error(progname, "--limit needs --alloc=nsalloc%s", "");
  out->option_end = i;
  out->script = i < argc ? i : 0;
  return HOST_RUN;
}
