/* model.c - the shadow model (model.h). */
#include "model.h"

#include <string.h>

/* First index whose block starts at or after p. */
static size_t lower_bound(const model *m, const void *p) {
  size_t lo = 0, hi = m->count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if ((uintptr_t)m->blocks[mid].p < (uintptr_t)p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

size_t model_find(const model *m, const void *p) {
  size_t i = lower_bound(m, p);
  return i < m->count && m->blocks[i].p == p ? i : MODEL_NONE;
}

/* Blocks never overlap each other, so only the last block starting before
 * the end of the range can reach into it. */
const model_block *model_overlap(const model *m, const void *p, size_t length) {
  uintptr_t start = (uintptr_t)p, end = start + (length ? length : 1);
  size_t i = lower_bound(m, (const void *)end);
  if (i == 0) return NULL;
  const model_block *b = &m->blocks[i - 1];
  uintptr_t b_end = (uintptr_t)b->p + (b->usable ? b->usable : 1);
  return b_end > start ? b : NULL;
}

void model_insert(model *m, const model_block *block) {
  size_t i = lower_bound(m, block->p);
  memmove(&m->blocks[i + 1], &m->blocks[i], (m->count - i) * sizeof(model_block));
  m->blocks[i] = *block;
  m->count++;
  m->copy_blocks[block->copy]++;
  m->copy_bytes[block->copy] += block->usable;
}

void model_remove(model *m, size_t index) {
  const model_block *b = &m->blocks[index];
  m->copy_blocks[b->copy]--;
  m->copy_bytes[b->copy] -= b->usable;
  memmove(&m->blocks[index], &m->blocks[index + 1], (m->count - index - 1) * sizeof(model_block));
  m->count--;
}

static size_t pattern_next(size_t i, size_t size) {
  size_t tail = size > 32 ? size - 32 : 0;
  if (i + 1 < 1024 || i + 1 >= tail) return i + 1;
  return i + 509 < tail ? i + 509 : tail;
}

static uint8_t pattern_byte(uint64_t seed, size_t i) {
  return (uint8_t)((((seed * 0x100000001B3ULL) ^ i) * 0x9E3779B97F4A7C15ULL) >> 56);
}

void pattern_fill(uint8_t *p, size_t size, uint64_t seed) {
  for (size_t i = 0; i < size; i = pattern_next(i, size))
    p[i] = pattern_byte(seed, i);
}

size_t pattern_check(const uint8_t *p, size_t size, uint64_t seed, size_t length) {
  for (size_t i = 0; i < size && i < length; i = pattern_next(i, size))
    if (p[i] != pattern_byte(seed, i)) return i;
  return MODEL_NONE;
}

size_t zero_check(const uint8_t *p, size_t size) {
  for (size_t i = 0; i < size; i = pattern_next(i, size))
    if (p[i] != 0) return i;
  return MODEL_NONE;
}
