/*
 * copies.c - loading test modules and the helpers every check shares.
 */
#include "copies.h"

#include "verdict.h"

#include "dl_compat.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void iso_copy_load(iso_copy *copy, const char *path, int dlopen_mode) {
  copy->path = path;
  copy->name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  copy->handle = dlopen(path, RTLD_NOW | dlopen_mode);
  if (!copy->handle) {
    fprintf(stderr, "setup error: dlopen %s: %s\n", path, dlerror());
    exit(2);
  }
  iso_module_entry_fn entry = (iso_module_entry_fn)dlsym(copy->handle, ISO_MODULE_ENTRY);
  if (!entry) {
    fprintf(stderr, "setup error: %s has no %s\n", path, ISO_MODULE_ENTRY);
    exit(2);
  }
  copy->api = entry();
}

void iso_copies_load(iso_copies *copies, char **paths, size_t count, int dlopen_mode) {
  if (count > ISO_MAX_COPIES) {
    fprintf(stderr, "setup error: at most %d modules\n", ISO_MAX_COPIES);
    exit(2);
  }
  copies->count = count;
  for (size_t i = 0; i < count; i++)
    iso_copy_load(&copies->items[i], paths[i], dlopen_mode);
}

void iso_copies_close(iso_copies *copies) {
  for (size_t i = copies->count; i-- > 0;)
    dlclose(copies->items[i].handle);
  copies->count = 0;
}

const iso_copy *iso_copies_owner(const iso_copies *copies, const void *p) {
  for (size_t i = 0; i < copies->count; i++)
    if (copies->items[i].api->owns(p)) return &copies->items[i];
  return NULL;
}

static const iso_copy *owner_or_violation(void *ctx, const void *p) {
  const iso_copy *owner = iso_copies_owner(ctx, p);
  ISO_EXPECT(owner, "forwarded pointer %p is owned by no loaded copy", p);
  return owner;
}

static void forward_free(void *ctx, void *p) {
  const iso_copy *owner = owner_or_violation(ctx, p);
  if (owner) owner->api->free(p);
}

static void *forward_realloc(void *ctx, void *p, size_t size) {
  const iso_copy *owner = owner_or_violation(ctx, p);
  return owner ? owner->api->realloc(p, size) : NULL;
}

static size_t forward_usable_size(void *ctx, const void *p) {
  const iso_copy *owner = owner_or_violation(ctx, p);
  return owner ? owner->api->usable_size(p) : 0;
}

nsalloc_forward_t iso_forward_to_owner(iso_copies *copies) {
  return (nsalloc_forward_t){.ctx = copies,
                             .free = forward_free,
                             .realloc = forward_realloc,
                             .usable_size = forward_usable_size};
}

void iso_expect_balanced(const iso_copy *copy, bool foreign_expected) {
  nsalloc_stats_t stats;
  copy->api->stats(&stats);
  ISO_EXPECT(stats.in_use_blocks == 0 && stats.in_use_bytes == 0,
             "%s: %zu blocks (%zu bytes) still in use at the end", copy->name, stats.in_use_blocks,
             stats.in_use_bytes);
  ISO_EXPECT(foreign_expected || stats.foreign_pointers == 0,
             "%s: %llu foreign pointers reached the copy", copy->name,
             (unsigned long long)stats.foreign_pointers);
  ISO_EXPECT(stats.invalid_pointers == 0, "%s: %llu invalid pointers", copy->name,
             (unsigned long long)stats.invalid_pointers);
}
