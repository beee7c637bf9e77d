/* process.c - the files a running process has mapped (see process.h). */
#include "process.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DELETED_SUFFIX " (deleted)"

/* One line of /proc/PID/maps that maps a file. */
typedef struct mapping {
  uintmax_t start, end;
  unsigned major, minor;
  uintmax_t inode;
  char *path; /* as the kernel prints it, " (deleted)" included */
} mapping_t;

/* Parses line into *m; false for anonymous and pseudo mappings ([heap],
 * [stack], [vdso]) and lines that do not parse. */
static bool parse_mapping(char *line, mapping_t *m) {
  int path_at = 0;
  if (sscanf(line, "%jx-%jx %*s %*x %x:%x %ju %n", &m->start, &m->end, &m->major, &m->minor,
             &m->inode, &path_at) != 5 ||
      path_at == 0)
    return false;
  line[strcspn(line, "\n")] = '\0';
  m->path = line + path_at;
  return m->inode != 0 && m->path[0] == '/';
}

static bool is_deleted(const char *path) {
  size_t len = strlen(path), suffix = strlen(DELETED_SUFFIX);
  return len > suffix && strcmp(path + len - suffix, DELETED_SUFFIX) == 0;
}

/* Opens the regular file behind the mapping: through map_files, else by
 * path (then only if it is still the mapped inode). Returns -1 with an
 * error recorded, or -1 with *special set for a device. */
static int open_mapped(audit_set_t *set, long pid, const mapping_t *m, bool *special) {
  char *via = xasprintf("/proc/%ld/map_files/%jx-%jx", pid, m->start, m->end);
  struct stat st;
  bool by_map_files = stat(via, &st) == 0;
  int via_error = errno;
  const char *what = by_map_files ? via : m->path;
  if (!by_map_files && via_error != EPERM && via_error != EACCES) {
    audit_set_add_error(set, m->path, strerror(via_error));
    what = NULL;
  } else if (!by_map_files && is_deleted(m->path)) {
    audit_set_add_error(set, m->path,
                        "deleted since it was mapped, and /proc/PID/map_files cannot be read "
                        "(it needs CAP_SYS_ADMIN): not audited");
    what = NULL;
  } else if (!by_map_files && stat(m->path, &st) != 0) {
    audit_set_add_error(set, m->path, strerror(errno));
    what = NULL;
  } else if (!by_map_files && (st.st_ino != m->inode || major(st.st_dev) != m->major ||
                               minor(st.st_dev) != m->minor)) {
    audit_set_add_error(set, m->path,
                        "replaced on disk since it was mapped, and /proc/PID/map_files cannot be "
                        "read (it needs CAP_SYS_ADMIN): not audited");
    what = NULL;
  } else if (!S_ISREG(st.st_mode)) {
    *special = true;
    what = NULL;
  }
  int fd = what ? open(what, O_RDONLY | O_CLOEXEC) : -1;
  if (what && fd < 0) audit_set_add_error(set, m->path, strerror(errno));
  free(via);
  return fd;
}

/* Whether an earlier line mapped the same file (a library is mapped once
 * per segment). */
static bool mapped_before(const mapping_t *seen, size_t nseen, const mapping_t *m) {
  for (size_t i = 0; i < nseen; i++) {
    if (seen[i].inode == m->inode && seen[i].major == m->major && seen[i].minor == m->minor)
      return true;
  }
  return false;
}

static int by_path(const void *a, const void *b) {
  return strcmp(((const mapping_t *)a)->path, ((const mapping_t *)b)->path);
}

static void audit_mapping(inputs_t *inputs, long pid, const mapping_t *m) {
  if (audit_set_excludes(inputs->set, m->path, false)) return;
  bool special = false;
  int fd = open_mapped(inputs->set, pid, m, &special);
  if (special) sample_add(&inputs->set->special_files, m->path);
  if (fd < 0) return;
  inputs_audit_fd(inputs, fd, m->path, false);
  close(fd);
}

void process_audit(inputs_t *inputs, long pid) {
  char *name = xasprintf("process %ld", pid);
  char *maps_path = xasprintf("/proc/%ld/maps", pid);
  FILE *maps = fopen(maps_path, "re");
  if (!maps) {
    char *message = errno == ENOENT ? xstrdup("no such process")
                                    : xasprintf("cannot read %s: %s", maps_path, strerror(errno));
    audit_set_add_error(inputs->set, name, message);
    free(message);
    goto out;
  }
  /* Read whole first: auditing takes a while, and the list is one moment. */
  char *line = NULL;
  size_t cap = 0, nseen = 0, seen_cap = 0, lines = 0;
  mapping_t *seen = NULL;
  while (getline(&line, &cap, maps) >= 0) {
    lines++;
    mapping_t m;
    if (!parse_mapping(line, &m) || mapped_before(seen, nseen, &m)) continue;
    m.path = xstrdup(m.path);
    xgrow((void **)&seen, &seen_cap, nseen, sizeof seen[0]);
    seen[nseen++] = m;
  }
  /* A read error (the process exited while its maps were read) or no line
   * at all (a zombie, a kernel thread) leaves nothing trustworthy. */
  if (ferror(maps) || lines == 0) {
    audit_set_add_error(inputs->set, name,
                        ferror(maps) ? "its memory map could not be read (did it exit?)"
                                     : "it maps nothing (a zombie or a kernel thread)");
  } else {
    /* In path order, as a directory walk: the report does not depend on
     * where the loader happened to map each file. */
    if (nseen) qsort(seen, nseen, sizeof seen[0], by_path);
    for (size_t i = 0; i < nseen; i++)
      audit_mapping(inputs, pid, &seen[i]);
  }
  for (size_t i = 0; i < nseen; i++)
    free(seen[i].path);
  free(seen);
  free(line);
  fclose(maps);
out:
  free(maps_path);
  free(name);
}
