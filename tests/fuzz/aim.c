/*
 * aim.c - invalid pointers for the differential fuzzer, aimed with the
 * documented geometry (4 MiB segments of 64 KiB slices; blocks up to 8 KiB
 * live in one-slice pages whose blocks start at the slice, carved lazily):
 *
 *   free-position    k blocks after a live small block, where no live block
 *                    is (a freed block, carved but never handed out, or not
 *                    carved yet)
 *   never-carved     the last whole block position of a small page (carved
 *                    only once ~all its blocks were handed out, which the
 *                    model's 256 blocks never reach)
 *   page-tail        the partial block position at a small page's end
 *   interior         inside a live block (small, medium, large or huge)
 *   segment-header   slice 0 of a live block's segment (the header)
 *   huge-past-end    just past a huge block
 *   stale            an address freed (or destroyed with its heap) earlier
 *   libc, stack, static, other-copy   foreign memory
 *
 * Each goes to free, free_sized, heap_free, realloc or usable_size of one
 * copy, whose policy is `report`: the call must deliver exactly one
 * diagnostic naming the copy, the operation and the address, count one
 * invalid (this copy's memory) or foreign pointer, and change nothing:
 * realloc returns NULL with errno EINVAL, usable_size 0, and every live
 * block stays as it was.
 */
#include "engine_state.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum kind {
  K_FREE_POSITION,
  K_NEVER_CARVED,
  K_PAGE_TAIL,
  K_INTERIOR,
  K_SEGMENT_HEADER,
  K_HUGE_PAST_END,
  K_STALE,
  K_LIBC,
  K_STACK,
  K_STATIC,
  K_OTHER_COPY,
  K_COUNT
};

static const char *const kind_names[K_COUNT] = {
    "free-position", "never-carved", "page-tail", "interior", "segment-header", "huge-past-end",
    "stale",         "libc",         "stack",     "static",   "other-copy"};

/* "all", "none" or a comma-separated list of kind names. */
unsigned parse_kinds(const char *list) {
  if (strcmp(list, "all") == 0) return (1u << K_COUNT) - 1;
  unsigned mask = 0;
  for (int k = 0; k < K_COUNT; k++) {
    size_t n = strlen(kind_names[k]);
    for (const char *s = list; (s = strstr(s, kind_names[k])) != NULL; s += n)
      if ((s == list || s[-1] == ',') && (s[n] == ',' || s[n] == '\0')) mask |= 1u << k;
  }
  return mask;
}

static char static_bytes[64];

/* What the copy must make of the pointer. */
enum verdict { MUST_BE_INVALID, MUST_BE_FOREIGN, ASK_OWNS };

typedef struct target {
  int copy;
  uint8_t *q;
  enum verdict verdict;
  const model_block *near; /* a live block next to q, checked afterwards */
} target;

static bool huge_block(const model_block *b) {
  return b->usable > LARGE_MAX_BYTES || b->alignment > LARGE_MAX_BYTES;
}
static bool small_page_block(const model_block *b) {
  return b->usable <= SMALL_BLOCK_MAX && !huge_block(b);
}

/* The first live block from index `pick` on (cyclically) that `fits`. */
static const model_block *find_block(uint8_t pick, bool (*fits)(const model_block *)) {
  for (size_t n = 0; n < fz.model.count; n++) {
    const model_block *b = &fz.model.blocks[(pick + n) % fz.model.count];
    if (!fits || fits(b)) return b;
  }
  return NULL;
}

/* A block position of b's one-slice page: `index` blocks from the page start. */
static uint8_t *page_position(const model_block *b, size_t index) {
  uintptr_t page = (uintptr_t)b->p & ~(SLICE_BYTES - 1);
  return (uint8_t *)(page + index * b->usable);
}

static bool aim(enum kind kind, uint8_t pick, uint8_t arg, target *t, void *stack_address) {
  const model_block *b = NULL;
  t->verdict = MUST_BE_INVALID;
  t->copy = pick & 1;
  switch (kind) {
  case K_FREE_POSITION:
  case K_NEVER_CARVED:
  case K_PAGE_TAIL: {
    if (!(b = find_block(pick, small_page_block))) return false;
    size_t whole = SLICE_BYTES / b->usable;
    size_t index = ((uintptr_t)b->p & (SLICE_BYTES - 1)) / b->usable;
    if (kind == K_FREE_POSITION)
      index += 1 + arg % 16;
    else if (kind == K_NEVER_CARVED)
      index = whole - 1;
    else if (SLICE_BYTES % b->usable == 0)
      return false; /* no partial block in this page */
    else
      index = whole;
    if (index > whole) return false;
    t->q = page_position(b, index);
    break;
  }
  case K_INTERIOR: {
    if (!(b = find_block(pick, NULL)) || b->usable <= 16) return false;
    const size_t offsets[] = {1, 8, 16, (b->usable / 2) & ~(size_t)15, b->usable - 16};
    t->q = b->p + offsets[arg % 5];
    break;
  }
  case K_SEGMENT_HEADER:
    if (!(b = find_block(pick, NULL))) return false;
    t->q = (uint8_t *)((uintptr_t)b->p & ~(SEGMENT_BYTES - 1)) + 16 * (arg + 1);
    if (t->q >= b->p) return false; /* a huge block aligned to 4 MiB starts a unit */
    break;
  case K_HUGE_PAST_END:
    if (!(b = find_block(pick, huge_block))) return false;
    t->q = b->p + b->usable + 16 * arg;
    t->verdict = ASK_OWNS; /* past the segment: foreign, unless the next unit is ours */
    break;
  case K_STALE:
    t->q = fz.stale[t->copy][arg % STALE_RING];
    t->verdict = ASK_OWNS; /* its segment may have been returned to the OS */
    if (!t->q) return false;
    break;
  case K_OTHER_COPY:
    if (!(b = find_block(pick, NULL))) return false;
    t->copy = 1 - b->copy;
    t->q = b->p + (arg & 1 ? 16 : 0);
    t->verdict = MUST_BE_FOREIGN;
    break;
  case K_LIBC:
  case K_STACK:
  case K_STATIC:
    t->q = kind == K_LIBC    ? fz.libc_block
           : kind == K_STACK ? stack_address
                             : (uint8_t *)static_bytes;
    t->verdict = MUST_BE_FOREIGN;
    break;
  case K_COUNT:
    return false;
  }
  if (b && t->verdict != MUST_BE_FOREIGN) t->copy = b->copy;
  t->near = b;
  /* Never a live block start: that would be a valid call. */
  return model_find(&fz.model, t->q) == MODEL_NONE;
}

enum how { H_FREE, H_FREE_SIZED, H_HEAP_FREE, H_REALLOC, H_USABLE_SIZE, H_COUNT };
static const char *const how_names[H_COUNT] = {"free", "free_sized", "heap_free", "realloc",
                                               "usable_size"};

/* A live heap of the copy for heap_free, or NULL. */
static nsalloc_heap_t *heap_of_copy(int c) {
  for (int s = c * HEAPS_PER_COPY; s < (c + 1) * HEAPS_PER_COPY; s++)
    if (fz.heaps[s]) return fz.heaps[s];
  return NULL;
}

void op_invalid(reader *r) {
  enum kind kind = read_byte(r) % K_COUNT;
  enum how how = read_byte(r) % H_COUNT;
  uint8_t pick = read_byte(r), arg = read_byte(r);
  int on_stack = 0;
  target t;
  if (!(enabled_kinds & 1u << kind) || !aim(kind, pick, arg, &t, &on_stack)) return;
  const fuzz_copy *copy = copies[t.copy];
  nsalloc_heap_t *heap = heap_of_copy(t.copy);
  if (how == H_HEAP_FREE && !heap) how = H_FREE;
  bool owned = copy->owns(t.q);
  if ((t.verdict == MUST_BE_INVALID && !owned) || (t.verdict == MUST_BE_FOREIGN && owned))
    fuzz_fail("%s: owns(%p) = %d for a %s pointer", copy->prefix, (void *)t.q, owned,
              kind_names[kind]);
  trace("%s %s(%p) [%s%s%s]", copy->prefix, how_names[how], (void *)t.q, kind_names[kind],
        t.near ? ", near block " : "", t.near ? copies[t.near->copy]->prefix : "");
  uint64_t before = messages_seen[t.copy];
  switch (how) {
  case H_FREE:
    copy->free(t.q);
    break;
  case H_FREE_SIZED:
    copy->free_sized(t.q, 16);
    break;
  case H_HEAP_FREE:
    copy->heap_free(heap, t.q);
    break;
  case H_REALLOC: {
    errno = 0;
    void *result = copy->realloc(t.q, 64);
    if (result || errno != EINVAL)
      fuzz_fail("%s: realloc(%p) of a %s pointer returned %p, errno %d (want NULL, EINVAL)",
                copy->prefix, (void *)t.q, kind_names[kind], result, errno);
    break;
  }
  case H_USABLE_SIZE: {
    size_t usable = copy->usable_size(t.q);
    if (usable != 0)
      fuzz_fail("%s: usable_size(%p) of a %s pointer = %zu (want 0)", copy->prefix, (void *)t.q,
                kind_names[kind], usable);
    break;
  }
  case H_COUNT:
    break;
  }
  fz.messages[t.copy]++;
  if (owned)
    fz.invalid[t.copy]++;
  else
    fz.foreign[t.copy]++;
  if (messages_seen[t.copy] != before + 1)
    fuzz_fail("%s: %s(%p) of a %s pointer gave %llu diagnostics (want 1)", copy->prefix,
              how_names[how], (void *)t.q, kind_names[kind],
              (unsigned long long)(messages_seen[t.copy] - before));
  /* "nsalloc[<prefix> in <module>]: <op>(<address>)" */
  char name[96], call[96];
  snprintf(name, sizeof name, "nsalloc[%s in ", copy->prefix);
  snprintf(call, sizeof call, "]: %s(%p)", how_names[how], (void *)t.q);
  if (strncmp(last_message[t.copy], name, strlen(name)) != 0 || !strstr(last_message[t.copy], call))
    fuzz_fail("%s: diagnostic \"%s\" is not \"%s<module>%s\"", copy->prefix, last_message[t.copy],
              name, call);
  if (t.near) check_block(t.near, "after an invalid call next to it");
}
