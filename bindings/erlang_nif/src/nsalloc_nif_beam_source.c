/*
 * nsalloc_nif_beam_source.c - segments drawn from the VM (enif_alloc), so the
 * copy's memory shows in erlang:memory() (type nif_internal, under system).
 *
 * enif_alloc promises only 8-byte alignment and segments need `alignment`
 * (4 MiB): each request over-allocates size + alignment + a record, and the
 * record sits just below the aligned segment, in the padding, where free finds
 * it. The padding is never written, so it costs accounting, not resident
 * memory. The copy gives segments back itself (nsalloc_unload at the last
 * unload returns every segment without a live block).
 *
 * A segment is a single-block carrier of ERTS, and a freed carrier goes to
 * mseg_alloc's cache (+MMmcs, 10 per allocator instance by default), still
 * mapped and as resident as the copy left it, and no longer counted by
 * erlang:memory(): 200 hot upgrades under source => beam left VmRSS 35 MiB
 * higher (+3 MiB with +MMmcs 0). So the segment's pages are dropped before
 * the carrier goes back: a cached carrier then costs address space only.
 */
#include "nsalloc_nif_internal.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

typedef struct drawn_s {
  void *raw;    /* what enif_alloc returned */
  size_t bytes; /* what was asked of enif_alloc */
} drawn_t;

static struct { _Atomic(size_t) bytes, segments; } drawn;

static void *beam_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (size > SIZE_MAX - alignment - sizeof(drawn_t)) return NULL;
  size_t bytes = size + alignment + sizeof(drawn_t);
  uint8_t *raw = enif_alloc(bytes);
  if (!raw) return NULL;
  uintptr_t segment =
      ((uintptr_t)raw + sizeof(drawn_t) + alignment - 1) & ~(uintptr_t)(alignment - 1);
  drawn_t *record = (drawn_t *)segment - 1;
  record->raw = raw;
  record->bytes = bytes;
  atomic_fetch_add(&drawn.bytes, bytes);
  atomic_fetch_add(&drawn.segments, 1);
  return (void *)segment;
}

static void beam_free(void *ctx, void *segment, size_t size) {
  (void)ctx;
  drawn_t *record = (drawn_t *)segment - 1;
  atomic_fetch_sub(&drawn.bytes, record->bytes);
  atomic_fetch_sub(&drawn.segments, 1);
  /* The segment is alignment-aligned and inside the block, clear of the
   * record and of ERTS's headers; its contents are dead. */
  madvise(segment, size, MADV_DONTNEED);
  enif_free(record->raw);
}

static const nsalloc_os_source_t beam_source = {.alloc = beam_alloc, .free = beam_free};
static bool installed; /* written once, under the glue's lock, before the copy allocates */

int nsalloc_nif_beam_source_install(void) {
  int error = nsalloc_set_os_source(&beam_source);
  if (!error) installed = true;
  return error;
}
bool nsalloc_nif_beam_source_installed(void) {
  return installed;
}
size_t nsalloc_nif_beam_bytes(void) {
  return atomic_load(&drawn.bytes);
}
size_t nsalloc_nif_beam_segments(void) {
  return atomic_load(&drawn.segments);
}
