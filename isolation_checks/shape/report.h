/*
 * report.h - the one-line human-readable summary of an artifact.
 */
#ifndef ISO_REPORT_H
#define ISO_REPORT_H

#include "elf_facts.h"
#include "rules.h"

void report_header(void);
/* "<file> <kind> prefix=<p> copies=<n> exported=<n> tls=<models> <verdict>" */
void report_artifact(const char *path, const shape_facts *facts, const shape_policy *policy,
                     size_t violation_count);

#endif
