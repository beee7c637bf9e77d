/*
 * test_random.c - a differential test: a long random stream of operations
 * (malloc, calloc, realloc, aligned_alloc, free, heap operations) applied to
 * the copy and to a reference model that remembers every live block's size,
 * alignment and fill seed. After every operation the touched block must hold
 * exactly what the model says; at the end every block is verified and freed
 * and the copy's statistics must be back where they started.
 */
#include "nsalloc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

enum { SLOTS = 4096 };

typedef struct model_block {
  unsigned char *p;
  size_t size;
  size_t alignment;
  uint64_t seed;
  nsalloc_heap_t *heap; /* NULL: the default heap */
} model_block;

static model_block model[SLOTS];
static nsalloc_heap_t *heaps[2];

/* Sizes skewed towards small blocks, with every range represented. */
static size_t random_size(uint64_t *rng) {
  uint64_t r = test_random(rng);
  switch (r % 20) {
  case 0:
    return 0;
  case 1:
    return 1024 + r % 65536;
  case 2:
    return (r >> 8) % 5 == 0 ? 65536 + r % ((size_t)3 << 20) : 256 + r % 2048;
  default:
    return 1 + r % 300;
  }
}

static bool check_block(const model_block *b) {
  if (((uintptr_t)b->p & (b->alignment - 1)) != 0) return false;
  if (nsalloc_usable_size(b->p) < b->size) return false;
  return test_verify(b->p, b->size, b->seed);
}

static void release(model_block *b) {
  CHECK(check_block(b));
  if (b->heap && test_random(&(uint64_t){b->seed}) % 2)
    nsalloc_heap_free(b->heap, b->p);
  else
    nsalloc_free(b->p);
  b->p = NULL;
}

static void random_step(uint64_t *rng) {
  model_block *b = &model[test_random(rng) % SLOTS];
  uint64_t op = test_random(rng) % 10, seed = test_random(rng);
  if (b->p && op < 4) { /* free */
    release(b);
    return;
  }
  if (b->p && op < 7) { /* realloc: contents up to the smaller size survive */
    size_t size = random_size(rng);
    unsigned char *p =
        b->heap ? nsalloc_heap_realloc(b->heap, b->p, size) : nsalloc_realloc(b->p, size);
    CHECK(p != NULL);
    if (!p) return;
    size_t kept = size < b->size ? size : b->size;
    CHECK(test_verify(p, kept, b->seed));
    b->p = p;
    b->size = size;
    b->alignment = 16;
    b->seed = seed;
    test_fill(p, size, seed);
    return;
  }
  if (b->p) release(b);
  size_t size = random_size(rng);
  b->heap = op == 9 ? heaps[seed % 2] : NULL;
  b->alignment = 16;
  switch (seed % 4) {
  case 0:
    b->p = b->heap ? nsalloc_heap_malloc(b->heap, size) : nsalloc_malloc(size);
    break;
  case 1: { /* calloc: all zero before the fill */
    b->p = b->heap ? nsalloc_heap_calloc(b->heap, 1, size) : nsalloc_calloc(1, size);
    bool zero = b->p != NULL;
    for (size_t i = 0; zero && i < size; i++)
      zero = b->p[i] == 0;
    CHECK(zero);
    break;
  }
  case 2:
    b->alignment = (size_t)1 << (4 + (seed >> 8) % 13); /* 16 B .. 64 KiB */
    b->p = b->heap ? nsalloc_heap_aligned_alloc(b->heap, b->alignment, size)
                   : nsalloc_aligned_alloc(b->alignment, size);
    break;
  default:
    b->p = (unsigned char *)nsalloc_strndup("0123456789abcdef", size % 17);
    CHECK(b->p && strlen((char *)b->p) == size % 17);
    b->heap = NULL;
    size = size % 17 + 1;
    break;
  }
  CHECK(b->p != NULL);
  b->size = size;
  b->seed = seed;
  if (b->p) test_fill(b->p, size, seed);
}

static void test_random_stream(void) {
  nsalloc_stats_t before, after;
  nsalloc_stats(&before);
  heaps[0] = nsalloc_heap_new();
  heaps[1] = nsalloc_heap_new();
  uint64_t rng = 0x5EED;
  size_t steps = test_scale(2000000);
  for (size_t i = 0; i < steps; i++)
    random_step(&rng);
  for (size_t i = 0; i < SLOTS; i++)
    if (model[i].p) release(&model[i]);
  nsalloc_heap_delete(heaps[0]);
  nsalloc_heap_delete(heaps[1]);
  nsalloc_stats(&after);
  CHECK_EQ(after.in_use_bytes, before.in_use_bytes);
  CHECK_EQ(after.in_use_blocks, before.in_use_blocks);
  CHECK_EQ(after.invalid_pointers, 0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {TEST(test_random_stream)};
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
