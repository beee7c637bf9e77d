/*
 * verdict.c - the process-wide violation counter.
 */
#include "verdict.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#define PRINTED_MAX 20

static _Atomic(size_t) violation_count;

void iso_violation(const char *file, int line, const char *format, ...) {
  size_t index = atomic_fetch_add(&violation_count, 1);
  if (index >= PRINTED_MAX) return;
  char text[400];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  fprintf(stderr, "VIOLATION %s:%d: %s%s\n", file, line, text,
          index + 1 == PRINTED_MAX ? " (further violations are counted, not printed)" : "");
}

size_t iso_violation_count(void) {
  return atomic_load(&violation_count);
}
