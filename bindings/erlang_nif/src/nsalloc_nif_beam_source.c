/*
 * nsalloc_nif_beam_source.c - segments drawn from the VM (enif_alloc), so the
 * copy's memory shows in erlang:memory() (type nif_internal, under system).
 *
 * enif_alloc promises only 8-byte alignment and segments need `alignment`
 * (4 MiB): each request over-allocates size + alignment + a record, and the
 * record sits just below the aligned segment, in the padding, where free finds
 * it. The padding is never written, so it costs accounting, not resident
 * memory. Every drawn segment is on a list so the whole lot can be given back
 * when the library is unloaded.
 */
#include "nsalloc_nif_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct drawn_s {
  struct drawn_s *next, *prev;
  void *raw;    /* what enif_alloc returned */
  size_t bytes; /* what was asked of enif_alloc */
} drawn_t;

static struct {
  pthread_mutex_t lock;
  drawn_t *list;
  _Atomic(size_t) bytes, segments;
} drawn = {.lock = PTHREAD_MUTEX_INITIALIZER};

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
  record->prev = NULL;
  pthread_mutex_lock(&drawn.lock);
  record->next = drawn.list;
  if (drawn.list) drawn.list->prev = record;
  drawn.list = record;
  pthread_mutex_unlock(&drawn.lock);
  atomic_fetch_add(&drawn.bytes, bytes);
  atomic_fetch_add(&drawn.segments, 1);
  return (void *)segment;
}

static void unlink_record(drawn_t *record) {
  if (record->prev)
    record->prev->next = record->next;
  else
    drawn.list = record->next;
  if (record->next) record->next->prev = record->prev;
}

static void give_back(drawn_t *record) {
  atomic_fetch_sub(&drawn.bytes, record->bytes);
  atomic_fetch_sub(&drawn.segments, 1);
  enif_free(record->raw);
}

static void beam_free(void *ctx, void *segment, size_t size) {
  (void)ctx;
  (void)size;
  drawn_t *record = (drawn_t *)segment - 1;
  pthread_mutex_lock(&drawn.lock);
  unlink_record(record);
  pthread_mutex_unlock(&drawn.lock);
  give_back(record);
}

static const nsalloc_os_source_t beam_source = {.alloc = beam_alloc, .free = beam_free};

const nsalloc_os_source_t *nsalloc_nif_beam_source(void) {
  return &beam_source;
}
size_t nsalloc_nif_beam_bytes(void) {
  return atomic_load(&drawn.bytes);
}
size_t nsalloc_nif_beam_segments(void) {
  return atomic_load(&drawn.segments);
}

void nsalloc_nif_beam_release_all(void) {
  pthread_mutex_lock(&drawn.lock);
  drawn_t *list = drawn.list;
  drawn.list = NULL;
  pthread_mutex_unlock(&drawn.lock);
  while (list) {
    drawn_t *next = list->next;
    give_back(list);
    list = next;
  }
}
