/*
 * macho_scan.c - reading a Mach-O image (macOS .dylib, .so bundles, .o,
 * executables) and splitting universal ("fat") binaries.
 *
 * What the audit needs: the CPU and file type, the symbol table (LC_SYMTAB:
 * a defined external symbol that is not private-external is exported, as
 * the linker exports it; C names carry a leading '_', dropped here), the
 * install name (LC_ID_DYLIB) and the libraries it loads (LC_LOAD_DYLIB and
 * its weak and re-export forms, by file name), thread-local variables
 * (sections of type S_THREAD_LOCAL_VARIABLES), and the bytes of sections
 * that are not code for the family strings. Every offset is checked against
 * the image (byteview.h).
 */
#include "macho_scan.h"

#include "byteview.h"
#include "evidence.h"
#include "util.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define MH_MAGIC_32              0xfeedfaceu
#define MH_MAGIC_64              0xfeedfacfu
#define FAT_MAGIC                0xcafebabeu
#define FAT_MAGIC_64             0xcafebabfu
#define FAT_ARCHS_MAX            16 /* Java class files share 0xcafebabe: they declare >= 45 */
#define LC_SEGMENT               0x1
#define LC_SYMTAB                0x2
#define LC_LOAD_DYLIB            0xc
#define LC_ID_DYLIB              0xd
#define LC_SEGMENT_64            0x19
#define LC_LOAD_WEAK_DYLIB       0x80000018u
#define LC_REEXPORT_DYLIB        0x8000001fu
#define SECTION_TYPE             0xffu
#define S_ZEROFILL               0x1
#define S_GB_ZEROFILL            0xc
#define S_THREAD_LOCAL_ZEROFILL  0x12
#define S_THREAD_LOCAL_VARIABLES 0x13
#define S_ATTR_PURE_INSTRUCTIONS 0x80000000u
#define N_STAB                   0xe0
#define N_PEXT                   0x10
#define N_TYPE                   0x0e
#define N_EXT                    0x01
#define N_SECT                   0xe
#define SECTIONS_MAX             255 /* n_sect is one byte */
#define SYMBOLS_MAX              (1u << 24)

/* The magic of a single-architecture image in either byte order: 32 or 64,
 * or 0; *big_endian says how the rest of the header reads. */
static int macho_class(const void *image, size_t size, bool *big_endian) {
  byteview_t view = {image, size, false};
  uint64_t magic;
  if (!byteview_uint(&view, 0, 4, &magic)) return 0;
  for (int big = 0; big < 2; big++) {
    view.big_endian = big;
    byteview_uint(&view, 0, 4, &magic);
    if (magic == MH_MAGIC_32 || magic == MH_MAGIC_64) {
      *big_endian = big;
      return magic == MH_MAGIC_64 ? 64 : 32;
    }
  }
  return 0;
}

macho_kind_t macho_kind_of(const void *image, size_t size) {
  bool big_endian;
  if (macho_class(image, size, &big_endian)) return MACHO_SINGLE;
  byteview_t view = {image, size, true};
  uint64_t magic, count;
  if (byteview_uint(&view, 0, 4, &magic) && (magic == FAT_MAGIC || magic == FAT_MAGIC_64) &&
      byteview_uint(&view, 4, 4, &count) && count > 0 && count <= FAT_ARCHS_MAX)
    return MACHO_FAT;
  return MACHO_NONE;
}

static const char *cpu_name(uint64_t cpu) {
  switch (cpu) {
  case 0x01000007:
    return "x86_64";
  case 0x7:
    return "i386";
  case 0x0100000c:
    return "arm64";
  case 0x0200000c:
    return "arm64_32";
  case 0xc:
    return "arm";
  default:
    return NULL;
  }
}

static unsigned elf_machine_of(uint64_t cpu) {
  switch (cpu) {
  case 0x01000007:
    return EM_X86_64;
  case 0x7:
    return EM_386;
  case 0x0100000c:
  case 0x0200000c:
    return EM_AARCH64;
  case 0xc:
    return EM_ARM;
  default:
    return (unsigned)cpu; /* shown as "machine N" */
  }
}

char *macho_each_slice(const void *image, size_t size, macho_slice_fn on_slice, void *ctx) {
  byteview_t view = {image, size, true};
  uint64_t magic = 0, count = 0;
  byteview_uint(&view, 0, 4, &magic);
  byteview_uint(&view, 4, 4, &count);
  bool wide = magic == FAT_MAGIC_64;
  uint64_t entry_size = wide ? 32 : 20;
  for (uint64_t i = 0; i < count; i++) {
    uint64_t at = 8 + i * entry_size, cpu, offset, length;
    if (!byteview_uint(&view, at, 4, &cpu) ||
        !byteview_uint(&view, at + 8, wide ? 8 : 4, &offset) ||
        !byteview_uint(&view, at + (wide ? 16 : 12), wide ? 8 : 4, &length))
      return xstrdup("truncated or corrupt: the universal header ends past the end of the file");
    if (!byteview_has(&view, offset, length))
      return xasprintf("truncated or corrupt: slice %llu ends past the end of the file",
                       (unsigned long long)i);
    const char *name = cpu_name(cpu);
    char *label = name ? xstrdup(name) : xasprintf("cpu%llu", (unsigned long long)cpu);
    on_slice(ctx, label, (const char *)image + offset, (size_t)length);
    free(label);
  }
  return NULL;
}

typedef struct macho_image {
  byteview_t view;
  int bits;
  uint32_t section_type[SECTIONS_MAX + 1]; /* by 1-based section number */
  unsigned nsections;
} macho_image_t;

static char *scan_section(artifact_t *artifact, macho_image_t *m, uint64_t at) {
  /* section_64: addr, size 8 bytes each; section: 4 bytes each. */
  unsigned word = m->bits == 64 ? 8 : 4;
  uint64_t length = 0, offset = 0, flags = 0;
  byteview_uint(&m->view, at + 32 + word, word, &length);
  byteview_uint(&m->view, at + 32 + 2 * word, 4, &offset);
  byteview_uint(&m->view, at + 32 + 2 * word + 16, 4, &flags);
  uint32_t type = (uint32_t)(flags & SECTION_TYPE);
  if (m->nsections < SECTIONS_MAX) m->section_type[++m->nsections] = type;
  if (type == S_THREAD_LOCAL_VARIABLES) artifact->uses_tls = true;
  bool no_file_data =
      type == S_ZEROFILL || type == S_GB_ZEROFILL || type == S_THREAD_LOCAL_ZEROFILL;
  if (no_file_data || (flags & S_ATTR_PURE_INSTRUCTIONS)) return NULL;
  if (!byteview_has(&m->view, offset, length))
    return xasprintf("truncated or corrupt: section %u ends past the end of the file",
                     m->nsections);
  evidence_bytes(artifact, (const char *)m->view.bytes + offset, (size_t)length);
  return NULL;
}

static char *scan_segment(artifact_t *artifact, macho_image_t *m, uint64_t command,
                          uint64_t command_size) {
  uint64_t header = m->bits == 64 ? 72 : 56, section_size = m->bits == 64 ? 80 : 68, count;
  if (!byteview_uint(&m->view, command + header - 8, 4, &count) ||
      header + count * section_size > command_size)
    return xstrdup("truncated or corrupt: a segment's sections do not fit its load command");
  /* dyld maps [fileoff, fileoff + filesize) of every segment: it must be in
   * the file (for __LINKEDIT, this covers the tables that follow it). */
  unsigned word = m->bits == 64 ? 8 : 4;
  uint64_t fileoff = 0, filesize = 0;
  byteview_uint(&m->view, command + 24 + 2 * word, word, &fileoff);
  byteview_uint(&m->view, command + 24 + 3 * word, word, &filesize);
  if (!byteview_has(&m->view, fileoff, filesize))
    return xstrdup("truncated or corrupt: a segment's file data ends past the end of the file");
  char *error = NULL;
  for (uint64_t i = 0; i < count && !error; i++)
    error = scan_section(artifact, m, command + header + i * section_size);
  return error;
}

static char *scan_symtab(artifact_t *artifact, macho_image_t *m, uint64_t command,
                         bool relocatable) {
  uint64_t symoff, nsyms, stroff, strsize;
  if (!byteview_uint(&m->view, command + 8, 4, &symoff) ||
      !byteview_uint(&m->view, command + 12, 4, &nsyms) ||
      !byteview_uint(&m->view, command + 16, 4, &stroff) ||
      !byteview_uint(&m->view, command + 20, 4, &strsize))
    return xstrdup("truncated or corrupt: LC_SYMTAB ends past the end of the file");
  uint64_t entry = m->bits == 64 ? 16 : 12;
  if (nsyms > SYMBOLS_MAX || !byteview_has(&m->view, symoff, nsyms * entry) ||
      !byteview_has(&m->view, stroff, strsize))
    return xstrdup("truncated or corrupt: the symbol table ends past the end of the file");
  /* Names are read inside the string table only. */
  byteview_t strings = {m->view.bytes + stroff, (size_t)strsize, m->view.big_endian};
  for (uint64_t i = 0; i < nsyms; i++) {
    uint64_t at = symoff + i * entry, strx = 0, type = 0, sect = 0;
    byteview_uint(&m->view, at, 4, &strx);
    byteview_uint(&m->view, at + 4, 1, &type);
    byteview_uint(&m->view, at + 5, 1, &sect);
    if ((type & N_STAB) || (type & N_TYPE) != N_SECT) continue; /* debug or undefined */
    const char *name = byteview_string(&strings, strx);
    if (!name || !name[0]) continue;
    if (name[0] == '_') name++; /* the C prefix */
    bool exported = (type & N_EXT) && !(type & N_PEXT);
    bool tls = sect <= m->nsections && m->section_type[sect] == S_THREAD_LOCAL_VARIABLES;
    evidence_symbol(artifact, name, true, exported, tls, exported && !relocatable);
  }
  return NULL;
}

/* The file name of a dylib install name ("@rpath/libfoo.dylib"). */
static const char *install_file_name(const char *install_name) {
  const char *slash = strrchr(install_name, '/');
  return slash ? slash + 1 : install_name;
}

char *macho_scan(artifact_t *artifact, const char *image, size_t size) {
  macho_image_t m = {.view = {(const unsigned char *)image, size, false}};
  m.bits = macho_class(image, size, &m.view.big_endian);
  if (!m.bits) return xstrdup("not a Mach-O file");
  uint64_t cpu, filetype, ncmds, sizeofcmds;
  uint64_t first = m.bits == 64 ? 32 : 28;
  if (!byteview_uint(&m.view, 4, 4, &cpu) || !byteview_uint(&m.view, 12, 4, &filetype) ||
      !byteview_uint(&m.view, 16, 4, &ncmds) || !byteview_uint(&m.view, 20, 4, &sizeofcmds) ||
      !byteview_has(&m.view, 0, first))
    return xstrdup("truncated or corrupt: the Mach-O header ends past the end of the file");
  /* The load commands are read inside [first, first + sizeofcmds) only, as
   * dyld does: a sizeofcmds the file cannot hold is an error, not an empty
   * list. */
  if (!byteview_has(&m.view, first, sizeofcmds))
    return xasprintf("truncated or corrupt: the load commands (sizeofcmds %llu) end past the "
                     "end of the file",
                     (unsigned long long)sizeofcmds);
  byteview_t commands = {m.view.bytes, (size_t)(first + sizeofcmds), m.view.big_endian};
  artifact->format = FORMAT_MACHO;
  artifact->elf_members++;
  artifact->elf_class = m.bits;
  artifact->big_endian = m.view.big_endian;
  artifact->machine = elf_machine_of(cpu);
  /* MH_OBJECT 1, MH_EXECUTE 2, MH_DYLIB 6, MH_BUNDLE 8. */
  artifact->elf_type = filetype == 1 ? ET_REL : filetype == 2 ? ET_EXEC : ET_DYN;
  bool relocatable = filetype == 1;

  /* Segments first, so symbols can tell which sections hold thread-locals. */
  char *error = NULL;
  uint64_t symtab = 0;
  uint64_t at = first;
  for (uint64_t i = 0; i < ncmds && !error; i++) {
    uint64_t cmd, cmdsize, name_offset;
    if (!byteview_uint(&commands, at, 4, &cmd) || !byteview_uint(&commands, at + 4, 4, &cmdsize) ||
        cmdsize < 8 || !byteview_has(&commands, at, cmdsize))
      return xasprintf("truncated or corrupt: load command %llu of %llu ends past sizeofcmds",
                       (unsigned long long)i + 1, (unsigned long long)ncmds);
    if (cmd == LC_SEGMENT || cmd == LC_SEGMENT_64) {
      error = scan_segment(artifact, &m, at, cmdsize);
    } else if (cmd == LC_SYMTAB) {
      symtab = at;
    } else if ((cmd == LC_ID_DYLIB || cmd == LC_LOAD_DYLIB || cmd == LC_LOAD_WEAK_DYLIB ||
                cmd == LC_REEXPORT_DYLIB) &&
               byteview_uint(&m.view, at + 8, 4, &name_offset) && name_offset < cmdsize) {
      byteview_t command = {m.view.bytes + at, (size_t)cmdsize, m.view.big_endian};
      const char *name = byteview_string(&command, name_offset);
      if (name && cmd == LC_ID_DYLIB && !artifact->soname)
        artifact->soname = xstrdup(install_file_name(name));
      else if (name && name[0] && cmd != LC_ID_DYLIB)
        nameset_add(&artifact->needed, install_file_name(name));
    }
    at += cmdsize;
  }
  if (!error && symtab) error = scan_symtab(artifact, &m, symtab, relocatable);
  return error;
}
