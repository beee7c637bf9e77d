/*
 * copy_module.c - a test module embedding one nsalloc copy (whatever prefix,
 * TLS model and visibility its build gives it), exposing it through
 * iso_module_get().
 *
 * ISO_LAYOUT_ALIGN (optional): serve every malloc as an aligned allocation,
 * so this copy's blocks come from other size classes than a default copy's
 * and the copies' block layouts differ. (The core has no size-class knob of
 * its own; this varies the layout from the outside.)
 */
#include "iso_module.h"

#ifdef ISO_LAYOUT_ALIGN
static void *layout_malloc(size_t size) {
  return nsalloc_aligned_alloc(ISO_LAYOUT_ALIGN, size);
}
#define MODULE_MALLOC layout_malloc
#else
#define MODULE_MALLOC nsalloc_malloc
#endif

/* The API functions are referenced by address: when the copy is built with
 * default visibility (a negative control) these references are what symbol
 * interposition rebinds to another module's copy. */
static const iso_module_api api = {
    .malloc = MODULE_MALLOC,
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
