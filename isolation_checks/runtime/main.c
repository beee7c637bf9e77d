/*
 * iso-runtime - multi-copy runtime isolation checks.
 *
 *   iso-runtime CHECK [--global] [--threads N] [--ops N] [--preload LIB]
 *               [--expect-violation] MODULE...
 *
 * CHECK is identity, stress (identity first), handoff, incident, unload (the
 * first MODULE is unloaded) or override (--preload names the override
 * library). Modules are loaded RTLD_LOCAL, or RTLD_GLOBAL with --global.
 * The stress's operation count is --ops, else $NSALLOC_STRESS_OPS, else 10
 * million (sanitizer builds scale it down through the environment).
 *
 * Exit status: 0 when no isolation violation was found; with
 * --expect-violation (a negative control run on a deliberately broken
 * build), 0 exactly when at least one was found; 2 on a setup error.
 */
#include "checks.h"
#include "verdict.h"

#include "dl_compat.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_STRESS_OPS 10000000ULL
#define DEFAULT_OTHER_OPS  200000ULL

static void usage(void) {
  fprintf(stderr, "usage: iso-runtime identity|stress|handoff|incident|unload|override "
                  "[--global] [--threads N] [--ops N] [--preload LIB] [--expect-violation] "
                  "MODULE...\n");
  exit(2);
}

static uint64_t parse_count(const char *text) {
  char *end;
  unsigned long long value = strtoull(text, &end, 10);
  if (*end || value == 0) usage();
  return value;
}

static uint64_t default_operations(const char *check) {
  const char *env = getenv("NSALLOC_STRESS_OPS");
  if (strcmp(check, "stress") != 0) return DEFAULT_OTHER_OPS;
  return env ? parse_count(env) : DEFAULT_STRESS_OPS;
}

int main(int argc, char **argv) {
  if (argc < 3) usage();
  const char *check = argv[1];
  iso_options options = {.threads = 8, .operations = default_operations(check)};
  int mode = RTLD_LOCAL;
  bool expect_violation = false;
  char *modules[ISO_MAX_COPIES];
  size_t count = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--global") == 0)
      mode = RTLD_GLOBAL;
    else if (strcmp(argv[i], "--expect-violation") == 0)
      expect_violation = true;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      options.threads = parse_count(argv[++i]);
    else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc)
      options.operations = parse_count(argv[++i]);
    else if (strcmp(argv[i], "--preload") == 0 && i + 1 < argc)
      options.preload = argv[++i];
    else if (argv[i][0] == '-' || count == ISO_MAX_COPIES)
      usage();
    else
      modules[count++] = argv[i];
  }
  if (count == 0) usage();

  iso_copies copies;
#if !defined(_WIN32) /* unload and override fork and preload: POSIX only */
  if (strcmp(check, "unload") == 0) {
    check_unload(modules, count, &options);
  } else if (strcmp(check, "override") == 0) {
    if (!options.preload) usage();
    check_override(modules, count, &options, argv);
  } else
#endif
  {
    iso_copies_load(&copies, modules, count, mode);
    printf("%zu copies loaded %s\n", count, mode == RTLD_GLOBAL ? "RTLD_GLOBAL" : "RTLD_LOCAL");
    if (strcmp(check, "identity") == 0 || strcmp(check, "stress") == 0) check_identity(&copies);
    if (strcmp(check, "stress") == 0)
      check_stress(&copies, &options);
    else if (strcmp(check, "handoff") == 0)
      check_handoff(&copies);
    else if (strcmp(check, "incident") == 0)
      check_incident(&copies, &options);
    else if (strcmp(check, "identity") != 0)
      usage();
    iso_copies_close(&copies);
  }

  size_t violations = iso_violation_count();
  printf("%s: %zu violation(s)\n", check, violations);
  if (!expect_violation) return violations == 0 ? 0 : 1;
  printf("negative control: %s\n", violations ? "violation detected, as expected"
                                              : "NOT detected: the check has stopped working");
  return violations ? 0 : 1;
}
