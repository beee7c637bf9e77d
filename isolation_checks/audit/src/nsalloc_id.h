/*
 * nsalloc_id.h - the identification record every nsalloc build embeds.
 *
 * The record is a NUL-terminated ASCII string in read-only data, so it
 * survives stripping:
 *
 *   NSALLOC-ID:1 prefix=<prefix> version=<x.y.z> visibility=<hidden|default>
 *                tls=<gnu2|initial-exec|global-dynamic>
 *
 * (one line, single spaces). Fields are checked strictly: a record that does
 * not parse is still reported, as malformed, because its presence alone says
 * an nsalloc copy is there.
 */
#ifndef AUDIT_NSALLOC_ID_H
#define AUDIT_NSALLOC_ID_H

#include <stdbool.h>
#include <stddef.h>

#define NSALLOC_ID_MAGIC     "NSALLOC-ID:1 "
#define NSALLOC_ID_MAX_CHARS 256 /* a longer record is malformed */

typedef struct nsalloc_id {
  bool valid;
  char *text;   /* the record as found, truncated at NSALLOC_ID_MAX_CHARS */
  char *prefix; /* the fields below are NULL unless valid */
  char *version;
  bool hidden; /* visibility=hidden */
  char *tls;   /* gnu2, initial-exec or global-dynamic */
} nsalloc_id_t;

/* Parses the record starting at text (which begins with NSALLOC_ID_MAGIC) and
 * ends at the first NUL or after `available` bytes. */
void nsalloc_id_parse(const char *text, size_t available, nsalloc_id_t *out);
void nsalloc_id_free(nsalloc_id_t *id);

#endif
