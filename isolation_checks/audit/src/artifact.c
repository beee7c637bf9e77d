/* artifact.c - the per-artifact record and the audit set (see artifact.h). */
#include "artifact.h"

#include "util.h"

#include <elf.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

artifact_t *artifact_new(const char *path) {
  artifact_t *artifact = xcalloc(1, sizeof *artifact);
  artifact->path = xstrdup(path);
  return artifact;
}

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The C library (all of glibc's libraries, musl's libc) and the C++ and
 * compiler runtimes bring the process's own allocator or use it; they are
 * reported but never counted as a bundled copy. name is the soname, or the
 * file name (libc.a, libm.so.6) when there is none; it is compared by its
 * stem, the part before ".so" or a final ".a". */
bool artifact_is_system_runtime_name(const char *name) {
  static const char *const stems[] = {
      "libc",         "libc_nonshared", "libc_malloc_debug", "libm",      "libmvec",
      "libresolv",    "libnsl",         "libpthread",        "libdl",     "librt",
      "libutil",      "libanl",         "libcrypt",          "libmcheck", "libBrokenLocale",
      "libthread_db", "libstdc++",      "libsupc++",         "libc++",    "libc++abi",
      "libgcc_s",     "libgcc",         "libgcc_eh",         "libatomic"};
  static const char *const prefixes[] = {"libnss_", "ld-linux", "libc.musl-", "ld-musl-"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    if (starts_with(name, prefixes[i])) return true;
  }
  const char *so = strstr(name, ".so");
  size_t len = strlen(name);
  size_t stem = so                                              ? (size_t)(so - name)
                : len >= 2 && strcmp(name + len - 2, ".a") == 0 ? len - 2
                                                                : len;
  for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) {
    if (strlen(stems[i]) == stem && strncmp(name, stems[i], stem) == 0) return true;
  }
  return false;
}

const char *artifact_file_name(const char *path) {
  const char *name = path;
  for (const char *p = path; *p; p++) {
    if (*p == '/' || *p == '!' || *p == '(') name = p + 1;
  }
  return name;
}

/* nsalloc's own libraries (libnsalloc.so, libnsalloc-override.so and
 * libnsalloc.a for prefix nsalloc_) export the API on purpose: a module that
 * links libnsalloc.a without hiding it is where a finding belongs. A copy is
 * taken to be its library's when the soname, or the file name if there is
 * none, is "lib" + prefix without its trailing '_' followed by '.' or '-'. */
static bool is_distribution_library(const artifact_t *artifact, const char *prefix) {
  if (artifact->kind != KIND_SHARED_OBJECT && artifact->kind != KIND_ARCHIVE) return false;
  const char *name = artifact->soname ? artifact->soname : artifact_file_name(artifact->path);
  size_t stem = strlen(prefix);
  if (stem > 0 && prefix[stem - 1] == '_') stem--;
  return stem > 0 && starts_with(name, "lib") && strncmp(name + 3, prefix, stem) == 0 &&
         (name[3 + stem] == '.' || name[3 + stem] == '-');
}

static artifact_kind_t kind_of(const artifact_t *artifact) {
  switch (artifact->elf_type) {
  case ET_EXEC:
    return KIND_EXECUTABLE;
  /* A PIE is ET_DYN too. Linkers mark it DF_1_PIE; older ones only give it an
   * interpreter, which libc.so.6 also has, but libc has a soname. */
  case ET_DYN:
    return artifact->pie || (artifact->has_interp && !artifact->soname) ? KIND_EXECUTABLE
                                                                        : KIND_SHARED_OBJECT;
  case ET_REL:
    return KIND_RELOCATABLE;
  default:
    return KIND_OTHER_ELF;
  }
}

void artifact_finish(artifact_t *artifact) {
  if (artifact->kind != KIND_ARCHIVE) artifact->kind = kind_of(artifact);
  /* A runtime's entry point in an executable is the runtime embedded in its
   * host (redis-server defines luaopen_* for its own Lua): only a shared
   * object can be an extension module a VM loads. */
  if (artifact->kind == KIND_EXECUTABLE && artifact->host_vm) {
    free(artifact->host_vm_entry);
    artifact->host_vm_entry = NULL;
    artifact->host_vm = NULL;
  }
  artifact->system_runtime = artifact_is_system_runtime_name(
      artifact->soname ? artifact->soname : artifact_file_name(artifact->path));
  for (size_t i = 0; i < artifact->ncopies; i++) {
    nsalloc_copy_t *copy = &artifact->copies[i];
    if (!copy->id.valid) continue;
    char *entry = xasprintf("%smalloc", copy->id.prefix);
    copy->defines_malloc = nameset_contains(&artifact->malloc_defined, entry);
    copy->exports_malloc = nameset_contains(&artifact->malloc_exported, entry);
    copy->distribution = is_distribution_library(artifact, copy->id.prefix);
    /* An exported private copy interposes like any other allocator API; the
     * distribution libraries are alternative builds of the one public copy. */
    if (copy->exports_malloc && !copy->distribution)
      nameset_add(&artifact->allocator_exports, entry);
    free(entry);
  }
}

void artifact_free(artifact_t *artifact) {
  if (!artifact) return;
  for (int f = 0; f < FAMILY_COUNT; f++) {
    sample_free(&artifact->families[f].defined);
    sample_free(&artifact->families[f].exported);
  }
  for (size_t i = 0; i < artifact->ncopies; i++)
    nsalloc_id_free(&artifact->copies[i].id);
  sample_free(&artifact->exported_tls);
  nameset_free(&artifact->allocator_exports);
  nameset_free(&artifact->tls_exports);
  nameset_free(&artifact->needed);
  sample_free(&artifact->unresolved_needed);
  for (size_t i = 0; i < artifact->ndeps; i++) {
    free(artifact->deps[i].name);
    free(artifact->deps[i].path);
  }
  free(artifact->deps);
  free(artifact->runpath);
  free(artifact->needed_by);
  nameset_free(&artifact->malloc_defined);
  nameset_free(&artifact->malloc_exported);
  free(artifact->path);
  free(artifact->soname);
  free(artifact->host_vm_entry);
  free(artifact);
}

bool artifact_has_family(const artifact_t *artifact, family_t family) {
  if (family == FAMILY_NSALLOC) return artifact->ncopies > 0;
  const family_evidence_t *evidence = &artifact->families[family];
  return evidence->strings || evidence->defined.count || evidence->exported.count;
}

uint32_t artifact_families(const artifact_t *artifact) {
  uint32_t families = 0;
  for (int f = 0; f < FAMILY_COUNT; f++) {
    if (artifact_has_family(artifact, (family_t)f)) families |= UINT32_C(1) << f;
  }
  return families;
}

bool artifact_same_abi(const artifact_t *a, const artifact_t *b) {
  return a->format == b->format && a->machine == b->machine && a->elf_class == b->elf_class &&
         a->big_endian == b->big_endian;
}

const char *artifact_kind_name(artifact_kind_t kind) {
  switch (kind) {
  case KIND_EXECUTABLE:
    return "executable";
  case KIND_SHARED_OBJECT:
    return "shared object";
  case KIND_RELOCATABLE:
    return "relocatable object";
  case KIND_ARCHIVE:
    return "static archive";
  case KIND_OTHER_ELF:
    break;
  }
  return "other ELF file";
}

static const char *machine_name(unsigned machine) {
  switch (machine) {
  case EM_X86_64:
    return "x86-64";
  case EM_386:
    return "i386";
  case EM_AARCH64:
    return "AArch64";
  case EM_ARM:
    return "ARM";
  case EM_PPC64:
    return "PowerPC64";
  case EM_PPC:
    return "PowerPC";
  case EM_S390:
    return "S/390";
  case EM_RISCV:
    return "RISC-V";
  case EM_MIPS:
    return "MIPS";
  case EM_SPARCV9:
    return "SPARC V9";
  default:
    return NULL;
  }
}

char *artifact_describe(const artifact_t *artifact) {
  const char *machine = machine_name(artifact->machine);
  char *machine_text = machine ? xstrdup(machine) : xasprintf("machine %u", artifact->machine);
  char *text;
  if (artifact->format == FORMAT_PE) {
    text = xasprintf("%s %s, %s", artifact->elf_class == 64 ? "PE32+" : "PE32",
                     artifact->kind == KIND_SHARED_OBJECT ? "DLL" : "executable", machine_text);
  } else if (artifact->format == FORMAT_MACHO) {
    text = xasprintf("Mach-O %d-bit %s, %s", artifact->elf_class,
                     artifact->kind == KIND_SHARED_OBJECT ? "dynamic library or bundle"
                                                          : artifact_kind_name(artifact->kind),
                     machine_text);
  } else if (artifact->kind == KIND_ARCHIVE) {
    text = xasprintf("static archive, %zu ELF member%s (ELF%d %s relocatable, %s)",
                     artifact->elf_members, artifact->elf_members == 1 ? "" : "s",
                     artifact->elf_class, artifact->big_endian ? "MSB" : "LSB", machine_text);
  } else {
    text = xasprintf("ELF%d %s %s, %s", artifact->elf_class, artifact->big_endian ? "MSB" : "LSB",
                     artifact_kind_name(artifact->kind), machine_text);
  }
  free(machine_text);
  return text;
}

void audit_set_add_artifact(audit_set_t *set, artifact_t *artifact) {
  xgrow((void **)&set->artifacts, &set->artifacts_cap, set->nartifacts, sizeof set->artifacts[0]);
  set->artifacts[set->nartifacts++] = artifact;
}

void audit_set_add_error(audit_set_t *set, const char *path, const char *message) {
  xgrow((void **)&set->errors, &set->errors_cap, set->nerrors, sizeof set->errors[0]);
  set->errors[set->nerrors].path = xstrdup(path);
  set->errors[set->nerrors].message = xstrdup(message);
  set->nerrors++;
}

bool audit_set_excludes(audit_set_t *set, const char *path, bool directory) {
  char *as_directory = directory ? xasprintf("%s/", path) : NULL;
  bool match = false;
  for (size_t i = 0; i < set->nexcludes && !match; i++)
    match = fnmatch(set->excludes[i], path, 0) == 0 ||
            (as_directory && fnmatch(set->excludes[i], as_directory, 0) == 0);
  free(as_directory);
  if (match) sample_add(&set->excluded, path);
  return match;
}

void audit_set_free(audit_set_t *set) {
  for (size_t i = 0; i < set->nartifacts; i++)
    artifact_free(set->artifacts[i]);
  for (size_t i = 0; i < set->nerrors; i++) {
    free(set->errors[i].path);
    free(set->errors[i].message);
  }
  free(set->artifacts);
  free(set->errors);
  sample_free(&set->dangling_links);
  sample_free(&set->link_loops);
  sample_free(&set->directory_links);
  sample_free(&set->special_files);
  sample_free(&set->excluded);
  memset(set, 0, sizeof *set);
}
