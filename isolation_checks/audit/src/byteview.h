/*
 * byteview.h - bounds-checked reads of little- and big-endian integers and
 * NUL-terminated strings from a file image (for the PE and Mach-O readers).
 * Every read says whether it fit: hostile offsets never read past the image.
 */
#ifndef AUDIT_BYTEVIEW_H
#define AUDIT_BYTEVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct byteview {
  const unsigned char *bytes;
  size_t size;
  bool big_endian;
} byteview_t;

/* Whether [offset, offset + length) lies inside the view. */
static inline bool byteview_has(const byteview_t *view, uint64_t offset, uint64_t length) {
  return offset <= view->size && length <= view->size - offset;
}

static inline bool byteview_uint(const byteview_t *view, uint64_t offset, unsigned width,
                                 uint64_t *out) {
  if (!byteview_has(view, offset, width)) return false;
  uint64_t value = 0;
  for (unsigned i = 0; i < width; i++) {
    unsigned shift = view->big_endian ? 8 * (width - 1 - i) : 8 * i;
    value |= (uint64_t)view->bytes[offset + i] << shift;
  }
  *out = value;
  return true;
}

/* The NUL-terminated string at offset, or NULL if it does not end inside
 * the view. */
static inline const char *byteview_string(const byteview_t *view, uint64_t offset) {
  if (offset >= view->size) return NULL;
  const void *end = memchr(view->bytes + offset, '\0', view->size - offset);
  return end ? (const char *)view->bytes + offset : NULL;
}

#endif
