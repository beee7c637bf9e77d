/*
 * main.c - nsalloc-audit: find duplicate and unsafe bundled allocators.
 *
 * Exit status: 0 clean, 1 a finding at or above --fail-on, 2 a usage error or
 * an input that could not be audited (an incomplete audit never passes).
 */
#include "audit.h"
#include "findings.h"
#include "inputs.h"
#include "report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *out) {
  fputs("usage: nsalloc-audit [--json] [--fail-on=low|medium|high] PATH...\n"
        "\n"
        "Audits ELF executables, shared objects, relocatable objects, static archives\n"
        "and zips/wheels (files, directories walked recursively, or glob patterns) for\n"
        "bundled allocators that are unsafe to load into one process together.\n"
        "\n"
        "  --json             print the report as JSON\n"
        "  --fail-on=LEVEL    exit 1 on findings of LEVEL or above (default: medium)\n"
        "  --help, --version\n"
        "\n"
        "Exit status: 0 clean, 1 findings at or above --fail-on, 2 usage or input error.\n",
        out);
}

int main(int argc, char **argv) {
  static const struct option options[] = {
      {"json", no_argument, NULL, 'j'},
      {"fail-on", required_argument, NULL, 'f'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  bool json = false;
  severity_t fail_on = SEVERITY_MEDIUM;
  int option;
  while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
    switch (option) {
    case 'j':
      json = true;
      break;
    case 'f':
      if (!severity_parse(optarg, &fail_on)) {
        fprintf(stderr, "nsalloc-audit: --fail-on takes low, medium or high, not '%s'\n", optarg);
        return 2;
      }
      break;
    case 'h':
      usage(stdout);
      return 0;
    case 'V':
      puts("nsalloc-audit " AUDIT_VERSION);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind == argc) {
    usage(stderr);
    return 2;
  }

  audit_set_t set = {0};
  inputs_t inputs = {.set = &set};
  for (int i = optind; i < argc; i++)
    inputs_audit_argument(&inputs, argv[i]);
  inputs_free(&inputs);
  /* Auditing nothing must not pass: a wrong path or an empty build
   * directory would otherwise turn a CI gate green. */
  if (set.nartifacts == 0 && set.nerrors == 0)
    audit_set_add_error(&set, argv[optind],
                        "no artifact was audited: no ELF file, static archive or zip with ELF "
                        "members was found");

  findings_t findings;
  findings_compute(&set, &findings);
  report_outcome_t outcome = {.fail_on = fail_on};
  for (size_t i = 0; i < findings.len; i++) {
    if (findings.items[i].severity >= fail_on) outcome.failing_findings++;
  }
  outcome.exit_status = set.nerrors ? 2 : outcome.failing_findings ? 1 : 0;
  if (json)
    report_json(stdout, &set, &findings, &outcome);
  else
    report_text(stdout, &set, &findings, &outcome);
  for (size_t i = 0; i < set.nerrors; i++)
    fprintf(stderr, "nsalloc-audit: %s: %s\n", set.errors[i].path, set.errors[i].message);

  findings_free(&findings);
  audit_set_free(&set);
  if (fflush(stdout) != 0) return 2;
  return outcome.exit_status;
}
