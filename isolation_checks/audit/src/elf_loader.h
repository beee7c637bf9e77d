/*
 * elf_loader.h - the loader's view of an ELF file: what the dynamic linker
 * reads through the program headers (PT_DYNAMIC and the tables its entries
 * point at, PT_TLS, PT_INTERP), never the section headers, which the loader
 * ignores and which a truncated download, sstrip or a packer may cut or drop.
 */
#ifndef AUDIT_ELF_LOADER_H
#define AUDIT_ELF_LOADER_H

#include "artifact.h"
#include "elf_read.h"

/* Adds to artifact what the loader would read: program header facts
 * (PT_TLS, PT_INTERP) and, when there is a PT_DYNAMIC segment, the dynamic
 * tags (DT_FLAGS, DT_FLAGS_1, DT_SONAME, DT_NEEDED, DT_RUNPATH/DT_RPATH),
 * the dynamic symbol table (its size from DT_GNU_HASH, DT_HASH or
 * DT_MIPS_SYMTABNO) and the dynamic relocations (DT_RELA, DT_REL). The
 * program header table must fit in the file. Returns NULL, or an error
 * naming what the loader could not read (the caller frees it). *dynamic
 * says whether the file has a PT_DYNAMIC segment. */
char *elf_loader_scan(artifact_t *artifact, const elf_file_t *elf, bool *dynamic);

/* What a symbol means for the audit (shared by the section and loader
 * views). A relocatable object has no dynamic symbols: its global
 * default-visibility definitions are what it would export once linked, so
 * they count as exported. */
void elf_note_symbol(artifact_t *artifact, const char *name, const elf_symbol_t *sym,
                     bool in_dynsym, bool relocatable);

/* Relocation types of initial-exec and local-exec TLS on machine. */
bool elf_is_static_tls_relocation(unsigned machine, unsigned type);

#endif
