/*
 * copies.h - the allocator copies under test: test modules loaded with
 * dlopen, each reached through its own handle.
 */
#ifndef ISO_COPIES_H
#define ISO_COPIES_H

#include "iso_module.h"

#define ISO_MAX_COPIES 64

typedef struct iso_copy {
  const char *path;
  const char *name; /* file name, for messages */
  void *handle;
  const iso_module_api *api;
} iso_copy;

typedef struct iso_copies {
  iso_copy items[ISO_MAX_COPIES];
  size_t count;
} iso_copies;

/* Loads every module in order, with RTLD_NOW | dlopen_mode (RTLD_LOCAL or
 * RTLD_GLOBAL); exits with a message when one cannot be loaded (a setup
 * error, not an isolation violation). */
void iso_copies_load(iso_copies *copies, char **paths, size_t count, int dlopen_mode);
void iso_copy_load(iso_copy *copy, const char *path, int dlopen_mode);
void iso_copies_close(iso_copies *copies);

/* The copy that owns p among `copies`, or NULL. */
const iso_copy *iso_copies_owner(const iso_copies *copies, const void *p);

/* Forward hooks that hand a foreign pointer to whichever loaded copy owns it
 * (what a host embedding several copies installs); ctx is the iso_copies. A
 * pointer no copy owns is a violation. */
nsalloc_forward_t iso_forward_to_owner(iso_copies *copies);

/* Live blocks and bytes of the copy must be zero, and no foreign or invalid
 * pointer may have reached it unless `foreign_expected`. */
void iso_expect_balanced(const iso_copy *copy, bool foreign_expected);

#endif
