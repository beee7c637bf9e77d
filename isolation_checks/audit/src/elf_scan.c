/*
 * elf_scan.c - reading one ELF file through libelf.
 *
 * libelf (elfutils) does the parsing: it validates header and section
 * bounds, translates either byte order and both classes into GElf structures,
 * and checks string-table offsets. This file only decides what each symbol,
 * dynamic tag, relocation and string means for the audit.
 */
#include "elf_scan.h"

#include "evidence.h"
#include "util.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#ifndef STB_GNU_UNIQUE
#define STB_GNU_UNIQUE 10
#endif

bool elf_image_is_elf(const void *image, size_t size) {
  return size >= SELFMAG && memcmp(image, ELFMAG, SELFMAG) == 0;
}

/* One symbol of .symtab (in_dynsym false) or .dynsym (true). A relocatable
 * object has no .dynsym: its global default-visibility definitions are what it
 * would export once linked into a shared object, so they count as exported. */
static void scan_symbol(artifact_t *artifact, const char *name, const GElf_Sym *sym, bool in_dynsym,
                        bool relocatable) {
  int type = GELF_ST_TYPE(sym->st_info), bind = GELF_ST_BIND(sym->st_info);
  if (type == STT_TLS) artifact->uses_tls = true;
  if (sym->st_shndx == SHN_UNDEF || name[0] == '\0' || type == STT_SECTION || type == STT_FILE)
    return;
  int visibility = GELF_ST_VISIBILITY(sym->st_other);
  bool global = bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
  bool exported = global && (visibility == STV_DEFAULT || visibility == STV_PROTECTED) &&
                  (in_dynsym || relocatable);
  evidence_symbol(artifact, name, !in_dynsym, exported, type == STT_TLS, exported && in_dynsym);
}

static void scan_symbol_table(artifact_t *artifact, Elf *elf, const GElf_Ehdr *ehdr,
                              const GElf_Shdr *shdr, Elf_Data *data) {
  bool in_dynsym = shdr->sh_type == SHT_DYNSYM;
  bool relocatable = ehdr->e_type == ET_REL;
  GElf_Sym sym;
  for (int i = 0; gelf_getsym(data, i, &sym); i++) {
    /* elf_strptr checks the offset against the linked string table. */
    const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
    if (name) scan_symbol(artifact, name, &sym, in_dynsym, relocatable);
  }
}

/* Relocations of initial-exec and local-exec TLS: code using them reaches its
 * variables at a fixed offset from the thread pointer. In a relocatable
 * object they are the code's own (GOT-relative TP offsets, direct TP
 * offsets); in a shared object they survive as dynamic TP-offset relocations
 * the loader can only resolve inside the static TLS block. Either way the
 * module needs static TLS, whether or not the linker also set DF_STATIC_TLS
 * (GNU ld does on x86; lld 14 does not on AArch64, PowerPC64 or MIPS). */
static bool is_static_tls_relocation(unsigned machine, unsigned type) {
  switch (machine) {
  case EM_X86_64:
    return type == R_X86_64_GOTTPOFF || type == R_X86_64_TPOFF32 || type == R_X86_64_TPOFF64;
  case EM_386:
    return type == R_386_TLS_IE || type == R_386_TLS_GOTIE || type == R_386_TLS_LE ||
           type == R_386_TLS_IE_32 || type == R_386_TLS_LE_32 || type == R_386_TLS_TPOFF ||
           type == R_386_TLS_TPOFF32;
  case EM_AARCH64:
    return (type >= R_AARCH64_TLSIE_MOVW_GOTTPREL_G1 &&
            type <= R_AARCH64_TLSIE_LD_GOTTPREL_PREL19) ||
           (type >= R_AARCH64_TLSLE_MOVW_TPREL_G2 &&
            type <= R_AARCH64_TLSLE_LDST128_TPREL_LO12_NC) ||
           type == R_AARCH64_TLS_TPREL;
  case EM_PPC64:
    return type == R_PPC64_TLS || (type >= R_PPC64_TPREL16 && type <= R_PPC64_TPREL64) ||
           (type >= R_PPC64_GOT_TPREL16_DS && type <= R_PPC64_GOT_TPREL16_HA);
  case EM_MIPS:
    return type >= R_MIPS_TLS_GOTTPREL && type <= R_MIPS_TLS_TPREL_LO16;
  default:
    return false;
  }
}

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
    if (is_static_tls_relocation(ehdr->e_machine, (unsigned)GELF_R_TYPE(info))) {
      if (!artifact->static_tls) artifact->static_tls = "initial-exec TLS relocations";
      return;
    }
  }
}

static void scan_dynamic(artifact_t *artifact, Elf *elf, const GElf_Shdr *shdr, Elf_Data *data) {
  GElf_Dyn dyn;
  for (int i = 0; gelf_getdyn(data, i, &dyn) && dyn.d_tag != DT_NULL; i++) {
    if (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_STATIC_TLS))
      artifact->static_tls = "DF_STATIC_TLS";
    else if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
      artifact->pie = true;
    else if (dyn.d_tag == DT_SONAME && !artifact->soname) {
      const char *soname = elf_strptr(elf, shdr->sh_link, dyn.d_un.d_val);
      if (soname) artifact->soname = xstrdup(soname);
    } else if (dyn.d_tag == DT_NEEDED) {
      const char *needed = elf_strptr(elf, shdr->sh_link, dyn.d_un.d_val);
      if (needed && needed[0]) nameset_add(&artifact->needed, needed);
    } else if (dyn.d_tag == DT_RUNPATH || (dyn.d_tag == DT_RPATH && !artifact->runpath)) {
      /* The loader ignores DT_RPATH when DT_RUNPATH is present. */
      const char *runpath = elf_strptr(elf, shdr->sh_link, dyn.d_un.d_val);
      if (runpath) {
        free(artifact->runpath);
        artifact->runpath = xstrdup(runpath);
      }
    }
  }
}

static char *libelf_error(const char *what) {
  return xasprintf("%s: %s", what, elf_errmsg(-1));
}

static char *scan_program_headers(artifact_t *artifact, Elf *elf) {
  size_t count;
  if (elf_getphdrnum(elf, &count) != 0) return libelf_error("corrupt program header table");
  for (size_t i = 0; i < count; i++) {
    GElf_Phdr phdr;
    if (!gelf_getphdr(elf, (int)i, &phdr)) return libelf_error("corrupt program header");
    if (phdr.p_type == PT_TLS) artifact->uses_tls = true;
    if (phdr.p_type == PT_INTERP) artifact->has_interp = true;
  }
  return NULL;
}

static char *scan_sections(artifact_t *artifact, Elf *elf, const GElf_Ehdr *ehdr) {
  size_t count;
  if (elf_getshdrnum(elf, &count) != 0) return libelf_error("corrupt section header table");
  if (count == 0) {
    /* Section headers removed (e.g. by sstrip): only the raw bytes remain. */
    size_t size;
    char *raw = elf_rawfile(elf, &size);
    if (raw) evidence_bytes(artifact, raw, size);
    return NULL;
  }
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) return libelf_error("corrupt section header");
    if (shdr.sh_flags & SHF_TLS) artifact->uses_tls = true;
    bool wanted = shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM ||
                  shdr.sh_type == SHT_DYNAMIC ||
                  (shdr.sh_type == SHT_PROGBITS && !(shdr.sh_flags & SHF_EXECINSTR)) ||
                  shdr.sh_type == SHT_RELA || shdr.sh_type == SHT_REL;
    if (!wanted || shdr.sh_size == 0) continue;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data) {
      char *what = xasprintf("section %zu unreadable", elf_ndxscn(scn));
      char *error = libelf_error(what);
      free(what);
      return error;
    }
    switch (shdr.sh_type) {
    case SHT_SYMTAB:
    case SHT_DYNSYM:
      scan_symbol_table(artifact, elf, ehdr, &shdr, data);
      break;
    case SHT_DYNAMIC:
      scan_dynamic(artifact, elf, &shdr, data);
      break;
    case SHT_PROGBITS:
      evidence_bytes(artifact, data->d_buf, data->d_size);
      break;
    default:
      scan_relocations(artifact, ehdr, &shdr, data);
      break;
    }
  }
  return NULL;
}

/* Whether [offset, offset + count * entry_size) lies inside the file. */
static bool within_file(uint64_t offset, uint64_t count, uint64_t entry_size, size_t size) {
  if (entry_size && count > UINT64_MAX / entry_size) return false;
  uint64_t length = count * entry_size;
  return offset <= size && length <= size - offset;
}

/* libelf quietly treats tables that lie past the end of an in-memory image
 * as absent, which would make a truncated file look like a stripped one. */
static char *check_bounds(Elf *elf, const GElf_Ehdr *ehdr, size_t size) {
  size_t sections, segments;
  if (elf_getshdrnum(elf, &sections) != 0 || elf_getphdrnum(elf, &segments) != 0)
    return libelf_error("corrupt ELF header");
  if (ehdr->e_shoff && !within_file(ehdr->e_shoff, sections, ehdr->e_shentsize, size))
    return xstrdup("truncated or corrupt: the section header table ends past the end of the file");
  if (ehdr->e_phoff && !within_file(ehdr->e_phoff, segments, ehdr->e_phentsize, size))
    return xstrdup("truncated or corrupt: the program header table ends past the end of the file");
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) return libelf_error("corrupt section header");
    if (shdr.sh_type != SHT_NOBITS && !within_file(shdr.sh_offset, 1, shdr.sh_size, size))
      return xasprintf("truncated or corrupt: section %zu ends past the end of the file",
                       elf_ndxscn(scn));
  }
  return NULL;
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
  int elf_class = gelf_getclass(elf);
  if (elf_kind(elf) != ELF_K_ELF) {
    error = xstrdup("corrupt ELF header: unknown class, byte order or version");
    goto out;
  }
  if (!gelf_getehdr(elf, &ehdr)) {
    error = libelf_error("truncated or corrupt ELF header");
    goto out;
  }
  if ((error = check_bounds(elf, &ehdr, size))) goto out;
  if (artifact->elf_members++ == 0) {
    artifact->elf_class = elf_class == ELFCLASS64 ? 64 : 32;
    artifact->big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
    artifact->machine = ehdr.e_machine;
    artifact->elf_type = ehdr.e_type;
  }
  error = scan_program_headers(artifact, elf);
  if (!error) error = scan_sections(artifact, elf, &ehdr);
out:
  elf_end(elf);
  return error;
}
