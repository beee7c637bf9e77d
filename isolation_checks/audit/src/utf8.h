/*
 * utf8.h - reading UTF-8 strictly: names reach every report as UTF-8, and a
 * byte that is not part of a well-formed sequence is shown as "\xNN".
 */
#ifndef AUDIT_UTF8_H
#define AUDIT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length of the well-formed UTF-8 sequence at p (p < end), with its code
 * point in *code_point, or 0: no overlong forms, surrogates or code points
 * past U+10FFFF. */
size_t utf8_decode(const unsigned char *p, const unsigned char *end, uint32_t *code_point);

#endif
