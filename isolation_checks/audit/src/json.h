/*
 * json.h - writing JSON strings (shared by the JSON and SARIF reports).
 */
#ifndef AUDIT_JSON_H
#define AUDIT_JSON_H

#include <stdio.h>

/* A JSON string of s, ASCII only: quotes and backslashes escaped, control
 * and non-ASCII characters as \uXXXX (UTF-16), and a byte that is not
 * UTF-8 as the text "\xNN". */
void json_string(FILE *out, const char *s);
/* json_string, or null for NULL. */
void json_string_or_null(FILE *out, const char *s);

#endif
