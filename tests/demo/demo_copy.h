/*
 * demo_copy.h - what each demo module exports: one function returning a table
 * of its private copy's entry points (the only symbol the module defines).
 */
#ifndef NSALLOC_DEMO_COPY_H
#define NSALLOC_DEMO_COPY_H

#include "nsalloc.h"

typedef struct demo_copy {
  const char *(*prefix)(void);
  void *(*malloc)(size_t size);
  void *(*realloc)(void *p, size_t size);
  void (*free)(void *p);
  bool (*owns)(const void *p);
  void (*stats)(nsalloc_stats_t *out);
  int (*set_foreign_policy)(nsalloc_policy_t policy, const nsalloc_forward_t *forward);
  void (*set_message_handler)(nsalloc_message_fn handler, void *arg);
  void (*unload)(void);
} demo_copy;

typedef const demo_copy *(*demo_copy_entry)(void);
#define DEMO_COPY_ENTRY "demo_copy_get"

#endif
