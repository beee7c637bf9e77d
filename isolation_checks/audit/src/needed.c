/* needed.c - resolving DT_NEEDED in the set and on disk (see needed.h). */
#include "needed.h"

#include "elf_scan.h"
#include "util.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A library file read from disk, by its resolved path. */
typedef struct library {
  char *real_path;
  artifact_t *artifact;
  bool in_set; /* added to the set, which then owns the artifact */
} library_t;

typedef struct resolver {
  audit_set_t *set;
  library_t *libraries;
  size_t nlibraries, libraries_cap;
} resolver_t;

static artifact_t *find_in_set(const audit_set_t *set, const artifact_t *needer, const char *name) {
  for (size_t i = 0; i < set->nartifacts; i++) {
    const artifact_t *candidate = set->artifacts[i];
    if (candidate == needer || candidate->kind != KIND_SHARED_OBJECT ||
        !artifact_same_abi(candidate, needer))
      continue;
    if ((candidate->soname && strcmp(candidate->soname, name) == 0) ||
        strcmp(artifact_file_name(candidate->path), name) == 0)
      return set->artifacts[i];
  }
  return NULL;
}

/* Reads the ELF file at path into a new artifact, or NULL when it is not a
 * readable ELF file. */
static artifact_t *scan_library(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  artifact_t *artifact = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    size_t size = (size_t)st.st_size;
    const char *image = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (image != MAP_FAILED) {
      artifact = artifact_new(path);
      char *error = elf_scan(artifact, image, size);
      if (error) {
        free(error);
        artifact_free(artifact);
        artifact = NULL;
      } else {
        artifact_finish(artifact);
      }
      munmap((void *)image, size);
    }
  }
  close(fd);
  return artifact;
}

/* The library at path if it is one the needer can load, scanning it once. */
static artifact_t *library_at(resolver_t *resolver, const artifact_t *needer, const char *path) {
  char *real_path = realpath(path, NULL);
  if (!real_path) return NULL;
  for (size_t i = 0; i < resolver->nlibraries; i++) {
    library_t *library = &resolver->libraries[i];
    if (strcmp(library->real_path, real_path) == 0) {
      free(real_path);
      return artifact_same_abi(library->artifact, needer) ? library->artifact : NULL;
    }
  }
  artifact_t *artifact = scan_library(path);
  if (!artifact) {
    free(real_path);
    return NULL;
  }
  xgrow((void **)&resolver->libraries, &resolver->libraries_cap, resolver->nlibraries,
        sizeof resolver->libraries[0]);
  resolver->libraries[resolver->nlibraries++] =
      (library_t){.real_path = real_path, .artifact = artifact};
  return artifact->kind == KIND_SHARED_OBJECT && artifact_same_abi(artifact, needer) ? artifact
                                                                                     : NULL;
}

/* The Debian multiarch directory name of the needer's ABI, or NULL. */
static const char *multiarch_of(const artifact_t *artifact) {
  if (artifact->big_endian) return NULL;
  if (artifact->machine == EM_X86_64 && artifact->elf_class == 64) return "x86_64-linux-gnu";
  if (artifact->machine == EM_386) return "i386-linux-gnu";
  if (artifact->machine == EM_AARCH64) return "aarch64-linux-gnu";
  return NULL;
}

/* Tries name in one directory; "$ORIGIN" is the needer's directory. */
static artifact_t *try_directory(resolver_t *resolver, const artifact_t *needer, const char *dir,
                                 size_t dir_len, const char *name) {
  const char *origin = NULL;
  size_t origin_len = 0;
  /* $ORIGIN is only known for a file on disk, not a member of a zip. */
  if (!strchr(needer->path, '!')) {
    const char *slash = strrchr(needer->path, '/');
    origin = slash ? needer->path : ".";
    origin_len = slash ? (size_t)(slash - needer->path) : 1;
  }
  char *expanded = xstrdup("");
  for (size_t i = 0; i < dir_len;) {
    size_t skip = 0;
    if (strncmp(dir + i, "$ORIGIN", 7) == 0) skip = 7;
    if (strncmp(dir + i, "${ORIGIN}", 9) == 0) skip = 9;
    char *longer;
    if (skip) {
      if (!origin) {
        free(expanded);
        return NULL;
      }
      longer = xasprintf("%s%.*s", expanded, (int)origin_len, origin);
      i += skip;
    } else {
      longer = xasprintf("%s%c", expanded, dir[i]);
      i++;
    }
    free(expanded);
    expanded = longer;
  }
  char *path = xasprintf("%s/%s", expanded, name);
  artifact_t *found = library_at(resolver, needer, path);
  free(path);
  free(expanded);
  return found;
}

static artifact_t *find_on_disk(resolver_t *resolver, const artifact_t *needer, const char *name) {
  if (strchr(name, '/')) return library_at(resolver, needer, name);
  for (const char *dir = needer->runpath; dir && *dir;) {
    size_t len = strcspn(dir, ":");
    artifact_t *found = len ? try_directory(resolver, needer, dir, len, name) : NULL;
    if (found) return found;
    dir += len + (dir[len] == ':');
  }
  const char *multiarch = multiarch_of(needer);
  static const char *const defaults[] = {"/lib64", "/usr/lib64", "/lib", "/usr/lib",
                                         "/usr/local/lib"};
  char *dirs[2 + sizeof defaults / sizeof defaults[0]];
  size_t ndirs = 0;
  if (multiarch) {
    dirs[ndirs++] = xasprintf("/lib/%s", multiarch);
    dirs[ndirs++] = xasprintf("/usr/lib/%s", multiarch);
  }
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
    dirs[ndirs++] = xstrdup(defaults[i]);
  artifact_t *found = NULL;
  for (size_t i = 0; i < ndirs; i++) {
    if (!found) found = try_directory(resolver, needer, dirs[i], strlen(dirs[i]), name);
    free(dirs[i]);
  }
  return found;
}

static bool library_in_set(resolver_t *resolver, const artifact_t *artifact) {
  for (size_t i = 0; i < resolver->nlibraries; i++) {
    if (resolver->libraries[i].artifact == artifact) return resolver->libraries[i].in_set;
  }
  return true; /* not read from disk: an audited artifact */
}

static void add_library_to_set(resolver_t *resolver, artifact_t *artifact,
                               const artifact_t *needer) {
  for (size_t i = 0; i < resolver->nlibraries; i++) {
    library_t *library = &resolver->libraries[i];
    if (library->artifact != artifact || library->in_set) continue;
    library->in_set = true;
    artifact->needed_by = xstrdup(needer->path);
    audit_set_add_artifact(resolver->set, artifact);
  }
}

static void add_dependency(artifact_t *artifact, const char *name, const char *path,
                           uint32_t families) {
  xgrow((void **)&artifact->deps, &artifact->deps_cap, artifact->ndeps, sizeof artifact->deps[0]);
  artifact->deps[artifact->ndeps++] =
      (dependency_t){.name = xstrdup(name), .path = xstrdup(path), .families = families};
}

/* The families artifact holds or loads through DT_NEEDED, resolving each
 * entry once. A cycle of libraries needing each other ends at the library
 * already being resolved. */
static uint32_t resolve(resolver_t *resolver, artifact_t *artifact, int depth) {
  if (artifact->needed_state == NEEDED_RESOLVED || artifact->needed_state == NEEDED_RESOLVING)
    return artifact->needed_families;
  artifact->needed_state = NEEDED_RESOLVING;
  artifact->needed_families = artifact_families(artifact);
  for (size_t i = 0; i < artifact->needed.len && depth < NEEDED_DEPTH_MAX; i++) {
    const char *name = artifact->needed.items[i];
    if (artifact_is_system_runtime_name(name)) continue;
    artifact_t *library = find_in_set(resolver->set, artifact, name);
    /* This machine's directories hold ELF libraries only: a DLL's or
     * dylib's imports are resolved among the audited artifacts. */
    bool elf = artifact->format == FORMAT_ELF;
    if (!library && elf) library = find_on_disk(resolver, artifact, name);
    if (!library) {
      if (elf) sample_add(&artifact->unresolved_needed, name);
      continue;
    }
    uint32_t families = resolve(resolver, library, depth + 1);
    /* A library holding an allocator itself is one copy in the process. */
    if (artifact_families(library) && !library_in_set(resolver, library))
      add_library_to_set(resolver, library, artifact);
    if (!families) continue;
    add_dependency(artifact, name, library->path, families);
    artifact->needed_families |= families;
  }
  artifact->needed_state = NEEDED_RESOLVED;
  return artifact->needed_families;
}

void needed_resolve(audit_set_t *set) {
  resolver_t resolver = {.set = set};
  /* Libraries added while resolving are resolved by then; the count is read
   * once so only the audited artifacts start a walk. */
  size_t audited = set->nartifacts;
  for (size_t i = 0; i < audited; i++)
    resolve(&resolver, set->artifacts[i], 0);
  for (size_t i = 0; i < resolver.nlibraries; i++) {
    if (!resolver.libraries[i].in_set) artifact_free(resolver.libraries[i].artifact);
    free(resolver.libraries[i].real_path);
  }
  free(resolver.libraries);
}
