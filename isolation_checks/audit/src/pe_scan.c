/*
 * pe_scan.c - reading a PE/COFF image (Windows .dll, .pyd, .exe).
 *
 * What the audit needs from a PE file: the machine and whether it is a DLL,
 * the names it exports (its export directory: a DLL's only exported
 * symbols), the DLLs it imports (resolved among the audited artifacts like
 * DT_NEEDED), whether it has a TLS directory, and the bytes of its
 * non-executable sections for the family strings. MinGW exports a
 * thread-local variable X through emulated TLS as "__emutls_v.X". Every
 * offset is checked against the image (byteview.h).
 */
#include "pe_scan.h"

#include "byteview.h"
#include "evidence.h"
#include "util.h"

#include <elf.h>
#include <string.h>

#define PE_DIRECTORY_EXPORT 0
#define PE_DIRECTORY_IMPORT 1
#define PE_DIRECTORY_TLS    9
#define PE_FILE_DLL         0x2000
#define PE_SECTION_EXECUTE  0x20000000u
#define PE_NAMES_MAX        (1u << 20) /* exported or imported names read */
#define EMUTLS_PREFIX       "__emutls_v."

typedef struct pe_image {
  byteview_t view;
  uint64_t sections; /* offset of the section table */
  unsigned nsections;
} pe_image_t;

bool pe_image_is_pe(const void *image, size_t size) {
  byteview_t view = {image, size, false};
  uint64_t lfanew;
  return size >= 2 && memcmp(image, "MZ", 2) == 0 && byteview_uint(&view, 0x3c, 4, &lfanew) &&
         byteview_has(&view, lfanew, 4) && memcmp((const char *)image + lfanew, "PE\0\0", 4) == 0;
}

/* A debug-only image (objcopy --only-keep-debug of an .exe or .dll): its
 * section table is the program's, but no code section has file data. */
bool pe_image_is_debug_only(const void *image, size_t size) {
  byteview_t view = {image, size, false};
  uint64_t lfanew, nsections, optional_size;
  if (!pe_image_is_pe(image, size) || !byteview_uint(&view, 0x3c, 4, &lfanew) ||
      !byteview_uint(&view, lfanew + 6, 2, &nsections) ||
      !byteview_uint(&view, lfanew + 20, 2, &optional_size))
    return false;
  uint64_t sections = lfanew + 24 + optional_size;
  for (uint64_t i = 0; i < nsections; i++) {
    uint64_t raw_size, raw, flags;
    if (!byteview_uint(&view, sections + 40 * i + 16, 4, &raw_size) ||
        !byteview_uint(&view, sections + 40 * i + 20, 4, &raw) ||
        !byteview_uint(&view, sections + 40 * i + 36, 4, &flags))
      return false;
    if ((flags & PE_SECTION_EXECUTE) && (raw == 0 || raw_size == 0)) return true;
  }
  return false;
}

/* The file offset of a relative virtual address, through the section that
 * maps it; false when no section's file data holds it. */
static bool rva_to_offset(const pe_image_t *pe, uint64_t rva, uint64_t *offset) {
  for (unsigned i = 0; i < pe->nsections; i++) {
    uint64_t at = pe->sections + 40 * (uint64_t)i, va, raw_size, raw;
    if (!byteview_uint(&pe->view, at + 12, 4, &va) ||
        !byteview_uint(&pe->view, at + 16, 4, &raw_size) ||
        !byteview_uint(&pe->view, at + 20, 4, &raw))
      return false;
    if (rva >= va && rva - va < raw_size) {
      *offset = raw + (rva - va);
      return byteview_has(&pe->view, *offset, 1);
    }
  }
  return false;
}

static const char *string_at_rva(const pe_image_t *pe, uint64_t rva) {
  uint64_t offset;
  return rva_to_offset(pe, rva, &offset) ? byteview_string(&pe->view, offset) : NULL;
}

static char *scan_exports(artifact_t *artifact, const pe_image_t *pe, uint64_t rva) {
  uint64_t dir, name_rva, count, names;
  if (!rva_to_offset(pe, rva, &dir) || !byteview_uint(&pe->view, dir + 12, 4, &name_rva) ||
      !byteview_uint(&pe->view, dir + 24, 4, &count) ||
      !byteview_uint(&pe->view, dir + 32, 4, &names))
    return xstrdup("truncated or corrupt: the export directory lies outside the file");
  const char *dll_name = string_at_rva(pe, name_rva);
  if (dll_name && !artifact->soname) artifact->soname = xstrdup(dll_name);
  if (count > PE_NAMES_MAX) return xasprintf("more than %u exported names", PE_NAMES_MAX);
  uint64_t table;
  if (count && !rva_to_offset(pe, names, &table))
    return xstrdup("truncated or corrupt: the export name table lies outside the file");
  for (uint64_t i = 0; i < count; i++) {
    uint64_t entry;
    if (!byteview_uint(&pe->view, table + 4 * i, 4, &entry))
      return xstrdup("truncated or corrupt: the export name table ends past the end of the file");
    const char *name = string_at_rva(pe, entry);
    if (!name || !name[0]) continue;
    bool emutls = strncmp(name, EMUTLS_PREFIX, strlen(EMUTLS_PREFIX)) == 0;
    if (emutls) artifact->uses_tls = true;
    evidence_symbol(artifact, emutls ? name + strlen(EMUTLS_PREFIX) : name, true, true, emutls,
                    true);
  }
  return NULL;
}

static char *scan_imports(artifact_t *artifact, const pe_image_t *pe, uint64_t rva) {
  uint64_t dir;
  if (!rva_to_offset(pe, rva, &dir))
    return xstrdup("truncated or corrupt: the import directory lies outside the file");
  for (uint64_t i = 0; i < PE_NAMES_MAX; i++) {
    uint64_t name_rva, first_thunk;
    if (!byteview_uint(&pe->view, dir + 20 * i + 12, 4, &name_rva) ||
        !byteview_uint(&pe->view, dir + 20 * i + 16, 4, &first_thunk))
      return xstrdup("truncated or corrupt: the import directory ends past the end of the file");
    if (name_rva == 0 && first_thunk == 0) break; /* the terminating descriptor */
    const char *name = string_at_rva(pe, name_rva);
    if (name && name[0]) nameset_add(&artifact->needed, name);
  }
  return NULL;
}

static void machine_of(artifact_t *artifact, uint64_t machine) {
  switch (machine) {
  case 0x8664:
    artifact->machine = EM_X86_64;
    break;
  case 0x14c:
    artifact->machine = EM_386;
    break;
  case 0xaa64:
    artifact->machine = EM_AARCH64;
    break;
  case 0x1c4:
    artifact->machine = EM_ARM;
    break;
  default:
    artifact->machine = (unsigned)machine; /* shown as "machine N" */
  }
}

char *pe_scan(artifact_t *artifact, const char *image, size_t size) {
  pe_image_t pe = {.view = {(const unsigned char *)image, size, false}};
  uint64_t lfanew = 0, machine = 0, nsections = 0, optional_size = 0, characteristics = 0,
           magic = 0;
  if (!pe_image_is_pe(image, size)) return xstrdup("not a PE file");
  byteview_uint(&pe.view, 0x3c, 4, &lfanew);
  uint64_t coff = lfanew + 4, optional = coff + 20;
  if (!byteview_uint(&pe.view, coff, 2, &machine) ||
      !byteview_uint(&pe.view, coff + 2, 2, &nsections) ||
      !byteview_uint(&pe.view, coff + 16, 2, &optional_size) ||
      !byteview_uint(&pe.view, coff + 18, 2, &characteristics) ||
      !byteview_uint(&pe.view, optional, 2, &magic))
    return xstrdup("truncated or corrupt: the PE headers end past the end of the file");
  if (magic != 0x10b && magic != 0x20b)
    return xasprintf("corrupt PE optional header: unknown magic 0x%llx", (unsigned long long)magic);
  if (pe_image_is_debug_only(image, size))
    return xstrdup("a debug-only image (its code sections hold no bytes): no process loads it");
  pe.sections = optional + optional_size;
  pe.nsections = (unsigned)nsections;
  if (!byteview_has(&pe.view, pe.sections, 40 * nsections))
    return xstrdup("truncated or corrupt: the section table ends past the end of the file");
  /* The COFF symbol table (MinGW keeps one) and the string table after it. */
  uint64_t symbols = 0, nsymbols = 0, strings_size = 0;
  byteview_uint(&pe.view, coff + 8, 4, &symbols);
  byteview_uint(&pe.view, coff + 12, 4, &nsymbols);
  if (symbols && (!byteview_uint(&pe.view, symbols + 18 * nsymbols, 4, &strings_size) ||
                  !byteview_has(&pe.view, symbols + 18 * nsymbols, strings_size)))
    return xstrdup("truncated or corrupt: the COFF symbol table ends past the end of the file");

  artifact->format = FORMAT_PE;
  artifact->elf_members++;
  artifact->elf_class = magic == 0x20b ? 64 : 32;
  machine_of(artifact, machine);
  artifact->elf_type = characteristics & PE_FILE_DLL ? ET_DYN : ET_EXEC;

  /* Data directories: (rva, size) pairs after the fixed optional header. */
  uint64_t directories = optional + (magic == 0x20b ? 112 : 96), ndirectories;
  if (!byteview_uint(&pe.view, directories - 4, 4, &ndirectories))
    return xstrdup("truncated or corrupt: the PE optional header is too short");
  uint64_t rva[PE_DIRECTORY_TLS + 1] = {0}, length[PE_DIRECTORY_TLS + 1] = {0};
  for (unsigned d = 0; d <= PE_DIRECTORY_TLS && d < ndirectories; d++) {
    if (!byteview_uint(&pe.view, directories + 8 * d, 4, &rva[d]) ||
        !byteview_uint(&pe.view, directories + 8 * d + 4, 4, &length[d]))
      return xstrdup("truncated or corrupt: the data directories end past the end of the file");
  }
  char *error = NULL;
  uint64_t tls;
  if (length[PE_DIRECTORY_TLS] && !rva_to_offset(&pe, rva[PE_DIRECTORY_TLS], &tls))
    return xstrdup("truncated or corrupt: the TLS directory lies outside the file");
  if (length[PE_DIRECTORY_TLS]) artifact->uses_tls = true;
  if (length[PE_DIRECTORY_EXPORT]) error = scan_exports(artifact, &pe, rva[PE_DIRECTORY_EXPORT]);
  if (!error && length[PE_DIRECTORY_IMPORT])
    error = scan_imports(artifact, &pe, rva[PE_DIRECTORY_IMPORT]);
  for (unsigned i = 0; !error && i < pe.nsections; i++) {
    uint64_t at = pe.sections + 40 * (uint64_t)i, raw_size = 0, raw = 0, flags = 0;
    byteview_uint(&pe.view, at + 16, 4, &raw_size);
    byteview_uint(&pe.view, at + 20, 4, &raw);
    byteview_uint(&pe.view, at + 36, 4, &flags);
    if (!byteview_has(&pe.view, raw, raw_size))
      error = xasprintf("truncated or corrupt: section %u ends past the end of the file", i + 1);
    else if (!(flags & PE_SECTION_EXECUTE))
      evidence_bytes(artifact, image + raw, raw_size);
  }
  return error;
}
