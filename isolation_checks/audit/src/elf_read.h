/*
 * elf_read.h - the ELF structures, read by hand through byteview.h: the
 * header, program and section headers, symbols and relocation types, in
 * both classes and both byte orders. Every read says whether it fit in the
 * file; nothing here decides what the structures mean.
 */
#ifndef AUDIT_ELF_READ_H
#define AUDIT_ELF_READ_H

#include "byteview.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct elf_file {
  byteview_t view; /* the whole file */
  unsigned word;   /* the size of an address: 4 (ELFCLASS32) or 8 (ELFCLASS64) */
  unsigned type, machine;
  uint64_t phoff, shoff;
  unsigned phentsize, shentsize;
  uint64_t phnum, shnum; /* PN_XNUM and SHN_UNDEF counts resolved through section 0 */
} elf_file_t;

typedef struct elf_segment {
  uint32_t type;
  uint64_t offset, vaddr, filesz;
} elf_segment_t;

typedef struct elf_section {
  uint32_t type, link;
  uint64_t flags, offset, size;
} elf_section_t;

typedef struct elf_symbol {
  uint32_t name; /* offset in the linked string table */
  unsigned char info, other;
  uint16_t shndx;
} elf_symbol_t;

/* Reads the ELF header of image[0..size). Returns NULL, or an error message
 * (caller frees). The program and section header tables are not checked
 * here: see elf_program_headers_fit() and elf_section_headers_problem(). */
char *elf_read_header(elf_file_t *elf, const void *image, size_t size);

/* Whether the program header table lies inside the file. */
bool elf_program_headers_fit(const elf_file_t *elf);

/* NULL when the section header table and every section's bytes lie inside
 * the file, else what is wrong (a static string). */
const char *elf_section_headers_problem(const elf_file_t *elf);

/* Entry index of the program or section header table (inside the file once
 * checked as above); false when it does not fit. */
bool elf_read_segment(const elf_file_t *elf, uint64_t index, elf_segment_t *out);
bool elf_read_section(const elf_file_t *elf, uint64_t index, elf_section_t *out);

/* The size of one symbol, and the symbol at file offset at. */
uint64_t elf_symbol_size(const elf_file_t *elf);
bool elf_read_symbol(const elf_file_t *elf, uint64_t at, elf_symbol_t *out);

/* The smallest REL (rela false) or RELA entry, and the type of the
 * relocation at file offset at. */
uint64_t elf_relocation_size(const elf_file_t *elf, bool rela);
bool elf_read_relocation_type(const elf_file_t *elf, uint64_t at, unsigned *type);

#endif
