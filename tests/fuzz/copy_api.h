/*
 * copy_api.h - one private copy of the core seen through a table of function
 * pointers, so the fuzzer's engine can drive two copies (different prefixes,
 * compiled from the same copy_api.c) with the same code.
 */
#ifndef NSALLOC_FUZZ_COPY_API_H
#define NSALLOC_FUZZ_COPY_API_H

#include "nsalloc.h"

typedef struct fuzz_copy {
  const char *prefix;
  void *(*malloc)(size_t size);
  void *(*calloc)(size_t count, size_t size);
  void *(*realloc)(void *p, size_t size);
  void *(*aligned_alloc)(size_t alignment, size_t size);
  size_t (*usable_size)(const void *p);
  size_t (*good_size)(size_t size);
  void (*free)(void *p);
  void (*free_sized)(void *p, size_t size);
  bool (*owns)(const void *p);
  nsalloc_heap_t *(*heap_new)(void);
  void (*heap_delete)(nsalloc_heap_t *heap);
  void (*heap_destroy)(nsalloc_heap_t *heap);
  void *(*heap_malloc)(nsalloc_heap_t *heap, size_t size);
  void (*heap_free)(nsalloc_heap_t *heap, void *p);
  void (*collect)(bool force);
  void (*stats)(nsalloc_stats_t *out);
  int (*set_foreign_policy)(nsalloc_policy_t policy, const nsalloc_forward_t *forward);
  void (*set_message_handler)(nsalloc_message_fn handler, void *arg);
} fuzz_copy;

/* The two copies: prefixes fa_ and fb_. */
extern const fuzz_copy fuzz_copy_a, fuzz_copy_b;

#endif
