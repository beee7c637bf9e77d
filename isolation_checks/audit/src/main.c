/*
 * main.c - nsalloc-audit: find duplicate and unsafe bundled allocators.
 *
 * Exit status: 0 clean, 1 a finding at or above --fail-on, 2 a usage error or
 * an input that could not be audited (an incomplete audit never passes).
 */
#include "audit.h"
#include "baseline.h"
#include "findings.h"
#include "inputs.h"
#include "needed.h"
#include "process.h"
#include "report.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
  fputs("usage: nsalloc-audit [OPTION...] PATH...\n"
        "       nsalloc-audit [OPTION...] --pid=PID [PATH...]\n"
        "\n"
        "Audits ELF executables, shared objects, relocatable objects, static archives\n"
        "and zips/wheels (files, directories walked recursively, or glob patterns) for\n"
        "bundled allocators that are unsafe to load into one process together.\n"
        "\n"
        "  --json                 print the report as JSON (schema/report.schema.json)\n"
        "  --sarif                print the findings as SARIF 2.1.0\n"
        "  --fail-on=LEVEL        exit 1 on findings of LEVEL or above (default: medium)\n"
        "  --baseline=FILE        accept the findings FILE lists; apply its excludes\n"
        "  --write-baseline=FILE  write every finding (and the excludes) to FILE as a\n"
        "                         baseline, then judge this run by it\n"
        "  --exclude=GLOB         do not audit paths matching GLOB ('*' matches '/')\n"
        "  --max-inflated=SIZE    stop reading an input whose archives inflate to more\n"
        "                         than SIZE bytes (suffix K, M or G; default 4G)\n"
        "  --max-ratio=N          stop reading an archive that inflates to more than N\n"
        "                         times its own size, plus 1M (default 100)\n"
        "  --pid=PID              audit the files mapped into running process PID (Linux),\n"
        "                         deleted ones included; with or instead of PATHs\n"
        "  --help, --version\n"
        "\n"
        "Exit status: 0 clean, 1 findings at or above --fail-on that no baseline\n"
        "accepts, 2 usage or input error (or nothing audited).\n",
        out);
}

/* A count with an optional K, M or G (binary) suffix, at least 1. */
static bool parse_count(const char *text, uint64_t *out) {
  char *end;
  errno = 0;
  uintmax_t value = strtoumax(text, &end, 10);
  unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
  if (shift) end++;
  if (errno || end == text || *end || text[0] == '-' || value == 0 || value > (UINT64_MAX >> shift))
    return false;
  *out = (uint64_t)value << shift;
  return true;
}

/* Writes the baseline and reads it back into *written, so the file is known
 * to parse and to accept every finding; the run is then judged by it.
 * Returns an error message (caller frees) or NULL. */
static char *write_baseline(const char *path, const baseline_t *baseline, const audit_set_t *set,
                            findings_t *findings, baseline_t *written) {
  FILE *out = fopen(path, "w");
  if (!out) return xasprintf("cannot write the baseline: %s", strerror(errno));
  bool complete = baseline_write(baseline, set, findings, out);
  if (fclose(out) != 0 || !complete) return xstrdup("cannot write the baseline");
  char *error = baseline_load(written, path);
  for (size_t i = 0; i < findings->len; i++)
    findings->items[i].accepted_by = 0;
  if (!error) baseline_apply(written, set, findings);
  return error;
}

int main(int argc, char **argv) {
  static const struct option options[] = {
      {"json", no_argument, NULL, 'j'},
      {"sarif", no_argument, NULL, 's'},
      {"fail-on", required_argument, NULL, 'f'},
      {"baseline", required_argument, NULL, 'b'},
      {"write-baseline", required_argument, NULL, 'w'},
      {"exclude", required_argument, NULL, 'x'},
      {"max-inflated", required_argument, NULL, 'I'},
      {"max-ratio", required_argument, NULL, 'R'},
      {"pid", required_argument, NULL, 'p'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  bool json = false, sarif = false;
  severity_t fail_on = SEVERITY_MEDIUM;
  const char *baseline_path = NULL, *write_path = NULL;
  baseline_t baseline = {0}, written = {0};
  uint64_t max_inflated = 0, max_ratio = 0, pid = 0;
  int option, status = 2;
  while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
    switch (option) {
    case 'j':
      json = true;
      break;
    case 's':
      sarif = true;
      break;
    case 'f':
      if (!severity_parse(optarg, &fail_on)) {
        fprintf(stderr, "nsalloc-audit: --fail-on takes low, medium or high, not '%s'\n", optarg);
        goto out;
      }
      break;
    case 'b':
      baseline_path = optarg;
      break;
    case 'w':
      write_path = optarg;
      break;
    case 'x':
      baseline_add_exclude(&baseline, optarg);
      break;
    case 'I':
    case 'R':
    case 'p':
      if (!parse_count(optarg, option == 'I'   ? &max_inflated
                               : option == 'R' ? &max_ratio
                                               : &pid) ||
          (option == 'p' && pid > INT32_MAX)) {
        fprintf(stderr, "nsalloc-audit: --%s takes a positive %s, not '%s'\n",
                option == 'I'   ? "max-inflated"
                : option == 'R' ? "max-ratio"
                                : "pid",
                option == 'p' ? "process id" : "count", optarg);
        goto out;
      }
      break;
    case 'h':
      usage(stdout);
      status = 0;
      goto out;
    case 'V':
      puts("nsalloc-audit " AUDIT_VERSION);
      status = 0;
      goto out;
    default:
      usage(stderr);
      goto out;
    }
  }
  if (json && sarif) {
    fputs("nsalloc-audit: --json and --sarif are two formats of one report: choose one\n", stderr);
    goto out;
  }
  if (optind == argc && !pid) {
    usage(stderr);
    goto out;
  }
  if (baseline_path) {
    /* A baseline that cannot be read would silently accept nothing or
     * everything: it is a usage error, before anything is audited. */
    char *error = baseline_load(&baseline, baseline_path);
    if (error) {
      fprintf(stderr, "nsalloc-audit: %s: %s\n", baseline_path, error);
      free(error);
      goto out;
    }
  }

  audit_set_t set = {.excludes = baseline.excludes,
                     .nexcludes = baseline.nexcludes,
                     .max_inflated = max_inflated,
                     .max_ratio = max_ratio};
  inputs_t inputs = {.set = &set};
  if (pid) process_audit(&inputs, (long)pid);
  for (int i = optind; i < argc; i++)
    inputs_audit_argument(&inputs, argv[i]);
  inputs_free(&inputs);
  /* Auditing nothing must not pass: a wrong path or an empty build
   * directory would otherwise turn a CI gate green. */
  if (set.nartifacts == 0 && set.nerrors == 0)
    audit_set_add_error(&set, optind < argc ? argv[optind] : "--pid",
                        "no artifact was audited: no ELF file, nor an archive, zip or tarball "
                        "with ELF members, was found");
  needed_resolve(&set);

  findings_t findings;
  findings_compute(&set, &findings);
  baseline_apply(&baseline, &set, &findings);
  if (write_path) {
    char *error = write_baseline(write_path, &baseline, &set, &findings, &written);
    if (error) {
      audit_set_add_error(&set, write_path, error);
      free(error);
    }
  }
  report_outcome_t outcome = {.fail_on = fail_on,
                              .baseline = write_path      ? &written
                                          : baseline_path ? &baseline
                                                          : NULL,
                              .baseline_path = write_path ? write_path : baseline_path};
  for (size_t i = 0; i < findings.len; i++) {
    if (findings.items[i].accepted_by)
      outcome.accepted_findings++;
    else if (findings.items[i].severity >= fail_on)
      outcome.failing_findings++;
  }
  outcome.exit_status = set.nerrors ? 2 : outcome.failing_findings ? 1 : 0;
  if (sarif)
    report_sarif(stdout, &set, &findings, &outcome);
  else if (json)
    report_json(stdout, &set, &findings, &outcome);
  else
    report_text(stdout, &set, &findings, &outcome);
  for (size_t i = 0; i < set.nerrors; i++) {
    fputs("nsalloc-audit: ", stderr);
    report_text_error(stderr, &set.errors[i]);
  }

  findings_free(&findings);
  audit_set_free(&set);
  status = fflush(stdout) != 0 ? 2 : outcome.exit_status;
out:
  baseline_free(&baseline);
  baseline_free(&written);
  return status;
}
