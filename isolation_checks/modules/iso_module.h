/*
 * iso_module.h - the interface every isolation test module exports.
 *
 * A test module is a shared object holding one allocator copy. Its only
 * exported symbol is ISO_MODULE_ENTRY, which returns the copy's functions, so
 * the runtime checks reach each copy through its own handle (dlsym on the
 * handle) and never through global symbol lookup.
 */
#ifndef ISO_MODULE_H
#define ISO_MODULE_H

#include "nsalloc.h" /* types only: stats, policies, forward hooks */

#define ISO_MODULE_ENTRY "iso_module_get"

typedef struct iso_module_api {
  void *(*malloc)(size_t size);
  void *(*realloc)(void *p, size_t size);
  void (*free)(void *p);
  size_t (*usable_size)(const void *p);
  bool (*owns)(const void *p);
  void (*stats)(nsalloc_stats_t *out);
  int (*set_foreign_policy)(nsalloc_policy_t policy, const nsalloc_forward_t *forward);
  void (*set_message_handler)(nsalloc_message_fn handler, void *arg);
  const char *(*prefix)(void);
} iso_module_api;

typedef const iso_module_api *(*iso_module_entry_fn)(void);

#if defined(_WIN32)
#define ISO_MODULE_EXPORT __declspec(dllexport)
#else
#define ISO_MODULE_EXPORT __attribute__((visibility("default")))
#endif

#endif
