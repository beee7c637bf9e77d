/*
 * model.h - the fuzzer's shadow model: every live block of both copies with
 * its owner (copy, heap), requested and usable size and fill pattern, kept
 * sorted by address so that "is this range free?" (no block handed out twice)
 * and "is a block starting here?" are binary searches.
 */
#ifndef NSALLOC_FUZZ_MODEL_H
#define NSALLOC_FUZZ_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_MAX_BLOCKS 256
#define MODEL_NONE       ((size_t)-1)
#define HEAP_DEFAULT     (-1) /* a thread's default heap */

typedef struct model_block {
  uint8_t *p;
  size_t size;      /* requested */
  size_t usable;    /* usable_size() when it was allocated */
  size_t alignment; /* asked of aligned_alloc (0: none): above 2 MiB even a
                     * small block gets a huge segment of its own */
  uint64_t seed;    /* of its fill pattern */
  int copy;         /* 0 or 1 */
  int heap;         /* HEAP_DEFAULT or a heap slot */
} model_block;

typedef struct model {
  model_block blocks[MODEL_MAX_BLOCKS]; /* ascending addresses */
  size_t count;
  size_t copy_blocks[2], copy_bytes[2]; /* what the copy's stats must say */
} model;

/* Index of the block starting at p, or MODEL_NONE. */
size_t model_find(const model *m, const void *p);
/* A live block overlapping [p, p + length), or NULL. */
const model_block *model_overlap(const model *m, const void *p, size_t length);
/* Insert a block (no overlap, count < MODEL_MAX_BLOCKS: the caller checks). */
void model_insert(model *m, const model_block *block);
void model_remove(model *m, size_t index);

/* The fill pattern of a block: every byte of its first KiB and its last 32
 * bytes, and one byte in 509 between (large blocks stay cheap to fill). */
void pattern_fill(uint8_t *p, size_t size, uint64_t seed);
/* Offset of the first byte below `length` of the pattern of a `size`-byte
 * block that differs, or MODEL_NONE (length < size: what realloc kept). */
size_t pattern_check(const uint8_t *p, size_t size, uint64_t seed, size_t length);
/* Offset of the first sampled byte that is not zero, or MODEL_NONE. */
size_t zero_check(const uint8_t *p, size_t size);

#endif
