/*
 * inputs.h - expanding command-line arguments into audited files.
 *
 * An argument is a file, a directory (walked recursively in name order,
 * without following symbolic links to directories) or a glob pattern the
 * shell left unexpanded (every '*.so' of an Elixir release's priv/native).
 * A file reached twice, through a second argument or a symbolic link, is
 * audited once: otherwise a library and its own symlink would look like two
 * copies of one allocator. A file named on the command line is judged as
 * named (a file that holds nothing to audit is an error) even when a
 * directory walk passed it over before, so argument order never matters.
 */
#ifndef AUDIT_INPUTS_H
#define AUDIT_INPUTS_H

#include "artifact.h"

#include <stdbool.h>
#include <sys/types.h>

typedef struct file_identity {
  dev_t device;
  ino_t inode;
  bool passed_over; /* met in a walk and skipped: it holds nothing to audit */
} file_identity_t;

typedef struct inputs {
  audit_set_t *set;
  file_identity_t *seen;
  size_t nseen, seen_cap;
} inputs_t;

void inputs_audit_argument(inputs_t *inputs, const char *argument);
/* Audits the open file fd under the name path (named: see audit_image),
 * unless the same file was audited already. */
void inputs_audit_fd(inputs_t *inputs, int fd, const char *path, bool named);
void inputs_free(inputs_t *inputs);

#endif
