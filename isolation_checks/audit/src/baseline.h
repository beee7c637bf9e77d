/*
 * baseline.h - accepting known findings and excluding paths.
 *
 * A baseline file lets a CI gate pass on findings a project has reviewed
 * while still failing on new ones. It is plain text, one directive a line,
 * fields separated by blanks, '#' starting a comment line:
 *
 *   accept RULE FAMILY GLOB...   a finding is accepted when its kind is RULE,
 *                                its family is FAMILY ("-" for findings about
 *                                no family, "*" for any) and every artifact
 *                                it names matches one of the GLOBs
 *   exclude GLOB                 paths matching GLOB are not audited
 *
 * Globs are fnmatch(3) patterns without FNM_PATHNAME, so '*' also matches
 * '/' (docs/audit.md has examples). A backslash quotes the
 * next character (a blank, '#', '*', '?', '[' or '\' inside a path).
 */
#ifndef AUDIT_BASELINE_H
#define AUDIT_BASELINE_H

#include "artifact.h"
#include "findings.h"

#include <stdio.h>

typedef struct baseline_entry {
  char *rule;
  char *family; /* "-" or "*" or a family name */
  char **globs;
  size_t nglobs;
  size_t line;     /* in the baseline file */
  size_t accepted; /* findings this entry accepted in this run */
} baseline_entry_t;

typedef struct baseline {
  baseline_entry_t *entries;
  size_t len, cap;
  char **excludes;
  size_t nexcludes, excludes_cap;
} baseline_t;

/* Adds the directives of the file at path. Returns NULL, or an error message
 * (caller frees) naming the line that does not parse. */
char *baseline_load(baseline_t *baseline, const char *path);
void baseline_add_exclude(baseline_t *baseline, const char *glob);
/* Marks every finding an entry accepts (finding.accepted_by). */
void baseline_apply(baseline_t *baseline, const audit_set_t *set, findings_t *findings);
/* Writes a baseline accepting every finding, with the excludes in force.
 * Returns false when the file cannot be written. */
bool baseline_write(const baseline_t *baseline, const audit_set_t *set, const findings_t *findings,
                    FILE *out);
void baseline_free(baseline_t *baseline);

#endif
