/*
 * violations.c - the violation list.
 */
#include "violations.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void violation_add(violations *v, const char *rule, const char *format, ...) {
  size_t pending = v->count - v->printed;
  if (pending < VIOLATION_MAX_MESSAGES) {
    char *line = v->messages[pending];
    int n = snprintf(line, sizeof v->messages[0], "[%s] ", rule);
    va_list args;
    va_start(args, format);
    vsnprintf(line + n, sizeof v->messages[0] - (size_t)n, format, args);
    va_end(args);
  }
  v->count++;
  if (!violation_seen(v, rule) && v->rule_count < VIOLATION_MAX_RULES)
    v->rules[v->rule_count++] = rule;
}

bool violation_seen(const violations *v, const char *rule) {
  for (size_t i = 0; i < v->rule_count; i++)
    if (strcmp(v->rules[i], rule) == 0) return true;
  return false;
}

void violations_print(violations *v) {
  size_t pending = v->count - v->printed;
  for (size_t i = 0; i < pending && i < VIOLATION_MAX_MESSAGES; i++)
    printf("    violation %s\n", v->messages[i]);
  if (pending > VIOLATION_MAX_MESSAGES)
    printf("    ... and %zu more\n", pending - VIOLATION_MAX_MESSAGES);
  v->printed = v->count;
}
