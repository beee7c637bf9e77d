/* audit.c - dispatching an image to the ELF reader or the container walker. */
#include "audit.h"

#include "container.h"
#include "elf_scan.h"
#include "util.h"

#include <stdlib.h>

typedef struct container_walk {
  audit_set_t *set;
  const char *path;
  artifact_t *archive; /* the artifact an ar archive's members go into; NULL for zips */
  size_t elf_members;
} container_walk_t;

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
  walk->elf_members++;
  if (audit_set_excludes(walk->set, path, false)) {
    free(path);
    return;
  }
  if (walk->archive) {
    scan_into(walk->set, walk->archive, path, image, size);
  } else {
    /* Every shared object in a wheel is loaded on its own: one artifact each. */
    artifact_t *artifact = artifact_new(path);
    if (scan_into(walk->set, artifact, path, image, size)) {
      artifact_finish(artifact);
      audit_set_add_artifact(walk->set, artifact);
    } else {
      artifact_free(artifact);
    }
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
                            container_format_t format) {
  container_walk_t walk = {.set = set, .path = path};
  if (format == CONTAINER_AR) {
    walk.archive = artifact_new(path);
    walk.archive->kind = KIND_ARCHIVE;
  }
  char *error =
      container_each_elf_member(image, size, on_container_member, on_container_error, &walk);
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
  if (!error && walk.elf_members == 0) set->skipped_non_elf++;
}

void audit_image(audit_set_t *set, const char *path, char *image, size_t size, bool named) {
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
  if (format != CONTAINER_NONE) {
    audit_container(set, path, image, size, format);
  } else if (named) {
    audit_set_add_error(set, path, "not an ELF file, static archive or zip");
  } else {
    set->skipped_non_elf++;
  }
}
