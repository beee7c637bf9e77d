/*
 * needed.h - allocators a module brings in through DT_NEEDED.
 *
 * An extension linked against libjemalloc.so.2 bundles nothing, yet loading
 * it loads jemalloc. Each DT_NEEDED name of every audited ELF file is looked
 * up the way the loader would, first among the audited artifacts (by soname,
 * then file name: a wheel's vendored .libs, a release's own lib directory),
 * then on this machine: the DT_RUNPATH (or DT_RPATH) directories with $ORIGIN
 * expanded, then the default library directories. Only a library of the
 * same machine, class and byte order counts, as for the loader. The C
 * library and the C/C++ runtimes are the process allocator and are not
 * looked up.
 *
 * A library found on disk that holds an allocator is added to the set (its
 * needed_by names the first artifact needing it), so the set-level findings
 * pair it with the modules that bundle the same allocator; a library several
 * modules need is one artifact, as it is one copy in the process. What a
 * needed library itself needs is followed too, up to NEEDED_DEPTH_MAX
 * levels, and each artifact records the families each DT_NEEDED entry
 * brings (artifact.deps).
 */
#ifndef AUDIT_NEEDED_H
#define AUDIT_NEEDED_H

#include "artifact.h"

#define NEEDED_DEPTH_MAX 8

/* Resolves the DT_NEEDED entries of every artifact in the set. */
void needed_resolve(audit_set_t *set);

#endif
