/*
 * names.h - the two bounded name collections evidence is kept in.
 *
 * Symbol tables can hold millions of entries, so nothing here grows with the
 * size of the input beyond a fixed limit:
 *  - a sample_t counts every name it is shown but keeps only the SAMPLE_MAX
 *    smallest (in strcmp order), so what a report prints does not depend on
 *    the order symbols appear in a table;
 *  - a nameset_t keeps a sorted set of distinct names up to NAMESET_LIMIT and
 *    then records that it overflowed.
 */
#ifndef AUDIT_NAMES_H
#define AUDIT_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define SAMPLE_MAX    3
#define NAMESET_LIMIT 4096

typedef struct sample {
  size_t count;            /* names shown, duplicates included */
  size_t kept;             /* entries used in names[] */
  char *names[SAMPLE_MAX]; /* the smallest distinct names, ascending */
} sample_t;

void sample_add(sample_t *sample, const char *name);
void sample_free(sample_t *sample);

typedef struct nameset {
  char **items; /* ascending, distinct */
  size_t len;
  size_t cap;
  bool overflowed; /* a name was dropped because NAMESET_LIMIT was reached */
} nameset_t;

void nameset_add(nameset_t *set, const char *name);
bool nameset_contains(const nameset_t *set, const char *name);
void nameset_free(nameset_t *set);

#endif
