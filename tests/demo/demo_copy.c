/*
 * demo_copy.c - a loadable module embedding a private copy (the prefix comes
 * from the build); built several times into distinct modules.
 */
#include "demo_copy.h"

__attribute__((visibility("default"))) const demo_copy *demo_copy_get(void) {
  static const demo_copy table = {
      nsalloc_prefix,
      nsalloc_malloc,
      nsalloc_realloc,
      nsalloc_free,
      nsalloc_owns,
      nsalloc_stats,
      nsalloc_set_foreign_policy,
      nsalloc_set_message_handler,
      nsalloc_unload,
  };
  return &table;
}
