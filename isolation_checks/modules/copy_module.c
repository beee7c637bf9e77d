/*
 * copy_module.c - a test module embedding one nsalloc copy (whatever prefix,
 * TLS model and visibility its build gives it), exposing it through
 * iso_module_get(). Some modules are built with another
 * NSALLOC_SEGMENT_SHIFT, so copies with different layouts share the process.
 */
#include "iso_module.h"

/* The API functions are referenced by address: when the copy is built with
 * default visibility (a negative control) these references are what symbol
 * interposition rebinds to another module's copy. */
static const iso_module_api api = {
    .malloc = nsalloc_malloc,
    .realloc = nsalloc_realloc,
    .free = nsalloc_free,
    .usable_size = nsalloc_usable_size,
    .owns = nsalloc_owns,
    .stats = nsalloc_stats,
    .set_foreign_policy = nsalloc_set_foreign_policy,
    .set_message_handler = nsalloc_set_message_handler,
    .prefix = nsalloc_prefix,
};

ISO_MODULE_EXPORT const iso_module_api *iso_module_get(void);
const iso_module_api *iso_module_get(void) {
  return &api;
}
