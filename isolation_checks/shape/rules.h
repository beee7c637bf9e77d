/*
 * rules.h - the build-shape rules, per artifact kind.
 *
 * Rule ids (printed in brackets, matched by --expect-violation):
 *   exported-symbol  a defined symbol outside what the kind may define
 *   exported-tls     a TLS variable other modules can bind to (and share)
 *   allocator-name   an unprefixed allocator name (malloc, mi_*, je_*, ...)
 *   static-tls       DF_STATIC_TLS or static-TLS relocations without opt-in
 *   fixed-tp-offset  code accessing a hard-coded thread-pointer slot
 *   id-missing, id-malformed, id-prefix, id-visibility, tls-mismatch
 *                    the NSALLOC-ID record is absent or contradicts the build
 *   shared-symbol    two artifacts define the same exported name
 */
#ifndef ISO_RULES_H
#define ISO_RULES_H

#include "elf_facts.h"
#include "violations.h"

typedef enum artifact_kind {
  KIND_STATIC,   /* libnsalloc.a: only <prefix>* */
  KIND_SHARED,   /* libnsalloc.so: only <prefix>* */
  KIND_OVERRIDE, /* libnsalloc-override.so: the C allocation names and <prefix>* */
  KIND_MODULE    /* a module embedding a private copy: only its entry points */
} artifact_kind;

typedef struct shape_policy {
  artifact_kind kind;
  const char *prefix;         /* the prefix the artifact's copy was built with */
  const char *const *entries; /* the module's own entry points (KIND_MODULE) */
  size_t entry_count;
  bool allow_static_tls; /* the build explicitly chose initial-exec */
} shape_policy;

const char *artifact_kind_name(artifact_kind kind);
/* Parses "static", "shared", "override" or "module"; false otherwise. */
bool artifact_kind_parse(const char *name, artifact_kind *out);

void shape_check(const shape_facts *facts, const shape_policy *policy, violations *out);

/* Two artifacts must not define a common exported name (for archives: a
 * common global name), except the entry points every test module has. */
void shape_check_disjoint(const shape_facts *a, const shape_facts *b, const char *const *entries,
                          size_t entry_count, violations *out);

#endif
