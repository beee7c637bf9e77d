/*
 * engine_state.h - what engine.c (the operations and checks) and aim.c (the
 * invalid pointers) share: the input reader, the per-input state and the
 * failure and trace helpers.
 */
#ifndef NSALLOC_FUZZ_ENGINE_STATE_H
#define NSALLOC_FUZZ_ENGINE_STATE_H

#include "copy_api.h"
#include "model.h"

/* Geometry of the default build (docs/architecture.md), to aim at pages. */
#define SEGMENT_BYTES   ((uintptr_t)4 << 20)
#define SLICE_BYTES     ((uintptr_t)64 << 10)
#define SMALL_BLOCK_MAX 8192              /* blocks up to this live in 1-slice pages */
#define LARGE_MAX_BYTES ((size_t)2 << 20) /* beyond: a huge segment per block */

#define HEAPS_PER_COPY 4
#define STALE_RING     16

typedef struct reader {
  const uint8_t *data;
  size_t size, pos;
} reader;

/* Bytes past the end of the input read as 0. */
uint8_t read_byte(reader *r);
uint16_t read_u16(reader *r);

typedef struct fuzz_state {
  model model;
  nsalloc_heap_t *heaps[2 * HEAPS_PER_COPY]; /* slot s belongs to copy s / HEAPS_PER_COPY */
  void *stale[2][STALE_RING];                /* recently freed addresses, per copy */
  size_t stale_next[2];
  void *libc_block; /* a glibc block: a foreign pointer to both copies */
  /* What the copies must have counted since the input began. */
  uint64_t messages[2], invalid[2], foreign[2];
  uint64_t next_seed;
} fuzz_state;

extern fuzz_state fz;
extern const fuzz_copy *const copies[2];
/* Diagnostics each copy delivered to its message handler this input. */
extern uint64_t messages_seen[2];
extern char last_message[2][2048];
extern unsigned enabled_kinds; /* bit k: invalid pointer kind k (aim.c) */

void stale_push(int copy, void *p);
/* Print the discrepancy and the recent operations, then abort. */
void fuzz_fail(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Record one operation for the failure report (printed at once under
 * NSALLOC_FUZZ_TRACE=1). */
void trace(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Fail unless the block's fill pattern is intact. */
void check_block(const model_block *b, const char *when);

/* aim.c: one operation with an invalid pointer. */
void op_invalid(reader *r);
/* aim.c: the kinds' names, for NSALLOC_FUZZ_KINDS. */
unsigned parse_kinds(const char *list);

#endif
