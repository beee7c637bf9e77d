/*
 * json.h - writing JSON strings (shared by the JSON and SARIF reports).
 */
#ifndef AUDIT_JSON_H
#define AUDIT_JSON_H

#include <stdio.h>

/* A JSON string of s, ASCII only: quotes and backslashes escaped, control
 * and non-ASCII bytes as \u00XX. */
void json_string(FILE *out, const char *s);
/* json_string, or null for NULL. */
void json_string_or_null(FILE *out, const char *s);

#endif
