/*
 * incident_standin.c - the negative control's allocator: nsalloc's API with
 * the incident's defect, built into a NIF library INSTEAD of an nsalloc copy.
 *
 * Like the two bundled mimalloc copies of the incident, each library has a
 * PRIVATE registry of the blocks its own heap handed out (mimalloc's page
 * map), while the heap a thread allocates from is named by ONE slot shared by
 * every library (incident_slot.c). A block allocated while the slot named the
 * other library's heap is unknown to this library's registry, so realloc sees
 * usable size 0, copies nothing, frees the original and returns fresh zeroed
 * memory. Only the functions the test NIF and the glue call are provided.
 */
#include "nsalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern __thread void *incident_slot_heap;

/* Block header: the size and the heap (library) the block came from. */
typedef struct header_s {
  size_t size;
  const void *heap;
} header_t;

static char this_heap; /* this library's heap: its address names it */

/* The first library that allocates on a thread claims the shared slot. */
static const void *thread_heap(void) {
  if (!incident_slot_heap) incident_slot_heap = &this_heap;
  return incident_slot_heap;
}

/* This library's registry: it only knows blocks of its own heap. */
static size_t registered_size(const void *p) {
  const header_t *header = (const header_t *)p - 1;
  return header->heap == &this_heap ? header->size : 0;
}

void *nsalloc_malloc(size_t size) {
  header_t *header = calloc(1, sizeof *header + size); /* a fresh page reads as zeroes */
  if (!header) return NULL;
  header->size = size;
  header->heap = thread_heap();
  return header + 1;
}

void *nsalloc_calloc(size_t count, size_t size) {
  size_t total;
  return __builtin_mul_overflow(count, size, &total) ? NULL : nsalloc_malloc(total);
}

void nsalloc_free(void *p) {
  if (p) free((header_t *)p - 1);
}

void *nsalloc_realloc(void *p, size_t size) {
  if (!p) return nsalloc_malloc(size);
  void *q = nsalloc_malloc(size);
  if (!q) return NULL;
  size_t known = registered_size(p);
  memcpy(q, p, known < size ? known : size);
  nsalloc_free(p);
  return q;
}

void nsalloc_stats(nsalloc_stats_t *out) {
  memset(out, 0, sizeof *out);
}
void nsalloc_collect(bool force) {
  (void)force;
}
void nsalloc_unload(void) {}
const char *nsalloc_prefix(void) {
  return NSALLOC_PREFIX_STRING;
}
void nsalloc_message(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "nsalloc[" NSALLOC_PREFIX_STRING " stand-in]: ");
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}
int nsalloc_set_os_source(const nsalloc_os_source_t *source) {
  (void)source;
  return ENOTSUP;
}
int nsalloc_option_set(nsalloc_option_t option, long value) {
  (void)option;
  (void)value;
  return 0;
}
int nsalloc_set_foreign_policy(nsalloc_policy_t policy, const nsalloc_forward_t *forward) {
  (void)policy;
  (void)forward;
  return 0;
}
