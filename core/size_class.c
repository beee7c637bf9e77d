/*
 * size_class.c - the bins: which block size serves a request.
 *
 * Sizes up to 128 B come in steps of 16 (the minimum alignment); above that
 * every power-of-two interval is split into 8 classes, so a request wastes at
 * most 1/8 (12.5%) of its block. Every class is a multiple of 16. Bin 79 is
 * 64 KiB, the largest binned size.
 */
#include "internal.h"

static size_t bin_of(size_t size) {
  if (size <= 128) return size <= 16 ? 0 : (size - 1) >> 4;
  size_t w = size - 1;
  size_t log2 = (size_t)(63 - __builtin_clzll(w)); /* >= 7 */
  return 8 + ((log2 - 7) << 3) + ((w >> (log2 - 3)) & 7);
}

static size_t bin_block_size(size_t bin) {
  if (bin < 8) return (bin + 1) << 4;
  size_t log2 = 7 + ((bin - 8) >> 3);
  return (9 + ((bin - 8) & 7)) << (log2 - 3);
}

/* The smallest bin >= size whose block size is a multiple of alignment: every
 * block of such a page is aligned, because pages start on slice boundaries.
 * Returns BIN_COUNT when no bin fits. */
static size_t bin_for_alignment(size_t size, size_t alignment) {
  for (size_t bin = bin_of(size < alignment ? alignment : size); bin < BIN_COUNT; bin++)
    if ((bin_block_size(bin) & (alignment - 1)) == 0) return bin;
  return BIN_COUNT;
}

size_t nsalloc_good_size(size_t size) {
  if (size <= MEDIUM_MAX) return bin_block_size(bin_of(size));
  if (size > PTRDIFF_MAX - SEGMENT_SIZE) return 0;
  if (size <= LARGE_MAX) return align_up(size, SLICE_SIZE);
  return align_up(size, os_page_size()); /* huge: as segment_huge_alloc rounds */
}
