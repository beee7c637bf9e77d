/*
 * evidence.h - what symbols and bytes say about an artifact, whatever the
 * object format (ELF, PE, Mach-O) they were read from.
 */
#ifndef AUDIT_EVIDENCE_H
#define AUDIT_EVIDENCE_H

#include "artifact.h"

#include <stdbool.h>
#include <stddef.h>

/* One named symbol the artifact defines (defined: in its full symbol table)
 * or exports; tls when it is a thread-local variable; entry_point when an
 * exported name can be the entry point a host VM looks up (PyInit_*, ...). */
void evidence_symbol(artifact_t *artifact, const char *name, bool defined, bool exported, bool tls,
                     bool entry_point);

/* Every family's byte strings and nsalloc identification records in
 * bytes[0..size) (one section, or a whole file without sections). */
void evidence_bytes(artifact_t *artifact, const char *bytes, size_t size);

#endif
