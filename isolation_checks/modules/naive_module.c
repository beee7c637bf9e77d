/*
 * naive_module.c - NEGATIVE CONTROL: a stand-in for a bundled allocator with
 * the incident's two flaws, never installed. Built only to prove that the
 * runtime checks catch them.
 *
 *  1. The current thread's heap is named by an EXPORTED TLS variable, so two
 *     copies loaded RTLD_GLOBAL bind to one slot (mimalloc's fixed slot).
 *  2. No ownership policy: usable_size() of a block this copy does not know
 *     is 0, and realloc() copies min(new size, usable size) bytes - none -
 *     then frees the original anyway (mimalloc's mi_realloc path).
 *
 * Blocks come from the C library with a header naming the heap that made
 * them; a copy "knows" a block when the header names its own heap (its
 * private page map, in the incident's terms).
 */
#include "iso_module.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct naive_heap {
  _Atomic(size_t) live_blocks, live_bytes;
} naive_heap;

typedef struct naive_header {
  _Alignas(16) naive_heap *heap; /* 16 bytes on 32-bit targets too */
  size_t size;
} naive_header;
_Static_assert(sizeof(naive_header) == 16, "blocks stay 16-byte aligned");

static naive_heap own_heap;

/* Flaw 1: one name, default visibility, in every copy. */
ISO_MODULE_EXPORT _Thread_local naive_heap *naive_thread_heap;

static naive_heap *current_heap(void) {
  if (!naive_thread_heap) naive_thread_heap = &own_heap;
  return naive_thread_heap;
}

static naive_header *header_of(const void *p) {
  return (naive_header *)p - 1;
}

static void *naive_malloc(size_t size) {
  naive_header *header = malloc(sizeof *header + size);
  if (!header) return NULL;
  header->heap = current_heap();
  header->size = size;
  atomic_fetch_add(&header->heap->live_blocks, 1);
  atomic_fetch_add(&header->heap->live_bytes, size);
  return header + 1;
}

static bool naive_owns(const void *p) {
  return p && header_of(p)->heap == &own_heap;
}

static size_t naive_usable_size(const void *p) {
  return naive_owns(p) ? header_of(p)->size : 0;
}

static void naive_free(void *p) {
  if (!p) return;
  naive_header *header = header_of(p);
  atomic_fetch_sub(&header->heap->live_blocks, 1);
  atomic_fetch_sub(&header->heap->live_bytes, header->size);
  free(header);
}

/* Flaw 2. */
static void *naive_realloc(void *p, size_t size) {
  size_t usable = naive_usable_size(p);
  void *q = naive_malloc(size);
  if (!q) return NULL;
  if (p) memcpy(q, p, size < usable ? size : usable);
  naive_free(p);
  return q;
}

static void naive_stats(nsalloc_stats_t *out) {
  memset(out, 0, sizeof *out);
  out->in_use_blocks = atomic_load(&own_heap.live_blocks);
  out->in_use_bytes = atomic_load(&own_heap.live_bytes);
}

/* Accepted and ignored: this allocator has no notion of a foreign pointer. */
static int naive_set_foreign_policy(nsalloc_policy_t policy, const nsalloc_forward_t *forward) {
  (void)policy;
  (void)forward;
  return 0;
}

static void naive_set_message_handler(nsalloc_message_fn handler, void *arg) {
  (void)handler;
  (void)arg;
}

static const char *naive_prefix(void) {
  return "naive_";
}

static const iso_module_api api = {
    .malloc = naive_malloc,
    .realloc = naive_realloc,
    .free = naive_free,
    .usable_size = naive_usable_size,
    .owns = naive_owns,
    .stats = naive_stats,
    .set_foreign_policy = naive_set_foreign_policy,
    .set_message_handler = naive_set_message_handler,
    .prefix = naive_prefix,
};

ISO_MODULE_EXPORT const iso_module_api *iso_module_get(void);
const iso_module_api *iso_module_get(void) {
  return &api;
}
