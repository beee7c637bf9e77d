/*
 * artifact.h - what the audit learns about one artifact, and the set of them.
 *
 * An artifact is one thing that ends up in a process as a unit: an executable,
 * a shared object, a relocatable object, a static archive (all its members
 * together, since they are linked into one module) or one shared object
 * inside a wheel. Everything kept per artifact is bounded (names.h), so the
 * memory the audit needs does not grow with the size of symbol tables.
 */
#ifndef AUDIT_ARTIFACT_H
#define AUDIT_ARTIFACT_H

#include "names.h"
#include "nsalloc_id.h"
#include "signatures.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum artifact_kind {
  KIND_EXECUTABLE,
  KIND_SHARED_OBJECT,
  KIND_RELOCATABLE,
  KIND_ARCHIVE,
  KIND_OTHER_ELF, /* core files and other ELF types that are never loaded */
} artifact_kind_t;

/* The object format an artifact was read from. Artifacts of different
 * formats never share a process. */
typedef enum object_format { FORMAT_ELF, FORMAT_PE, FORMAT_MACHO } object_format_t;

typedef struct family_evidence {
  uint32_t strings;  /* bit i: family_string(family, i) was found */
  sample_t defined;  /* matching symbols defined in .symtab */
  sample_t exported; /* matching symbols the artifact exports */
} family_evidence_t;

/* One nsalloc copy found through its identification record. */
typedef struct nsalloc_copy {
  nsalloc_id_t id;
  bool defines_malloc; /* <prefix>malloc is in .symtab */
  bool exports_malloc; /* <prefix>malloc is exported */
  bool distribution;   /* the artifact is this copy's own library (shared or static) */
} nsalloc_copy_t;

#define NSALLOC_COPIES_MAX 16

/* One DT_NEEDED entry that brings allocators in, directly or through its
 * own DT_NEEDED entries. */
typedef struct dependency {
  char *name;        /* as DT_NEEDED says: "libjemalloc.so.2" */
  char *path;        /* where it was found: an audited artifact's path or a file */
  uint32_t families; /* bit f: family f is in it or in what it needs */
} dependency_t;

typedef struct artifact {
  char *path;
  artifact_kind_t kind;
  size_t elf_members; /* ELF files aggregated: 1, or the archive's ELF members */
  object_format_t format;
  /* From the first ELF file seen (for an archive, its first ELF member); PE
   * and Mach-O readers fill them in with the ELF equivalents. */
  int elf_class; /* 32 or 64 */
  bool big_endian;
  unsigned machine; /* e_machine (EM_X86_64, ...) */
  char *soname;
  const char *host_vm; /* "Erlang NIF" etc. when it is a VM extension module, else NULL */
  char *host_vm_entry; /* the entry point that says so (the smallest such name) */
  bool system_runtime; /* libc, libstdc++, ...: the process's own allocator */

  bool uses_tls;
  const char *static_tls; /* NULL, or how static TLS was detected */

  family_evidence_t families[FAMILY_COUNT];
  nsalloc_copy_t copies[NSALLOC_COPIES_MAX];
  size_t ncopies;

  sample_t exported_tls;       /* exported thread-local symbols */
  nameset_t allocator_exports; /* exported allocator entry points */
  nameset_t tls_exports;       /* exported thread-locals that are no family's symbols */
  nameset_t malloc_defined;    /* defined symbols ending in "malloc" */
  nameset_t malloc_exported;   /* exported symbols ending in "malloc" */

  nameset_t needed;   /* DT_NEEDED names */
  char *runpath;      /* DT_RUNPATH, else DT_RPATH (colon-separated), or NULL */
  dependency_t *deps; /* DT_NEEDED entries bringing allocators (needed.h) */
  size_t ndeps, deps_cap;
  sample_t unresolved_needed; /* DT_NEEDED names found neither in the set nor on disk */
  char *needed_by;            /* for a library added because another needs it: that artifact */

  /* Resolution state (needed.c): families held or loaded through DT_NEEDED. */
  enum { NEEDED_UNRESOLVED, NEEDED_RESOLVING, NEEDED_RESOLVED } needed_state;
  uint32_t needed_families;

  /* Scan state: ELF kind flags combined over members until artifact_finish(). */
  bool has_interp; /* PT_INTERP */
  bool pie;        /* DF_1_PIE */
  int elf_type;    /* e_type */
} artifact_t;

artifact_t *artifact_new(const char *path);
/* Derives kind, nsalloc copy symbol facts and the interposer family once every
 * ELF file of the artifact has been scanned. */
void artifact_finish(artifact_t *artifact);
void artifact_free(artifact_t *artifact);
bool artifact_has_family(const artifact_t *artifact, family_t family);
/* Bit f set when artifact_has_family(artifact, f). */
uint32_t artifact_families(const artifact_t *artifact);
/* Same machine, class and byte order: the artifacts can share a process. */
bool artifact_same_abi(const artifact_t *a, const artifact_t *b);
/* True for the C library and the C/C++ runtimes, by soname or file name. */
bool artifact_is_system_runtime_name(const char *name);
/* The file name of a path: after the last '/', or after the '!' or '(' that
 * names a member of a zip or an archive. */
const char *artifact_file_name(const char *path);
/* "ELF64 LSB shared object, x86-64" and similar. Caller frees. */
char *artifact_describe(const artifact_t *artifact);
const char *artifact_kind_name(artifact_kind_t kind);

typedef struct input_error {
  char *path;
  char *message;
} input_error_t;

typedef struct audit_set {
  artifact_t **artifacts;
  size_t nartifacts, artifacts_cap;
  input_error_t *errors;
  size_t nerrors, errors_cap;
  size_t skipped_non_elf;   /* files met while walking a directory that hold no ELF */
  size_t skipped_duplicate; /* paths naming a file already audited */
  /* What a directory walk met but could not or would not audit, with the
   * smallest paths of each kind: links to nothing, links that loop (ELOOP),
   * links to directories (never followed, so a walk always ends), and FIFOs,
   * sockets and devices (never opened: a FIFO would block the walk). */
  sample_t dangling_links;
  sample_t link_loops;
  sample_t directory_links;
  sample_t special_files;
  /* Paths the user excluded (--exclude, baseline "exclude" lines): the
   * patterns (borrowed) and what they matched. */
  char *const *excludes;
  size_t nexcludes;
  sample_t excluded;
  /* Limits on the bytes one input's containers may inflate to (container.h;
   * 0: the default). */
  uint64_t max_inflated;
  uint64_t max_ratio;
} audit_set_t;

void audit_set_add_artifact(audit_set_t *set, artifact_t *artifact);
void audit_set_add_error(audit_set_t *set, const char *path, const char *message);
/* True, and counted in set->excluded, when path matches an exclude pattern
 * (fnmatch without FNM_PATHNAME, so '*' also matches '/'). A directory also
 * matches with a trailing '/', so one pattern ending in "/tests/" and '*'
 * skips every tests directory without walking it. */
bool audit_set_excludes(audit_set_t *set, const char *path, bool directory);
void audit_set_free(audit_set_t *set);

#endif
