/* util.c - allocation and formatting helpers that never return failure. */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die_out_of_memory(void) {
  fputs("nsalloc-audit: out of memory\n", stderr);
  exit(2);
}

void *xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) die_out_of_memory();
  return p;
}

void *xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) die_out_of_memory();
  return p;
}

void *xrealloc(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (!q) die_out_of_memory();
  return q;
}

void xgrow(void **items, size_t *cap, size_t need, size_t elem_size) {
  if (need < *cap) return;
  size_t new_cap = *cap ? *cap * 2 : 8;
  while (new_cap <= need)
    new_cap *= 2;
  *items = xrealloc(*items, new_cap * elem_size);
  *cap = new_cap;
}

char *xstrdup(const char *s) {
  return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n) {
  char *copy = xmalloc(n + 1);
  memcpy(copy, s, n);
  copy[n] = '\0';
  return copy;
}

char *xasprintf(const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *out = NULL;
  int n = vasprintf(&out, format, args);
  va_end(args);
  if (n < 0) die_out_of_memory();
  return out;
}
