/*
 * segment_map.c - the copy's ownership registry: "is this pointer mine?"
 *
 * One byte per SEGMENT_SIZE unit of the address space, in the copy's own
 * (static, zero-filled, untouched until used) storage. 0: not this copy's.
 * 1: a segment of this copy starts in this unit. k > 1: the unit lies inside a
 * huge segment that starts k-1 units earlier (255: at least 254 earlier; step
 * back and read again). Answering needs only this map, never the memory at
 * the pointer, so foreign pointers are classified without touching them.
 */
#include "internal.h"

static size_t map_index(const void *p) {
  return (uintptr_t)p >> SEGMENT_SHIFT;
}

static void segment_map_set(segment_t *seg) {
  size_t first = map_index(seg), units = (seg->size + SEGMENT_MASK) >> SEGMENT_SHIFT;
  for (size_t i = 0; i < units; i++)
    relaxed_store(&segment_map[first + i], (uint8_t)(i < 254 ? i + 1 : 255));
}

static void segment_map_clear(segment_t *seg) {
  size_t first = map_index(seg), units = (seg->size + SEGMENT_MASK) >> SEGMENT_SHIFT;
  for (size_t i = 0; i < units; i++)
    relaxed_store(&segment_map[first + i], 0);
}

/* A huge segment becomes `size` bytes (segment_shrink): the units past
 * it are no longer this copy's. */
static void segment_map_shrink(segment_t *seg, size_t size) {
  size_t first = map_index(seg), units = (seg->size + SEGMENT_MASK) >> SEGMENT_SHIFT;
  for (size_t i = (size + SEGMENT_MASK) >> SEGMENT_SHIFT; i < units; i++)
    relaxed_store(&segment_map[first + i], 0);
}

/* The segment of this copy that contains p, or NULL. */
static segment_t *segment_map_lookup(const void *p) {
  size_t index = map_index(p);
  if (index >= MAP_ENTRIES) return NULL;
  for (;;) {
    uint8_t v = relaxed_load(&segment_map[index]);
    if (v == 0) return NULL;
    if (v == 1) break;
    index -= (size_t)(v - 1);
  }
  /* A huge segment's last unit may be shared with someone else's mapping. */
  segment_t *seg = (segment_t *)(index << SEGMENT_SHIFT);
  return (uintptr_t)p - (uintptr_t)seg < seg->size ? seg : NULL;
}

bool nsalloc_owns(const void *p) {
  return segment_map_lookup(p) != NULL;
}
