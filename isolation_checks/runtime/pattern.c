/*
 * pattern.c - word i of a block holds seed ^ (i * golden ratio); a trailing
 * partial word holds the low bytes of the next word's value.
 */
#include "pattern.h"

#include <string.h>

static inline uint64_t word_value(uint64_t seed, size_t index) {
  return seed ^ ((uint64_t)(index + 1) * 0x9E3779B97F4A7C15ULL);
}

void iso_fill(void *p, size_t size, uint64_t seed) {
  uint8_t *bytes = p;
  size_t words = size / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t value = word_value(seed, i);
    memcpy(bytes + 8 * i, &value, 8);
  }
  uint64_t tail = word_value(seed, words);
  memcpy(bytes + 8 * words, &tail, size % 8);
}

bool iso_verify(const void *p, size_t size, uint64_t seed) {
  const uint8_t *bytes = p;
  size_t words = size / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t value;
    memcpy(&value, bytes + 8 * i, 8);
    if (value != word_value(seed, i)) return false;
  }
  uint64_t tail = word_value(seed, words);
  return memcmp(bytes + 8 * words, &tail, size % 8) == 0;
}
