/*
 * elf_scan.c - reading one ELF file: its header and program headers, then
 * the loader's view (elf_loader.c) and the section view.
 *
 * libelf (elfutils) reads the header, the program headers and the sections:
 * it translates either byte order and both classes into GElf structures and
 * checks string-table offsets. It offers no loader's view, which
 * elf_loader.c reads by hand through byteview.h.
 */
#include "elf_scan.h"

#include "elf_loader.h"
#include "evidence.h"
#include "util.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

bool elf_image_is_elf(const void *image, size_t size) {
  return size >= SELFMAG && memcmp(image, ELFMAG, SELFMAG) == 0;
}

static void scan_symbol_table(artifact_t *artifact, Elf *elf, const GElf_Ehdr *ehdr,
                              const GElf_Shdr *shdr, Elf_Data *data) {
  bool in_dynsym = shdr->sh_type == SHT_DYNSYM;
  bool relocatable = ehdr->e_type == ET_REL;
  GElf_Sym sym;
  for (int i = 0; gelf_getsym(data, i, &sym); i++) {
    /* elf_strptr checks the offset against the linked string table. */
    const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
    if (name) elf_note_symbol(artifact, name, &sym, in_dynsym, relocatable);
  }
}

/* A relocatable object's own relocations (a shared object's dynamic ones
 * are read by elf_loader.c). */
static void scan_relocations(artifact_t *artifact, const GElf_Ehdr *ehdr, const GElf_Shdr *shdr,
                             Elf_Data *data) {
  if (artifact->static_tls) return; /* already known: skip the table */
  for (int i = 0;; i++) {
    GElf_Rela rela;
    GElf_Rel rel;
    uint64_t info;
    if (shdr->sh_type == SHT_RELA) {
      if (!gelf_getrela(data, i, &rela)) break;
      info = rela.r_info;
    } else {
      if (!gelf_getrel(data, i, &rel)) break;
      info = rel.r_info;
    }
    /* GElf widens 32-bit r_info with ELF64_R_INFO, so GELF_R_TYPE fits both. */
    if (elf_is_static_tls_relocation(ehdr->e_machine, (unsigned)GELF_R_TYPE(info))) {
      artifact->static_tls = "initial-exec TLS relocations";
      return;
    }
  }
}

static char *libelf_error(const char *what) {
  return xasprintf("%s: %s", what, elf_errmsg(-1));
}

/* The section view: what only the section headers show (the full symbol
 * table .symtab, thread-local sections, a relocatable object's relocations)
 * and the bytes of every non-code section for the family strings. */
static char *scan_sections(artifact_t *artifact, Elf *elf, const GElf_Ehdr *ehdr) {
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) return libelf_error("corrupt section header");
    if (shdr.sh_flags & SHF_TLS) artifact->uses_tls = true;
    bool relocations =
        ehdr->e_type == ET_REL && (shdr.sh_type == SHT_RELA || shdr.sh_type == SHT_REL);
    bool wanted = shdr.sh_type == SHT_SYMTAB || relocations ||
                  (shdr.sh_type == SHT_PROGBITS && !(shdr.sh_flags & SHF_EXECINSTR));
    if (!wanted || shdr.sh_size == 0) continue;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data) {
      char *what = xasprintf("section %zu unreadable", elf_ndxscn(scn));
      char *error = libelf_error(what);
      free(what);
      return error;
    }
    if (shdr.sh_type == SHT_SYMTAB)
      scan_symbol_table(artifact, elf, ehdr, &shdr, data);
    else if (relocations)
      scan_relocations(artifact, ehdr, &shdr, data);
    else
      evidence_bytes(artifact, data->d_buf, data->d_size);
  }
  return NULL;
}

/* Whether [offset, offset + count * entry_size) lies inside the file. */
static bool within_file(uint64_t offset, uint64_t count, uint64_t entry_size, size_t size) {
  if (entry_size && count > UINT64_MAX / entry_size) return false;
  uint64_t length = count * entry_size;
  return offset <= size && length <= size - offset;
}

/* NULL when the section headers can be read, else what is wrong with them
 * (a static string). libelf quietly treats a table that lies past the end of
 * an in-memory image as absent, which would make a truncated file look like
 * a stripped one, so the bounds are checked here first. */
static const char *section_headers_problem(Elf *elf, const GElf_Ehdr *ehdr, size_t size) {
  size_t sections;
  if (!within_file(ehdr->e_shoff, ehdr->e_shnum ? ehdr->e_shnum : 1, ehdr->e_shentsize, size))
    return "the section header table ends past the end of the file";
  if (elf_getshdrnum(elf, &sections) != 0 ||
      !within_file(ehdr->e_shoff, sections, ehdr->e_shentsize, size))
    return "the section header table is corrupt";
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) return "a section header is corrupt";
    if (shdr.sh_type != SHT_NOBITS && !within_file(shdr.sh_offset, 1, shdr.sh_size, size))
      return "a section ends past the end of the file";
  }
  return NULL;
}

/* A separate debug file (objcopy --only-keep-debug, /usr/lib/debug): its
 * headers are the program's, but its code and data sections are NOBITS, so
 * nothing the program headers point at is in the file. Code is never NOBITS
 * in a file a process loads. The section headers must have been checked. */
static bool is_debug_only(Elf *elf) {
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_NOBITS && (shdr.sh_flags & SHF_EXECINSTR))
      return true;
  }
  return false;
}

bool elf_image_is_debug_only(char *image, size_t size) {
  if (!elf_image_is_elf(image, size) || elf_version(EV_CURRENT) == EV_NONE) return false;
  Elf *elf = elf_memory(image, size);
  GElf_Ehdr ehdr;
  bool debug_only = elf && gelf_getehdr(elf, &ehdr) && ehdr.e_shoff &&
                    !section_headers_problem(elf, &ehdr, size) && is_debug_only(elf);
  elf_end(elf);
  return debug_only;
}

/* The program headers, read through libelf into *segments (caller frees
 * items); the table must lie inside the file. */
static char *read_segments(Elf *elf, const GElf_Ehdr *ehdr, size_t size, elf_segments_t *segments) {
  size_t count;
  if (elf_getphdrnum(elf, &count) != 0) return libelf_error("corrupt program header table");
  /* libelf counts no program headers, rather than failing, when the table
   * lies past the end of the image: e_phnum is checked too. */
  if (ehdr->e_phoff && (!within_file(ehdr->e_phoff, count, ehdr->e_phentsize, size) ||
                        !within_file(ehdr->e_phoff, ehdr->e_phnum, ehdr->e_phentsize, size)))
    return xstrdup("truncated or corrupt: the program header table ends past the end of the file");
  GElf_Phdr *items = xcalloc(count ? count : 1, sizeof *items);
  for (size_t i = 0; i < count; i++) {
    if (!gelf_getphdr(elf, (int)i, &items[i])) {
      free(items);
      return libelf_error("corrupt program header");
    }
  }
  *segments = (elf_segments_t){items, count};
  return NULL;
}

/* Both views of one ELF file whose header has been read: the loader's
 * (authoritative for everything the dynamic linker uses) and the sections'
 * (for what only they hold). Section headers that are cut short or corrupt
 * are set aside when the loader's view exists, and are an error when it
 * does not: then nothing but them would describe the file. */
static char *scan_views(artifact_t *artifact, Elf *elf, int elf_class, const GElf_Ehdr *ehdr,
                        char *image, size_t size) {
  const char *problem = ehdr->e_shoff ? section_headers_problem(elf, ehdr, size) : NULL;
  if (ehdr->e_shoff && !problem && is_debug_only(elf))
    return xstrdup("a separate debug file (its code is NOBITS): no process loads it");
  elf_segments_t segments;
  char *error = read_segments(elf, ehdr, size, &segments);
  if (error) return error;
  byteview_t file = {(const unsigned char *)image, size, ehdr->e_ident[EI_DATA] == ELFDATA2MSB};
  bool dynamic;
  error = elf_loader_scan(artifact, &file, elf_class, ehdr, &segments, &dynamic);
  free((void *)segments.items);
  if (error) return error;
  if (problem && !dynamic)
    return xasprintf("truncated or corrupt: %s, and there is no dynamic segment (PT_DYNAMIC) to "
                     "read instead",
                     problem);
  /* Without usable section headers (removed by sstrip, or cut short) the
   * strings are looked for in the whole file. */
  if (problem || ehdr->e_shoff == 0) {
    evidence_bytes(artifact, image, size);
    return NULL;
  }
  return scan_sections(artifact, elf, ehdr);
}

char *elf_scan(artifact_t *artifact, char *image, size_t size) {
  static bool libelf_ready; /* elf_version() must be called once before any other call */
  if (!libelf_ready) {
    if (elf_version(EV_CURRENT) == EV_NONE) return libelf_error("libelf unusable");
    libelf_ready = true;
  }
  if (!elf_image_is_elf(image, size)) return xstrdup("not an ELF file");
  Elf *elf = elf_memory(image, size);
  if (!elf) return libelf_error("unreadable ELF file");
  char *error = NULL;
  GElf_Ehdr ehdr;
  int elf_class = gelf_getclass(elf) == ELFCLASS64 ? 64 : 32;
  if (elf_kind(elf) != ELF_K_ELF) {
    error = xstrdup("corrupt ELF header: unknown class, byte order or version");
  } else if (!gelf_getehdr(elf, &ehdr)) {
    error = libelf_error("truncated or corrupt ELF header");
  } else {
    if (artifact->elf_members++ == 0) {
      artifact->elf_class = elf_class;
      artifact->big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
      artifact->machine = ehdr.e_machine;
      artifact->elf_type = ehdr.e_type;
    }
    error = scan_views(artifact, elf, elf_class, &ehdr, image, size);
  }
  elf_end(elf);
  return error;
}
