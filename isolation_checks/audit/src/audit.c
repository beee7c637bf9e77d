/* audit.c - dispatching an image to the ELF reader or the container walker. */
#include "audit.h"

#include "container.h"
#include "elf_scan.h"
#include "macho_scan.h"
#include "pe_scan.h"
#include "util.h"

#include <stdlib.h>

typedef struct container_walk {
  audit_set_t *set;
  const char *path;
  artifact_t *archive;        /* the artifact an ar archive's members go into; NULL otherwise */
  size_t members;             /* ELF and container members met */
  int depth;                  /* containers enclosing this one */
  container_budget_t *budget; /* shared by every container of one input */
} container_walk_t;

static void audit_nested(audit_set_t *set, const char *path, char *image, size_t size, bool named,
                         int depth, container_budget_t *budget);

/* "lib.a(member.o)" as binutils names archive members, "x.whl!dir/mod.so"
 * for files inside a zip. */
static char *member_path(const container_walk_t *walk, const char *member) {
  return walk->archive ? xasprintf("%s(%s)", walk->path, member)
                       : xasprintf("%s!%s", walk->path, member);
}

/* Scans one ELF file into artifact; on failure records the error under path.
 * Returns whether the scan succeeded. */
static bool scan_into(audit_set_t *set, artifact_t *artifact, const char *path, char *image,
                      size_t size) {
  char *error = elf_scan(artifact, image, size);
  if (!error) return true;
  audit_set_add_error(set, path, error);
  free(error);
  return false;
}

static void on_container_member(void *ctx, const char *member, char *image, size_t size) {
  container_walk_t *walk = ctx;
  char *path = member_path(walk, member);
  walk->members++;
  if (audit_set_excludes(walk->set, path, false)) {
    /* excluded: counted there */
  } else if (walk->archive) {
    /* An ar archive's objects are linked together: one artifact. A
     * container stored in an ar archive is never linked, so it is skipped. */
    if (elf_image_is_elf(image, size))
      scan_into(walk->set, walk->archive, path, image, size);
    else
      walk->set->skipped_non_elf++;
  } else {
    /* Every shared object in a wheel or tarball is loaded on its own (one
     * artifact each); a container inside is opened in turn. */
    audit_nested(walk->set, path, image, size, false, walk->depth + 1, walk->budget);
  }
  free(path);
}

static void on_container_error(void *ctx, const char *member, const char *message) {
  container_walk_t *walk = ctx;
  char *path = member_path(walk, member);
  audit_set_add_error(walk->set, path, message);
  free(path);
}

static void audit_container(audit_set_t *set, const char *path, const char *image, size_t size,
                            container_format_t format, int depth, container_budget_t *budget) {
  container_walk_t walk = {.set = set, .path = path, .depth = depth, .budget = budget};
  if (format == CONTAINER_AR) {
    walk.archive = artifact_new(path);
    walk.archive->kind = KIND_ARCHIVE;
  }
  char *error =
      container_each_member(image, size, budget, on_container_member, on_container_error, &walk);
  if (error) {
    audit_set_add_error(set, path, error);
    free(error);
  }
  if (walk.archive && walk.archive->elf_members > 0) {
    artifact_finish(walk.archive);
    audit_set_add_artifact(set, walk.archive);
  } else {
    artifact_free(walk.archive);
  }
  /* A container with nothing to audit (a pure-Python wheel) is not an error. */
  if (!error && walk.members == 0) set->skipped_non_elf++;
}

/* A PE or Mach-O image: one artifact, or an error. */
static void audit_foreign(audit_set_t *set, const char *path, const char *image, size_t size,
                          char *(*scan)(artifact_t *, const char *, size_t)) {
  artifact_t *artifact = artifact_new(path);
  char *error = scan(artifact, image, size);
  if (error) {
    audit_set_add_error(set, path, error);
    free(error);
    artifact_free(artifact);
    return;
  }
  artifact_finish(artifact);
  audit_set_add_artifact(set, artifact);
}

typedef struct fat_walk {
  audit_set_t *set;
  const char *path;
} fat_walk_t;

/* One architecture of a universal binary: "x.dylib!arm64". */
static void on_fat_slice(void *ctx, const char *cpu, const char *image, size_t size) {
  fat_walk_t *walk = ctx;
  char *path = xasprintf("%s!%s", walk->path, cpu);
  if (macho_kind_of(image, size) == MACHO_SINGLE)
    audit_foreign(walk->set, path, image, size, macho_scan);
  else
    audit_set_add_error(walk->set, path, "not a Mach-O image");
  free(path);
}

static void audit_nested(audit_set_t *set, const char *path, char *image, size_t size, bool named,
                         int depth, container_budget_t *budget) {
  macho_kind_t macho = macho_kind_of(image, size);
  /* Separate debug files sit next to the programs they describe; a walk
   * skips them, as no process loads them (named, they are an error). */
  if (!named && (pe_image_is_debug_only(image, size) || elf_image_is_debug_only(image, size))) {
    set->skipped_non_elf++;
    return;
  }
  if (pe_image_is_pe(image, size)) {
    audit_foreign(set, path, image, size, pe_scan);
    return;
  }
  if (macho == MACHO_SINGLE) {
    audit_foreign(set, path, image, size, macho_scan);
    return;
  }
  if (macho == MACHO_FAT) {
    fat_walk_t walk = {set, path};
    char *error = macho_each_slice(image, size, on_fat_slice, &walk);
    if (error) {
      audit_set_add_error(set, path, error);
      free(error);
    }
    return;
  }
  if (elf_image_is_elf(image, size)) {
    artifact_t *artifact = artifact_new(path);
    if (scan_into(set, artifact, path, image, size)) {
      artifact_finish(artifact);
      audit_set_add_artifact(set, artifact);
    } else {
      artifact_free(artifact);
    }
    return;
  }
  container_format_t format = container_format_of(image, size);
  if (format != CONTAINER_NONE && depth > CONTAINER_DEPTH_MAX) {
    char *message =
        xasprintf("a container nested more than %d levels deep: not opened", CONTAINER_DEPTH_MAX);
    audit_set_add_error(set, path, message);
    free(message);
  } else if (format != CONTAINER_NONE) {
    audit_container(set, path, image, size, format, depth, budget);
  } else if (named) {
    audit_set_add_error(set, path, "not an ELF, PE or Mach-O file, static archive, zip or tarball");
  } else {
    set->skipped_non_elf++;
  }
}

void audit_image(audit_set_t *set, const char *path, char *image, size_t size, bool named) {
  container_budget_t budget = {.max_inflated = set->max_inflated, .max_ratio = set->max_ratio};
  audit_nested(set, path, image, size, named, 0, &budget);
}
