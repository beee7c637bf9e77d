/*
 * id_record.h - the identification record every nsalloc copy embeds:
 *   NSALLOC-ID:1 prefix=<p> version=<x.y.z> visibility=<hidden|default> tls=<model>
 */
#ifndef ISO_ID_RECORD_H
#define ISO_ID_RECORD_H

#include <stdbool.h>

typedef struct id_record {
  char prefix[64];
  char version[32];
  char visibility[16];
  char tls[32];
} id_record;

/* Parses one record; false when a field is missing or too long. */
bool id_record_parse(const char *text, id_record *out);

#endif
