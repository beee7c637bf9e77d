/*
 * violations.h - collecting rule violations, printed under their artifact.
 */
#ifndef ISO_VIOLATIONS_H
#define ISO_VIOLATIONS_H

#include <stdbool.h>
#include <stddef.h>

#define VIOLATION_MAX_RULES    32
#define VIOLATION_MAX_MESSAGES 64

typedef struct violations {
  size_t count;
  size_t printed;                         /* count at the last violations_print() */
  const char *rules[VIOLATION_MAX_RULES]; /* distinct rule ids seen */
  size_t rule_count;
  char messages[VIOLATION_MAX_MESSAGES][200]; /* unprinted ones, "[rule] detail" */
} violations;

void violation_add(violations *v, const char *rule, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
bool violation_seen(const violations *v, const char *rule);
/* Prints the recorded messages, indented, and forgets them (rules stay). */
void violations_print(violations *v);

#endif
