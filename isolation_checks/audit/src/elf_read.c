/* elf_read.c - the ELF structures read by hand (see elf_read.h). */
#include "elf_read.h"

#include "util.h"

#include <elf.h>

/* Field offsets that differ between the classes; the rest follow from the
 * address size w: e_phoff is at 24 + w, e_shoff at 24 + 2w, and so on. */
typedef struct elf_layout {
  unsigned header, segment, section, symbol;
  unsigned p_offset, p_vaddr, p_filesz;
  unsigned sh_flags, sh_offset, sh_size, sh_link, sh_info;
  unsigned st_info; /* st_info, st_other, st_shndx follow one another */
} elf_layout_t;

static const elf_layout_t layout32 = {52, 32, 40, 16, 4, 8, 16, 8, 16, 20, 24, 28, 12};
static const elf_layout_t layout64 = {64, 56, 64, 24, 8, 16, 32, 8, 24, 32, 40, 44, 4};

static const elf_layout_t *layout_of(const elf_file_t *elf) {
  return elf->word == 8 ? &layout64 : &layout32;
}

static bool field(const elf_file_t *elf, uint64_t at, unsigned width, uint64_t *out) {
  return byteview_uint(&elf->view, at, width, out);
}

/* Whether count entries of entry_size bytes from offset lie inside the file. */
static bool table_fits(const elf_file_t *elf, uint64_t offset, uint64_t count,
                       uint64_t entry_size) {
  if (entry_size && count > UINT64_MAX / entry_size) return false;
  return byteview_has(&elf->view, offset, count * entry_size);
}

char *elf_read_header(elf_file_t *elf, const void *image, size_t size) {
  const unsigned char *bytes = image;
  if (size < EI_NIDENT || (bytes[EI_CLASS] != ELFCLASS32 && bytes[EI_CLASS] != ELFCLASS64) ||
      (bytes[EI_DATA] != ELFDATA2LSB && bytes[EI_DATA] != ELFDATA2MSB) ||
      bytes[EI_VERSION] != EV_CURRENT)
    return xstrdup("corrupt ELF header: unknown class, byte order or version");
  *elf = (elf_file_t){.view = {bytes, size, bytes[EI_DATA] == ELFDATA2MSB},
                      .word = bytes[EI_CLASS] == ELFCLASS64 ? 8 : 4};
  const elf_layout_t *layout = layout_of(elf);
  unsigned w = elf->word;
  uint64_t type, machine, phentsize, phnum, shentsize, shnum;
  if (!byteview_has(&elf->view, 0, layout->header) || !field(elf, 16, 2, &type) ||
      !field(elf, 18, 2, &machine) || !field(elf, 24 + w, w, &elf->phoff) ||
      !field(elf, 24 + 2 * w, w, &elf->shoff) || !field(elf, 30 + 3 * w, 2, &phentsize) ||
      !field(elf, 32 + 3 * w, 2, &phnum) || !field(elf, 34 + 3 * w, 2, &shentsize) ||
      !field(elf, 36 + 3 * w, 2, &shnum))
    return xstrdup("truncated or corrupt ELF header: it ends past the end of the file");
  elf->type = (unsigned)type, elf->machine = (unsigned)machine;
  elf->phentsize = (unsigned)phentsize, elf->shentsize = (unsigned)shentsize;
  elf->phnum = phnum, elf->shnum = shnum;
  if (elf->phnum && elf->phentsize < layout->segment)
    return xasprintf("corrupt ELF header: program headers of %u bytes", elf->phentsize);
  /* Counts too large for the header live in section 0: e_shnum 0 means
   * its sh_size, e_phnum PN_XNUM its sh_info. Unreadable, they count 1. */
  elf_section_t first;
  bool has_first =
      elf->shoff && elf->shentsize >= layout->section && elf_read_section(elf, 0, &first);
  uint64_t info = 0;
  if (elf->shoff && shnum == 0) elf->shnum = has_first ? first.size : 1;
  if (phnum == PN_XNUM) {
    if (!has_first || !field(elf, elf->shoff + layout->sh_info, 4, &info))
      return xstrdup("truncated or corrupt: e_phnum is PN_XNUM and section 0 is unreadable");
    elf->phnum = info;
  }
  return NULL;
}

bool elf_program_headers_fit(const elf_file_t *elf) {
  return elf->phnum == 0 || table_fits(elf, elf->phoff, elf->phnum, elf->phentsize);
}

const char *elf_section_headers_problem(const elf_file_t *elf) {
  if (elf->shentsize < layout_of(elf)->section)
    return "the section header table is corrupt (entries too small)";
  if (!table_fits(elf, elf->shoff, elf->shnum, elf->shentsize))
    return "the section header table ends past the end of the file";
  for (uint64_t i = 1; i < elf->shnum; i++) {
    elf_section_t section;
    elf_read_section(elf, i, &section); /* inside the table just checked */
    if (section.type != SHT_NOBITS && !byteview_has(&elf->view, section.offset, section.size))
      return "a section ends past the end of the file";
  }
  return NULL;
}

bool elf_read_segment(const elf_file_t *elf, uint64_t index, elf_segment_t *out) {
  const elf_layout_t *layout = layout_of(elf);
  uint64_t at = elf->phoff + index * elf->phentsize, type;
  if (index >= elf->phnum || !field(elf, at, 4, &type) ||
      !field(elf, at + layout->p_offset, elf->word, &out->offset) ||
      !field(elf, at + layout->p_vaddr, elf->word, &out->vaddr) ||
      !field(elf, at + layout->p_filesz, elf->word, &out->filesz))
    return false;
  out->type = (uint32_t)type;
  return true;
}

bool elf_read_section(const elf_file_t *elf, uint64_t index, elf_section_t *out) {
  const elf_layout_t *layout = layout_of(elf);
  uint64_t at = elf->shoff + index * elf->shentsize, type, link;
  if (!field(elf, at + 4, 4, &type) || !field(elf, at + layout->sh_flags, elf->word, &out->flags) ||
      !field(elf, at + layout->sh_offset, elf->word, &out->offset) ||
      !field(elf, at + layout->sh_size, elf->word, &out->size) ||
      !field(elf, at + layout->sh_link, 4, &link))
    return false;
  out->type = (uint32_t)type, out->link = (uint32_t)link;
  return true;
}

uint64_t elf_symbol_size(const elf_file_t *elf) {
  return layout_of(elf)->symbol;
}

bool elf_read_symbol(const elf_file_t *elf, uint64_t at, elf_symbol_t *out) {
  uint64_t name, info, other, shndx;
  uint64_t fields = at + layout_of(elf)->st_info;
  if (!field(elf, at, 4, &name) || !field(elf, fields, 1, &info) ||
      !field(elf, fields + 1, 1, &other) || !field(elf, fields + 2, 2, &shndx))
    return false;
  *out = (elf_symbol_t){(uint32_t)name, (unsigned char)info, (unsigned char)other, (uint16_t)shndx};
  return true;
}

uint64_t elf_relocation_size(const elf_file_t *elf, bool rela) {
  return (rela ? 3u : 2u) * elf->word;
}

bool elf_read_relocation_type(const elf_file_t *elf, uint64_t at, unsigned *type) {
  uint64_t info;
  /* r_info follows r_offset. MIPS64 splits it into r_sym and four one-byte
   * fields in file order, r_type last. */
  if (elf->machine == EM_MIPS && elf->word == 8) {
    if (!field(elf, at + 15, 1, &info)) return false;
  } else {
    if (!field(elf, at + elf->word, elf->word, &info)) return false;
    info = elf->word == 8 ? info & 0xffffffffu : info & 0xffu;
  }
  *type = (unsigned)info;
  return true;
}
