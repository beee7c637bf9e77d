/*
 * signatures.h - what each allocator family looks like inside an ELF file.
 *
 * A family is recognised by symbol names (defined in .symtab, or exported in
 * .dynsym) and by byte strings its code carries in read-only data, which are
 * still there after `strip`. nsalloc copies are recognised by their
 * identification record (nsalloc_id.h), interposers by the standard allocator
 * entry points they export (standard_allocator_symbol()).
 */
#ifndef AUDIT_SIGNATURES_H
#define AUDIT_SIGNATURES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum family {
  FAMILY_NSALLOC,
  FAMILY_MIMALLOC,
  FAMILY_JEMALLOC,
  FAMILY_TCMALLOC,
  FAMILY_RPMALLOC,
  FAMILY_SNMALLOC,
  FAMILY_SCUDO,
  FAMILY_HOARD,
  FAMILY_DLMALLOC,
  FAMILY_BOEHM_GC,
  FAMILY_PARTITIONALLOC,
  FAMILY_MUSL_MALLOCNG,
  FAMILY_INTERPOSER,
  FAMILY_COUNT
} family_t;

/* Short lower-case name used in reports ("jemalloc", "tcmalloc", ...). */
const char *family_name(family_t family);

/* The family whose symbol rules match name, or FAMILY_COUNT for none. Never
 * returns FAMILY_NSALLOC or FAMILY_INTERPOSER: those are decided elsewhere. */
family_t family_of_symbol(const char *name);

/* Number of byte-string signatures of a family (at most 32), and each one. */
size_t family_string_count(family_t family);
const char *family_string(family_t family, size_t index);

/* True for malloc, free, calloc, realloc, posix_memalign, aligned_alloc,
 * memalign, valloc and every C++ operator new/delete overload: the names an
 * interposer defines to replace the process allocator. */
bool standard_allocator_symbol(const char *name);

#endif
