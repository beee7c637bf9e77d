/*
 * util.h - allocation and formatting helpers that never return failure.
 *
 * nsalloc-audit is a command-line tool: running out of memory while building a
 * report is not something it can recover from, so these helpers print one
 * line and exit with status 2 (the tool's "I/O or usage error" status).
 */
#ifndef AUDIT_UTIL_H
#define AUDIT_UTIL_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t size);
/* Grows *items (of *cap elements of elem_size bytes) so that index `need` fits. */
void xgrow(void **items, size_t *cap, size_t need, size_t elem_size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
