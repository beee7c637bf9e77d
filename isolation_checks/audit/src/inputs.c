/* inputs.c - files, directories and glob patterns (see inputs.h). */
#include "inputs.h"

#include "audit.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void add_errno_error(inputs_t *inputs, const char *path, int error) {
  audit_set_add_error(inputs->set, path, strerror(error));
}

/* The earlier sighting of the file, or NULL after recording this first one. */
static file_identity_t *earlier_sighting(inputs_t *inputs, const struct stat *st) {
  for (size_t i = 0; i < inputs->nseen; i++) {
    if (inputs->seen[i].device == st->st_dev && inputs->seen[i].inode == st->st_ino)
      return &inputs->seen[i];
  }
  xgrow((void **)&inputs->seen, &inputs->seen_cap, inputs->nseen, sizeof inputs->seen[0]);
  inputs->seen[inputs->nseen++] = (file_identity_t){st->st_dev, st->st_ino, false};
  return NULL;
}

void inputs_audit_fd(inputs_t *inputs, int fd, const char *path, bool named) {
  audit_set_t *set = inputs->set;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    add_errno_error(inputs, path, errno);
    return;
  }
  file_identity_t *earlier = earlier_sighting(inputs, &st);
  if (earlier && !(named && earlier->passed_over)) {
    set->skipped_duplicate++;
    return;
  }
  if (earlier) {
    /* A file a directory walk passed over, named now: judged as named, as
     * it would have been in the other order. */
    set->skipped_non_elf--;
    set->skipped_duplicate++;
    earlier->passed_over = false;
  }
  size_t index = earlier ? (size_t)(earlier - inputs->seen) : inputs->nseen - 1;
  size_t passed_over = set->skipped_non_elf;
  if (st.st_size == 0) {
    if (named)
      audit_set_add_error(set, path, "empty file");
    else
      set->skipped_non_elf++;
  } else {
    /* A private mapping: the file itself is never written. */
    size_t size = (size_t)st.st_size;
    void *image = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (image == MAP_FAILED) {
      add_errno_error(inputs, path, errno);
    } else {
      audit_image(set, path, image, size, named);
      munmap(image, size);
    }
  }
  inputs->seen[index].passed_over = set->skipped_non_elf > passed_over;
}

static void audit_file(inputs_t *inputs, const char *path, bool named) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    add_errno_error(inputs, path, errno);
    return;
  }
  inputs_audit_fd(inputs, fd, path, named);
  close(fd);
}

static int skip_dot_entries(const struct dirent *entry) {
  return strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
}

static void walk_directory(inputs_t *inputs, const char *path);

/* One entry of a directory walk. Symbolic links to files are followed (a
 * versioned .so and its aliases are deduplicated by identity); links to
 * directories are not, so a walk always ends. Everything passed over is
 * counted in the set, never silently ignored. */
static void walk_entry(inputs_t *inputs, const char *child) {
  struct stat st;
  if (lstat(child, &st) != 0) {
    add_errno_error(inputs, child, errno);
    return;
  }
  if (audit_set_excludes(inputs->set, child, S_ISDIR(st.st_mode))) return;
  if (S_ISDIR(st.st_mode)) {
    walk_directory(inputs, child);
    return;
  }
  if (S_ISLNK(st.st_mode)) {
    if (stat(child, &st) != 0) {
      sample_add(errno == ELOOP ? &inputs->set->link_loops : &inputs->set->dangling_links, child);
      return;
    }
    if (S_ISDIR(st.st_mode)) {
      sample_add(&inputs->set->directory_links, child);
      return;
    }
  }
  if (S_ISREG(st.st_mode))
    audit_file(inputs, child, false);
  else
    sample_add(&inputs->set->special_files, child);
}

static void walk_directory(inputs_t *inputs, const char *path) {
  struct dirent **entries;
  int count = scandir(path, &entries, skip_dot_entries, alphasort);
  if (count < 0) {
    add_errno_error(inputs, path, errno);
    return;
  }
  size_t len = strlen(path);
  const char *separator = len > 0 && path[len - 1] == '/' ? "" : "/";
  for (int i = 0; i < count; i++) {
    char *child = xasprintf("%s%s%s", path, separator, entries[i]->d_name);
    walk_entry(inputs, child);
    free(child);
    free(entries[i]);
  }
  free(entries);
}

static void audit_path(inputs_t *inputs, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    add_errno_error(inputs, path, errno);
  } else if (audit_set_excludes(inputs->set, path, S_ISDIR(st.st_mode))) {
    return;
  } else if (S_ISDIR(st.st_mode)) {
    walk_directory(inputs, path);
  } else if (S_ISREG(st.st_mode)) {
    audit_file(inputs, path, true);
  } else {
    audit_set_add_error(inputs->set, path, "not a regular file or directory");
  }
}

void inputs_audit_argument(inputs_t *inputs, const char *argument) {
  struct stat st;
  if (lstat(argument, &st) == 0 || strpbrk(argument, "*?[") == NULL) {
    audit_path(inputs, argument);
    return;
  }
  glob_t matches;
  int status = glob(argument, 0, NULL, &matches);
  if (status == GLOB_NOMATCH) {
    audit_set_add_error(inputs->set, argument, "no file matches this pattern");
  } else if (status != 0) {
    audit_set_add_error(inputs->set, argument, "cannot expand this pattern");
  } else {
    for (size_t i = 0; i < matches.gl_pathc; i++)
      audit_path(inputs, matches.gl_pathv[i]);
  }
  globfree(&matches);
}

void inputs_free(inputs_t *inputs) {
  free(inputs->seen);
  inputs->seen = NULL;
  inputs->nseen = inputs->seen_cap = 0;
}
