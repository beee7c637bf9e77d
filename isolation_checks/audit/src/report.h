/*
 * report.h - writing the audit as text for people, JSON for machines or
 * SARIF for code-scanning UIs.
 *
 * Both forms carry the same facts: per artifact its type, role, TLS model,
 * allocator families with their evidence and nsalloc copies; then the errors,
 * the set-level findings and the exit status the run ends with.
 */
#ifndef AUDIT_REPORT_H
#define AUDIT_REPORT_H

#include "artifact.h"
#include "baseline.h"
#include "findings.h"

#include <stdio.h>

#define AUDIT_VERSION "0.2.0"
/* The version of the JSON document's shape (schema/report.schema.json):
 * raised whenever a field is removed or changes meaning. */
#define AUDIT_JSON_SCHEMA_VERSION 1

typedef struct report_outcome {
  severity_t fail_on;
  size_t failing_findings;    /* findings at or above fail_on that no baseline accepts */
  size_t accepted_findings;   /* findings a baseline accepts (never failing) */
  const baseline_t *baseline; /* NULL without --baseline or --write-baseline */
  const char *baseline_path;
  int exit_status;
} report_outcome_t;

void report_text(FILE *out, const audit_set_t *set, const findings_t *findings,
                 const report_outcome_t *outcome);
void report_json(FILE *out, const audit_set_t *set, const findings_t *findings,
                 const report_outcome_t *outcome);
/* SARIF 2.1.0, for code-scanning UIs (report_sarif.c says how it maps). */
void report_sarif(FILE *out, const audit_set_t *set, const findings_t *findings,
                  const report_outcome_t *outcome);

/* Writes text with every control character (C0, DEL, C1) and every byte
 * that is not UTF-8 as "\xNN": names from archives and symbol tables are
 * attacker-chosen, and an escape sequence must not reach the terminal. */
void report_text_put(FILE *out, const char *text);
/* "path: message\n", escaped so (the form errors take on standard error). */
void report_text_error(FILE *out, const input_error_t *error);

/* The TLS model line both reports print: "none", "dynamic" or "static". */
const char *report_tls_model(const artifact_t *artifact);

#endif
