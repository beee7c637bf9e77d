/*
 * findings.h - the risks the audit reports, judged over the whole set.
 *
 * The set is taken to be what one process loads together. Two executables
 * never share a process, so a set-level pattern needs at least two loadable
 * modules (shared objects, relocatable objects, archives), or one of them and
 * one executable. The C/C++ runtimes (artifact.system_runtime) are the
 * process allocator itself and never take part in set-level findings.
 */
#ifndef AUDIT_FINDINGS_H
#define AUDIT_FINDINGS_H

#include "artifact.h"

typedef enum severity { SEVERITY_LOW, SEVERITY_MEDIUM, SEVERITY_HIGH } severity_t;

const char *severity_name(severity_t severity);
/* Parses "low", "medium" or "high"; false for anything else. */
bool severity_parse(const char *text, severity_t *out);

typedef struct finding {
  severity_t severity;
  const char *kind;   /* stable identifier, e.g. "duplicate-family" */
  char *message;      /* what was found, naming the artifacts */
  const char *risk;   /* one line: why it matters */
  const char *fix;    /* one line: what to change so the finding goes away */
  const char *family; /* the allocator family concerned, or NULL (static-tls, ...) */
  size_t accepted_by; /* the baseline line accepting it, or 0 */
  size_t *artifacts;  /* indexes into the set, ascending */
  size_t nartifacts;
  size_t discovery; /* position in the order findings were made (keeps sorting stable) */
} finding_t;

typedef struct findings {
  finding_t *items; /* most severe first; within a severity, in kind and artifact order */
  size_t len, cap;
} findings_t;

void findings_compute(const audit_set_t *set, findings_t *out);
void findings_free(findings_t *findings);

#endif
