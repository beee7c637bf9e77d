/*
 * elf_facts.c - reading an artifact's symbols, TLS model, dynamic flags,
 * hard-coded thread-pointer slots and identification records with libelf.
 */
#include "elf_facts.h"

#include "tls_relocs.h"
#include "tp_scan.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ID_MAGIC     "NSALLOC-ID:1 "
#define ID_MAX_CHARS 256

static void add_symbol(shape_facts *facts, const char *name, bool is_tls, bool is_exported) {
  for (size_t i = 0; i < facts->defined_count; i++)
    if (strcmp(facts->defined[i].name, name) == 0) return;
  facts->defined = realloc(facts->defined, (facts->defined_count + 1) * sizeof *facts->defined);
  if (!facts->defined) abort();
  facts->defined[facts->defined_count++] =
      (shape_symbol){.name = strdup(name), .is_tls = is_tls, .is_exported = is_exported};
}

/* Defined global/weak symbols of a symbol table section. */
static void read_symbols(Elf *elf, Elf_Scn *section, const GElf_Shdr *header, bool dynamic,
                         shape_facts *facts) {
  Elf_Data *data = elf_getdata(section, NULL);
  size_t count = header->sh_entsize ? header->sh_size / header->sh_entsize : 0;
  for (size_t i = 1; data && i < count; i++) {
    GElf_Sym symbol;
    if (!gelf_getsym(data, (int)i, &symbol) || symbol.st_shndx == SHN_UNDEF) continue;
    int bind = GELF_ST_BIND(symbol.st_info);
    if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
    const char *name = elf_strptr(elf, header->sh_link, symbol.st_name);
    if (!name || !*name) continue;
    int visibility = GELF_ST_VISIBILITY(symbol.st_other);
    bool exported = dynamic || visibility == STV_DEFAULT || visibility == STV_PROTECTED;
    add_symbol(facts, name, GELF_ST_TYPE(symbol.st_info) == STT_TLS, exported);
  }
}

static void read_dynamic_flags(Elf_Scn *section, const GElf_Shdr *header, shape_facts *facts) {
  Elf_Data *data = elf_getdata(section, NULL);
  size_t count = header->sh_entsize ? header->sh_size / header->sh_entsize : 0;
  for (size_t i = 0; data && i < count; i++) {
    GElf_Dyn entry;
    if (gelf_getdyn(data, (int)i, &entry) && entry.d_tag == DT_FLAGS &&
        (entry.d_un.d_val & DF_STATIC_TLS))
      facts->static_tls_flag = true;
  }
}

static void read_relocations(Elf_Scn *section, const GElf_Shdr *header, unsigned machine,
                             shape_facts *facts) {
  Elf_Data *data = elf_getdata(section, NULL);
  size_t count = header->sh_entsize ? header->sh_size / header->sh_entsize : 0;
  for (size_t i = 0; data && i < count; i++) {
    GElf_Rela rela;
    GElf_Rel rel;
    uint64_t info;
    if (header->sh_type == SHT_RELA) {
      if (!gelf_getrela(data, (int)i, &rela)) continue;
      info = rela.r_info;
    } else {
      if (!gelf_getrel(data, (int)i, &rel)) continue;
      info = rel.r_info;
    }
    facts->tls_models |= tls_model_of_relocation(machine, (unsigned)GELF_R_TYPE(info));
  }
}

static void find_id_records(const char *bytes, size_t size, shape_facts *facts) {
  const char *at = bytes, *end = bytes + size;
  while ((at = memmem(at, (size_t)(end - at), ID_MAGIC, strlen(ID_MAGIC)))) {
    size_t length = strnlen(at, (size_t)(end - at));
    if (length > ID_MAX_CHARS) length = ID_MAX_CHARS;
    if (facts->id_count < SHAPE_MAX_ID_RECORDS)
      facts->id_records[facts->id_count++] = strndup(at, length);
    at += length;
  }
}

static void read_section_bytes(Elf_Scn *section, const GElf_Shdr *header, unsigned machine,
                               shape_facts *facts) {
  Elf_Data *data = elf_getdata(section, NULL);
  if (!data || !data->d_buf) return;
  if (header->sh_flags & SHF_EXECINSTR) {
    if (machine == EM_X86_64)
      tp_scan_x86_64(data->d_buf, data->d_size, facts->fixed_tp_offsets, SHAPE_MAX_FIXED_OFFSETS,
                     &facts->fixed_tp_count);
  } else {
    find_id_records(data->d_buf, data->d_size, facts);
  }
}

/* One ELF file (or one member of an archive). */
static const char *read_object(Elf *elf, shape_facts *facts) {
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf, &ehdr)) return "not an ELF file";
  facts->is_shared_object |= ehdr.e_type == ET_DYN;
  /* A shared object's interface is its dynamic symbol table; .symtab (if not
   * stripped) also lists hidden symbols that the loader never sees. */
  unsigned symbols = ehdr.e_type == ET_DYN ? SHT_DYNSYM : SHT_SYMTAB;
  for (Elf_Scn *section = NULL; (section = elf_nextscn(elf, section));) {
    GElf_Shdr header;
    if (!gelf_getshdr(section, &header)) continue;
    if (header.sh_type == symbols)
      read_symbols(elf, section, &header, ehdr.e_type == ET_DYN, facts);
    else if (header.sh_type == SHT_DYNAMIC)
      read_dynamic_flags(section, &header, facts);
    else if (header.sh_type == SHT_RELA || header.sh_type == SHT_REL)
      read_relocations(section, &header, ehdr.e_machine, facts);
    else if (header.sh_type == SHT_PROGBITS)
      read_section_bytes(section, &header, ehdr.e_machine, facts);
  }
  return NULL;
}

const char *shape_facts_read(const char *path, shape_facts *out) {
  memset(out, 0, sizeof *out);
  if (elf_version(EV_CURRENT) == EV_NONE) return "libelf initialisation failed";
  int fd = open(path, O_RDONLY);
  if (fd < 0) return "cannot open";
  const char *error = NULL;
  Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
  if (!elf) {
    error = "not an ELF file or archive";
  } else if (elf_kind(elf) == ELF_K_AR) {
    Elf *member;
    while (!error && (member = elf_begin(fd, ELF_C_READ, elf))) {
      if (elf_kind(member) == ELF_K_ELF) error = read_object(member, out);
      elf_next(member);
      elf_end(member);
    }
  } else if (elf_kind(elf) == ELF_K_ELF) {
    error = read_object(elf, out);
  } else {
    error = "not an ELF file or archive";
  }
  elf_end(elf);
  close(fd);
  return error;
}

void shape_facts_free(shape_facts *facts) {
  for (size_t i = 0; i < facts->defined_count; i++)
    free(facts->defined[i].name);
  free(facts->defined);
  for (size_t i = 0; i < facts->id_count; i++)
    free(facts->id_records[i]);
  memset(facts, 0, sizeof *facts);
}

size_t shape_exported_count(const shape_facts *facts) {
  size_t count = 0;
  for (size_t i = 0; i < facts->defined_count; i++)
    count += facts->defined[i].is_exported;
  return count;
}
