/*
 * elf_loader.c - the loader's view of an ELF file (see elf_loader.h).
 *
 * Everything here is read by hand through byteview.h, the way ld.so reads
 * it: the PT_DYNAMIC segment's entries, and the tables they point at by
 * virtual address, found through the PT_LOAD segment whose file bytes hold
 * them. Every table must lie inside both that segment and the file; a table
 * that does not is an error naming it, never an empty table.
 */
#include "elf_loader.h"

#include "evidence.h"
#include "util.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#ifndef STB_GNU_UNIQUE
#define STB_GNU_UNIQUE 10
#endif
#ifndef DT_MIPS_SYMTABNO
#define DT_MIPS_SYMTABNO 0x70000011
#endif
#define DYNAMIC_SYMBOLS_MAX (1u << 24)
#define DYNAMIC_ENTRY_MAX   256 /* bytes of one symbol (DT_SYMENT) at most */

void elf_note_symbol(artifact_t *artifact, const char *name, const elf_symbol_t *sym,
                     bool in_dynsym, bool relocatable) {
  int type = ELF64_ST_TYPE(sym->info), bind = ELF64_ST_BIND(sym->info);
  if (type == STT_TLS) artifact->uses_tls = true;
  if (sym->shndx == SHN_UNDEF || name[0] == '\0' || type == STT_SECTION || type == STT_FILE) return;
  int visibility = ELF64_ST_VISIBILITY(sym->other);
  bool global = bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
  bool exported = global && (visibility == STV_DEFAULT || visibility == STV_PROTECTED) &&
                  (in_dynsym || relocatable);
  evidence_symbol(artifact, name, !in_dynsym, exported, type == STT_TLS, exported && in_dynsym);
}

/* In a relocatable object these are the code's own relocations (GOT-relative
 * or direct TP offsets); in a shared object they survive as dynamic TP-offset
 * relocations the loader can only resolve inside the static TLS block. Either
 * way the module needs static TLS, whether or not the linker also set
 * DF_STATIC_TLS (GNU ld does on x86; lld 14 does not on AArch64, PowerPC64 or
 * MIPS). */
bool elf_is_static_tls_relocation(unsigned machine, unsigned type) {
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

/* The dynamic tags the audit follows, by index into dynamic_t.value. */
enum {
  TAG_SYMTAB,
  TAG_STRTAB,
  TAG_STRSZ,
  TAG_SYMENT,
  TAG_HASH,
  TAG_GNU_HASH,
  TAG_MIPS_SYMTABNO,
  TAG_RELA,
  TAG_RELASZ,
  TAG_RELAENT,
  TAG_REL,
  TAG_RELSZ,
  TAG_RELENT,
  TAG_COUNT
};
static const struct {
  int64_t tag;
  const char *name;
} tags[TAG_COUNT] = {
    [TAG_SYMTAB] = {DT_SYMTAB, "DT_SYMTAB"},
    [TAG_STRTAB] = {DT_STRTAB, "DT_STRTAB"},
    [TAG_STRSZ] = {DT_STRSZ, "DT_STRSZ"},
    [TAG_SYMENT] = {DT_SYMENT, "DT_SYMENT"},
    [TAG_HASH] = {DT_HASH, "DT_HASH"},
    [TAG_GNU_HASH] = {DT_GNU_HASH, "DT_GNU_HASH"},
    [TAG_MIPS_SYMTABNO] = {DT_MIPS_SYMTABNO, "DT_MIPS_SYMTABNO"},
    [TAG_RELA] = {DT_RELA, "DT_RELA"},
    [TAG_RELASZ] = {DT_RELASZ, "DT_RELASZ"},
    [TAG_RELAENT] = {DT_RELAENT, "DT_RELAENT"},
    [TAG_REL] = {DT_REL, "DT_REL"},
    [TAG_RELSZ] = {DT_RELSZ, "DT_RELSZ"},
    [TAG_RELENT] = {DT_RELENT, "DT_RELENT"},
};

typedef struct loader_view {
  const elf_file_t *elf;
  const byteview_t *file;
  unsigned word;              /* 4 or 8: the size of an address */
  uint64_t dynamic, ndynamic; /* file offset and entry count of PT_DYNAMIC */
  uint64_t value[TAG_COUNT];
  uint32_t seen;      /* bit t: tags[t] is present */
  byteview_t strings; /* DT_STRTAB[0..DT_STRSZ) */
} loader_view_t;

static bool has_tag(const loader_view_t *view, int tag) {
  return view->seen & (UINT32_C(1) << tag);
}

/* The file offset of [vaddr, vaddr + length), through the PT_LOAD segment
 * whose file bytes hold all of it; false when none does or the file ends
 * first. */
static bool vaddr_to_offset(const loader_view_t *view, uint64_t vaddr, uint64_t length,
                            uint64_t *offset) {
  elf_segment_t segment;
  for (uint64_t i = 0; elf_read_segment(view->elf, i, &segment); i++) {
    if (segment.type != PT_LOAD || vaddr < segment.vaddr) continue;
    uint64_t delta = vaddr - segment.vaddr;
    if (delta >= segment.filesz || length > segment.filesz - delta) continue;
    *offset = segment.offset + delta;
    return *offset >= segment.offset && byteview_has(view->file, *offset, length);
  }
  return false;
}

static char *outside(const char *what, int tag) {
  return xasprintf("truncated or corrupt: the %s (%s) lies outside the loaded segments or past "
                   "the end of the file",
                   what, tags[tag].name);
}

/* Dynamic entry i: its tag and value. */
static bool dynamic_entry(const loader_view_t *view, uint64_t i, uint64_t *tag, uint64_t *value) {
  uint64_t at = view->dynamic + 2 * view->word * i;
  return byteview_uint(view->file, at, view->word, tag) &&
         byteview_uint(view->file, at + view->word, view->word, value);
}

/* 32-bit tags are sign-extended so that DT_MIPS_* and DT_GNU_HASH compare. */
static int64_t signed_tag(const loader_view_t *view, uint64_t tag) {
  return view->word == 4 ? (int64_t)(int32_t)(uint32_t)tag : (int64_t)tag;
}

/* First pass over PT_DYNAMIC: flags, and where each table is. */
static void read_tags(artifact_t *artifact, loader_view_t *view) {
  for (uint64_t i = 0; i < view->ndynamic; i++) {
    uint64_t raw, value;
    dynamic_entry(view, i, &raw, &value); /* in the file: checked by the caller */
    int64_t tag = signed_tag(view, raw);
    if (tag == DT_NULL) break;
    if (tag == DT_FLAGS && (value & DF_STATIC_TLS)) artifact->static_tls = "DF_STATIC_TLS";
    if (tag == DT_FLAGS_1 && (value & DF_1_PIE)) artifact->pie = true;
    for (int t = 0; t < TAG_COUNT; t++) {
      if (tag == tags[t].tag && !has_tag(view, t)) {
        view->value[t] = value;
        view->seen |= UINT32_C(1) << t;
      }
    }
  }
}

static char *dynamic_string(const loader_view_t *view, uint64_t offset, const char *tag,
                            const char **out) {
  *out = byteview_string(&view->strings, offset);
  return *out ? NULL
              : xasprintf("truncated or corrupt: a %s name lies outside the dynamic string "
                          "table (DT_STRTAB)",
                          tag);
}

/* Second pass: the tags whose values are names in DT_STRTAB. */
static char *read_names(artifact_t *artifact, const loader_view_t *view) {
  for (uint64_t i = 0; i < view->ndynamic; i++) {
    uint64_t raw, value;
    dynamic_entry(view, i, &raw, &value);
    int64_t tag = signed_tag(view, raw);
    if (tag == DT_NULL) break;
    const char *which = tag == DT_SONAME    ? "DT_SONAME"
                        : tag == DT_NEEDED  ? "DT_NEEDED"
                        : tag == DT_RUNPATH ? "DT_RUNPATH"
                        : tag == DT_RPATH   ? "DT_RPATH"
                                            : NULL;
    if (!which) continue;
    const char *name;
    char *error = dynamic_string(view, value, which, &name);
    if (error) return error;
    if (tag == DT_SONAME && !artifact->soname) {
      artifact->soname = xstrdup(name);
    } else if (tag == DT_NEEDED && name[0]) {
      nameset_add(&artifact->needed, name);
    } else if (tag == DT_RUNPATH || (tag == DT_RPATH && !artifact->runpath)) {
      /* The loader ignores DT_RPATH when DT_RUNPATH is present. */
      free(artifact->runpath);
      artifact->runpath = xstrdup(name);
    }
  }
  return NULL;
}

/* The number of dynamic symbols, as the loader's symbol lookup bounds it:
 * DT_GNU_HASH's highest chain end, else DT_HASH's nchain, else MIPS's
 * DT_MIPS_SYMTABNO. */
static char *symbol_count(const loader_view_t *view, uint64_t *count) {
  const byteview_t *file = view->file;
  uint64_t at;
  if (has_tag(view, TAG_GNU_HASH)) {
    uint64_t nbuckets, symoffset, bloom_words, highest = 0;
    if (!vaddr_to_offset(view, view->value[TAG_GNU_HASH], 16, &at) ||
        !byteview_uint(file, at, 4, &nbuckets) || !byteview_uint(file, at + 4, 4, &symoffset) ||
        !byteview_uint(file, at + 8, 4, &bloom_words))
      return outside("GNU hash table", TAG_GNU_HASH);
    uint64_t buckets = at + 16 + bloom_words * view->word;
    for (uint64_t b = 0; b < nbuckets; b++) {
      uint64_t bucket;
      if (!byteview_uint(file, buckets + 4 * b, 4, &bucket))
        return outside("GNU hash table", TAG_GNU_HASH);
      if (bucket > highest) highest = bucket;
    }
    if (highest < symoffset) {
      *count = symoffset; /* no hashed symbol: only the unhashed ones */
      return NULL;
    }
    /* The chain holding the highest symbol ends at an odd hash value. */
    uint64_t chain = buckets + 4 * nbuckets, index = highest - symoffset, hash = 0;
    for (; !(hash & 1); index++) {
      if (!byteview_uint(file, chain + 4 * index, 4, &hash))
        return outside("GNU hash table", TAG_GNU_HASH);
    }
    *count = symoffset + index;
    return NULL;
  }
  if (has_tag(view, TAG_HASH)) {
    /* 64-bit s390 and Alpha use 8-byte hash entries, everything else 4. */
    unsigned entry =
        view->word == 8 && (view->elf->machine == EM_S390 || view->elf->machine == EM_ALPHA) ? 8
                                                                                             : 4;
    if (!vaddr_to_offset(view, view->value[TAG_HASH], 2 * entry, &at) ||
        !byteview_uint(file, at + entry, entry, count))
      return outside("hash table", TAG_HASH);
    return NULL;
  }
  if (has_tag(view, TAG_MIPS_SYMTABNO)) {
    *count = view->value[TAG_MIPS_SYMTABNO];
    return NULL;
  }
  return xstrdup("corrupt: the dynamic segment has DT_SYMTAB but no DT_GNU_HASH, DT_HASH or "
                 "DT_MIPS_SYMTABNO, so the number of dynamic symbols is unknown");
}

/* Every dynamic symbol; noted in artifact only when note is true, so a
 * first pass can check every name before any evidence is added. */
static char *walk_symbols(artifact_t *artifact, const loader_view_t *view, bool note) {
  if (!has_tag(view, TAG_SYMTAB)) return NULL;
  uint64_t count = 0, at;
  char *error = symbol_count(view, &count);
  if (error) return error;
  uint64_t minimal_entry = elf_symbol_size(view->elf);
  uint64_t entry = has_tag(view, TAG_SYMENT) ? view->value[TAG_SYMENT] : minimal_entry;
  if (entry < minimal_entry || entry > DYNAMIC_ENTRY_MAX)
    return xasprintf("corrupt: DT_SYMENT is %llu bytes", (unsigned long long)entry);
  if (count > DYNAMIC_SYMBOLS_MAX)
    return xasprintf("corrupt: %llu dynamic symbols (at most %u are read)",
                     (unsigned long long)count, DYNAMIC_SYMBOLS_MAX);
  if (!vaddr_to_offset(view, view->value[TAG_SYMTAB], count * entry, &at))
    return outside("dynamic symbol table", TAG_SYMTAB);
  for (uint64_t i = 0; i < count; i++) {
    elf_symbol_t sym;
    const char *name;
    if (!elf_read_symbol(view->elf, at + i * entry, &sym))
      return outside("dynamic symbol table", TAG_SYMTAB);
    if ((error = dynamic_string(view, sym.name, "dynamic symbol", &name))) return error;
    if (note) elf_note_symbol(artifact, name, &sym, true, false);
  }
  return NULL;
}

/* One relocation table (DT_RELA or DT_REL): any static TLS relocation? */
static char *scan_relocations(artifact_t *artifact, const loader_view_t *view, int table,
                              int size_tag, int entry_tag, bool rela) {
  if (!has_tag(view, table) || artifact->static_tls) return NULL;
  uint64_t size = view->value[size_tag], at, minimal_entry = elf_relocation_size(view->elf, rela);
  uint64_t entry = has_tag(view, entry_tag) ? view->value[entry_tag] : minimal_entry;
  if (entry < minimal_entry)
    return xasprintf("corrupt: %s is %llu bytes", tags[entry_tag].name, (unsigned long long)entry);
  if (!vaddr_to_offset(view, view->value[table], size, &at))
    return outside("relocation table", table);
  for (uint64_t i = 0; i < size / entry; i++) {
    unsigned type = 0;
    elf_read_relocation_type(view->elf, at + i * entry, &type); /* inside the checked table */
    if (elf_is_static_tls_relocation(view->elf->machine, type)) {
      artifact->static_tls = "initial-exec TLS relocations";
      return NULL;
    }
  }
  return NULL;
}

char *elf_loader_scan(artifact_t *artifact, const elf_file_t *elf, bool *dynamic) {
  loader_view_t view = {.elf = elf, .file = &elf->view, .word = elf->word};
  elf_segment_t segment, pt_dynamic = {0};
  *dynamic = false;
  for (uint64_t i = 0; elf_read_segment(elf, i, &segment); i++) {
    if (segment.type == PT_TLS) artifact->uses_tls = true;
    if (segment.type == PT_INTERP) artifact->has_interp = true;
    if (segment.type == PT_DYNAMIC && !*dynamic) {
      pt_dynamic = segment;
      *dynamic = true;
    }
  }
  if (!*dynamic) return NULL;
  if (!byteview_has(view.file, pt_dynamic.offset, pt_dynamic.filesz))
    return xstrdup("truncated or corrupt: the dynamic segment (PT_DYNAMIC) ends past the end of "
                   "the file");
  view.dynamic = pt_dynamic.offset;
  view.ndynamic = pt_dynamic.filesz / (2 * view.word);
  read_tags(artifact, &view);

  uint64_t at;
  if (!has_tag(&view, TAG_STRTAB) || !has_tag(&view, TAG_STRSZ))
    return xstrdup("corrupt: the dynamic segment has no string table (DT_STRTAB, DT_STRSZ)");
  if (!vaddr_to_offset(&view, view.value[TAG_STRTAB], view.value[TAG_STRSZ], &at))
    return outside("dynamic string table", TAG_STRTAB);
  view.strings =
      (byteview_t){view.file->bytes + at, (size_t)view.value[TAG_STRSZ], view.file->big_endian};

  char *error = read_names(artifact, &view);
  if (!error) error = walk_symbols(artifact, &view, false);
  if (!error) error = walk_symbols(artifact, &view, true);
  if (!error) error = scan_relocations(artifact, &view, TAG_RELA, TAG_RELASZ, TAG_RELAENT, true);
  if (!error) error = scan_relocations(artifact, &view, TAG_REL, TAG_RELSZ, TAG_RELENT, false);
  return error;
}
