/*
 * elf_scan.c - reading one ELF file: its header, then the loader's view
 * (elf_loader.c) and the section view, all through elf_read.h.
 *
 * The loader's view is authoritative for everything the dynamic linker
 * uses; the section view adds what only the section headers show (the full
 * symbol table .symtab, thread-local sections, a relocatable object's own
 * relocations) and the bytes of non-code sections for the family strings.
 */
#include "elf_scan.h"

#include "elf_loader.h"
#include "elf_read.h"
#include "evidence.h"
#include "util.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

bool elf_image_is_elf(const void *image, size_t size) {
  return size >= SELFMAG && memcmp(image, ELFMAG, SELFMAG) == 0;
}

static char *scan_symbol_table(artifact_t *artifact, const elf_file_t *elf,
                               const elf_section_t *table) {
  elf_section_t strings_section;
  if (table->link == 0 || table->link >= elf->shnum ||
      !elf_read_section(elf, table->link, &strings_section) ||
      !byteview_has(&elf->view, strings_section.offset, strings_section.size))
    return xstrdup("corrupt: the symbol table's string table (sh_link) is not in the file");
  /* Names are read inside the string table only. */
  byteview_t strings = {elf->view.bytes + strings_section.offset, (size_t)strings_section.size,
                        elf->view.big_endian};
  uint64_t entry = elf_symbol_size(elf);
  for (uint64_t i = 0; i < table->size / entry; i++) {
    elf_symbol_t sym;
    elf_read_symbol(elf, table->offset + i * entry, &sym); /* inside the checked section */
    const char *name = byteview_string(&strings, sym.name);
    if (!name) return xstrdup("corrupt: a symbol's name lies outside its string table");
    elf_note_symbol(artifact, name, &sym, false, elf->type == ET_REL);
  }
  return NULL;
}

/* A relocatable object's own relocations (a loaded file's dynamic ones are
 * read by elf_loader.c). */
static void scan_relocations(artifact_t *artifact, const elf_file_t *elf,
                             const elf_section_t *table) {
  uint64_t entry = elf_relocation_size(elf, table->type == SHT_RELA);
  for (uint64_t i = 0; i < table->size / entry && !artifact->static_tls; i++) {
    unsigned type = 0;
    elf_read_relocation_type(elf, table->offset + i * entry, &type); /* inside the section */
    if (elf_is_static_tls_relocation(elf->machine, type))
      artifact->static_tls = "initial-exec TLS relocations";
  }
}

/* The section view; the section headers have been checked. */
static char *scan_sections(artifact_t *artifact, const elf_file_t *elf) {
  char *error = NULL;
  for (uint64_t i = 1; i < elf->shnum && !error; i++) {
    elf_section_t section;
    elf_read_section(elf, i, &section);
    if (section.flags & SHF_TLS) artifact->uses_tls = true;
    if (section.type == SHT_SYMTAB)
      error = scan_symbol_table(artifact, elf, &section);
    else if (elf->type == ET_REL && (section.type == SHT_RELA || section.type == SHT_REL))
      scan_relocations(artifact, elf, &section);
    else if (section.type == SHT_PROGBITS && !(section.flags & SHF_EXECINSTR))
      evidence_bytes(artifact, (const char *)elf->view.bytes + section.offset,
                     (size_t)section.size);
  }
  return error;
}

/* A separate debug file (objcopy --only-keep-debug, /usr/lib/debug): its
 * headers are the program's, but its code and data sections are NOBITS, so
 * nothing the program headers point at is in the file. Code is never NOBITS
 * in a file a process loads. The section headers must have been checked. */
static bool is_debug_only(const elf_file_t *elf) {
  for (uint64_t i = 1; i < elf->shnum; i++) {
    elf_section_t section;
    if (elf_read_section(elf, i, &section) && section.type == SHT_NOBITS &&
        (section.flags & SHF_EXECINSTR))
      return true;
  }
  return false;
}

bool elf_image_is_debug_only(const void *image, size_t size) {
  elf_file_t elf;
  if (!elf_image_is_elf(image, size)) return false;
  char *error = elf_read_header(&elf, image, size);
  free(error);
  return !error && elf.shoff && !elf_section_headers_problem(&elf) && is_debug_only(&elf);
}

/* Both views of one ELF file. Section headers that are cut short or corrupt
 * are set aside when the loader's view exists, and are an error when it
 * does not: then nothing but them would describe the file. */
static char *scan_views(artifact_t *artifact, const elf_file_t *elf) {
  const char *problem = elf->shoff ? elf_section_headers_problem(elf) : NULL;
  if (elf->shoff && !problem && is_debug_only(elf))
    return xstrdup("a separate debug file (its code is NOBITS): no process loads it");
  if (!elf_program_headers_fit(elf))
    return xstrdup("truncated or corrupt: the program header table ends past the end of the file");
  bool dynamic;
  char *error = elf_loader_scan(artifact, elf, &dynamic);
  if (error) return error;
  if (problem && !dynamic)
    return xasprintf("truncated or corrupt: %s, and there is no dynamic segment (PT_DYNAMIC) to "
                     "read instead",
                     problem);
  /* Without usable section headers (removed by sstrip, or cut short) the
   * strings are looked for in the whole file. */
  if (problem || elf->shoff == 0) {
    evidence_bytes(artifact, (const char *)elf->view.bytes, elf->view.size);
    return NULL;
  }
  return scan_sections(artifact, elf);
}

char *elf_scan(artifact_t *artifact, const char *image, size_t size) {
  if (!elf_image_is_elf(image, size)) return xstrdup("not an ELF file");
  elf_file_t elf;
  char *error = elf_read_header(&elf, image, size);
  if (error) return error;
  if (artifact->elf_members++ == 0) {
    artifact->elf_class = elf.word == 8 ? 64 : 32;
    artifact->big_endian = elf.view.big_endian;
    artifact->machine = elf.machine;
    artifact->elf_type = (int)elf.type;
  }
  return scan_views(artifact, &elf);
}
