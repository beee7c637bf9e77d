/*
 * pattern.h - filling and verifying blocks with a seed-derived pattern, a
 * 64-bit word at a time (the stress verifies every byte of every block, so
 * this is its inner loop).
 */
#ifndef ISO_PATTERN_H
#define ISO_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void iso_fill(void *p, size_t size, uint64_t seed);
bool iso_verify(const void *p, size_t size, uint64_t seed);

#endif
