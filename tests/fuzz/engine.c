/*
 * engine.c - decoding an input into operations, running them on the two
 * copies and checking every result against the shadow model (engine.h).
 *
 * Checks: every block returned is aligned, owned by its copy only, at least as
 * large as asked, zeroed when calloc'd, and overlaps no live block (nothing is
 * handed out twice); a block's contents survive until it is freed, and realloc
 * keeps them; usable_size is stable; after every operation each copy's
 * statistics (live blocks and bytes, invalid and foreign pointer counters)
 * and its diagnostics equal the model's. Invalid pointers: aim.c.
 */
#include "engine.h"
#include "engine_state.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fuzz_state fz;
const fuzz_copy *const copies[2] = {&fuzz_copy_a, &fuzz_copy_b};
uint64_t messages_seen[2];
char last_message[2][2048];
unsigned enabled_kinds;

static void (*failure_hook)(void);
static bool trace_live;

void engine_set_failure_hook(void (*hook)(void)) {
  failure_hook = hook;
}

uint8_t read_byte(reader *r) {
  return r->pos < r->size ? r->data[r->pos++] : 0;
}
uint16_t read_u16(reader *r) {
  uint16_t lo = read_byte(r);
  return (uint16_t)(lo | read_byte(r) << 8);
}

/* ---- trace and failure ------------------------------------------------------ */
#define TRACE_LINES 64
static char trace_ring[TRACE_LINES][200];
static size_t trace_count;

void trace(const char *format, ...) {
  char *line = trace_ring[trace_count++ % TRACE_LINES];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof trace_ring[0], format, args);
  va_end(args);
  if (trace_live) fprintf(stderr, "  op: %s\n", line);
}

void fuzz_fail(const char *format, ...) {
  fprintf(stderr, "nsalloc fuzz: DISCREPANCY: ");
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fprintf(stderr, "\nnsalloc fuzz: the last operations of this input (oldest first):\n");
  size_t first = trace_count > TRACE_LINES ? trace_count - TRACE_LINES : 0;
  for (size_t i = first; i < trace_count; i++)
    fprintf(stderr, "  %s\n", trace_ring[i % TRACE_LINES]);
  if (failure_hook) failure_hook();
  abort();
}

/* ---- diagnostics ------------------------------------------------------------ */
static void on_message(const char *message, void *arg) {
  int c = (int)(intptr_t)arg;
  messages_seen[c]++;
  snprintf(last_message[c], sizeof last_message[c], "%s", message);
}

static void engine_init(void) {
  static bool done;
  if (done) return;
  done = true;
  const char *kinds = getenv("NSALLOC_FUZZ_KINDS");
  enabled_kinds = parse_kinds(kinds ? kinds : "all");
  trace_live = getenv("NSALLOC_FUZZ_TRACE") != NULL;
  for (int c = 0; c < 2; c++) {
    copies[c]->set_message_handler(on_message, (void *)(intptr_t)c);
    if (copies[c]->set_foreign_policy(NSALLOC_POLICY_REPORT, NULL) != 0)
      fuzz_fail("%s: set_foreign_policy(REPORT) refused", copies[c]->prefix);
  }
}

/* ---- checks ----------------------------------------------------------------- */
static nsalloc_stats_t base[2]; /* each copy's counters when the input began */

static void check_copies(void) {
  for (int c = 0; c < 2; c++) {
    nsalloc_stats_t s;
    copies[c]->stats(&s);
    const char *name = copies[c]->prefix;
    if (s.in_use_blocks != fz.model.copy_blocks[c] || s.in_use_bytes != fz.model.copy_bytes[c])
      fuzz_fail("%s: stats say %zu live blocks / %zu bytes, the model %zu / %zu", name,
                s.in_use_blocks, s.in_use_bytes, fz.model.copy_blocks[c], fz.model.copy_bytes[c]);
    if (s.invalid_pointers - base[c].invalid_pointers != fz.invalid[c] ||
        s.foreign_pointers - base[c].foreign_pointers != fz.foreign[c] ||
        s.forwarded != base[c].forwarded)
      fuzz_fail("%s: stats count %llu invalid / %llu foreign pointers, the model %llu / %llu", name,
                (unsigned long long)(s.invalid_pointers - base[c].invalid_pointers),
                (unsigned long long)(s.foreign_pointers - base[c].foreign_pointers),
                (unsigned long long)fz.invalid[c], (unsigned long long)fz.foreign[c]);
    if (messages_seen[c] != fz.messages[c])
      fuzz_fail("%s: %llu diagnostics, the model expects %llu (last: %s)", name,
                (unsigned long long)messages_seen[c], (unsigned long long)fz.messages[c],
                last_message[c]);
  }
}

void check_block(const model_block *b, const char *when) {
  size_t bad = pattern_check(b->p, b->size, b->seed, b->size);
  if (bad != MODEL_NONE)
    fuzz_fail("%s: block %p (%zu bytes) of %s overwritten at offset %zu, %s",
              copies[b->copy]->prefix, (void *)b->p, b->size,
              b->heap == HEAP_DEFAULT ? "a default heap" : "a heap", bad, when);
}

void stale_push(int copy, void *p) {
  fz.stale[copy][fz.stale_next[copy]++ % STALE_RING] = p;
}

/* ---- decoding --------------------------------------------------------------- */
/* Sizes across small (most), medium, large and huge, plus the boundaries. */
static size_t read_size(reader *r) {
  static const size_t edges[] = {0,    1,    15,    16,    17,       48,
                                 112,  128,  129,   1024,  1025,     4096,
                                 8192, 8193, 65536, 65537, 2u << 20, (2u << 20) + 1};
  uint8_t kind = read_byte(r);
  size_t v = read_u16(r);
  switch (kind % 16) {
  case 9:
  case 10:
  case 11:
    return 1025 + v % (64 * 1024 - 1024);
  case 12:
  case 13:
    return 64 * 1024 + 1 + v * 32 % (LARGE_MAX_BYTES - 64 * 1024);
  case 14:
    return edges[v % (sizeof edges / sizeof edges[0])];
  case 15:
    return LARGE_MAX_BYTES + 1 + v * 64;
  default:
    return v % 1025;
  }
}

static size_t read_alignment(reader *r) {
  static const size_t alignments[] = {16,   32,    64,       128,      256,      4096,
                                      8192, 65536, 1u << 17, 1u << 20, 4u << 20, 8u << 20};
  return alignments[read_byte(r) % (sizeof alignments / sizeof alignments[0])];
}

/* A live block chosen by the input, or MODEL_NONE. */
static size_t read_block(reader *r) {
  uint8_t pick = read_byte(r);
  return fz.model.count ? pick % fz.model.count : MODEL_NONE;
}

/* ---- operations ------------------------------------------------------------- */
/* Check a block just returned by copy c and add it to the model. */
static void new_block(int c, int heap, void *p, size_t size, size_t alignment, bool zeroed,
                      bool exact_size, const char *what) {
  const char *name = copies[c]->prefix;
  trace("%s %s(%zu, align %zu) -> %p", name, what, size, alignment, p);
  if (!p) fuzz_fail("%s: %s(%zu) returned NULL", name, what, size);
  if ((uintptr_t)p % (alignment > 16 ? alignment : 16) != 0)
    fuzz_fail("%s: %s(%zu) returned %p, not aligned to %zu", name, what, size, p, alignment);
  if (!copies[c]->owns(p) || copies[1 - c]->owns(p))
    fuzz_fail("%s: %s returned %p, which owns() does not attribute to this copy alone", name, what,
              p);
  size_t usable = copies[c]->usable_size(p);
  if (usable < size || (exact_size && usable != copies[c]->good_size(size)))
    fuzz_fail("%s: %s(%zu) -> %p: usable_size %zu (good_size %zu)", name, what, size, p, usable,
              copies[c]->good_size(size));
  const model_block *hit = model_overlap(&fz.model, p, usable);
  if (hit)
    fuzz_fail("%s: %s(%zu) -> [%p, +%zu) overlaps the live block [%p, +%zu) of %s: handed out "
              "twice",
              name, what, size, p, usable, (void *)hit->p, hit->usable, copies[hit->copy]->prefix);
  if (zeroed) {
    size_t bad = zero_check(p, size);
    if (bad != MODEL_NONE) fuzz_fail("%s: %s(%zu) -> %p not zero at %zu", name, what, size, p, bad);
  }
  model_block b = {.p = p,
                   .size = size,
                   .usable = usable,
                   .alignment = alignment,
                   .seed = ++fz.next_seed,
                   .copy = c,
                   .heap = heap};
  pattern_fill(p, size, b.seed);
  model_insert(&fz.model, &b);
}

enum op_code {
  OPC_MALLOC,
  OPC_CALLOC,
  OPC_ALIGNED,
  OPC_REALLOC,
  OPC_FREE,
  OPC_USABLE_SIZE,
  OPC_HEAP_NEW,
  OPC_HEAP_MALLOC,
  OPC_HEAP_DESTROY,
  OPC_HEAP_DELETE,
  OPC_THREAD,
  OPC_COLLECT,
  OPC_INVALID,
  OPC_COUNT
};

static void op_alloc(reader *r, enum op_code which) {
  uint8_t c = read_byte(r) & 1;
  size_t alignment = which == OPC_ALIGNED ? read_alignment(r) : 0, size = read_size(r);
  if (fz.model.count == MODEL_MAX_BLOCKS) return;
  const fuzz_copy *copy = copies[c];
  if (which == OPC_MALLOC)
    new_block(c, HEAP_DEFAULT, copy->malloc(size), size, 0, false, true, "malloc");
  else if (which == OPC_CALLOC)
    new_block(c, HEAP_DEFAULT, copy->calloc(1, size), size, 0, true, true, "calloc");
  else
    new_block(c, HEAP_DEFAULT, copy->aligned_alloc(alignment, size), size, alignment, false, false,
              "aligned_alloc");
}

static void op_realloc(reader *r) {
  size_t i = read_block(r), size = read_size(r);
  if (i == MODEL_NONE) return;
  model_block b = fz.model.blocks[i];
  check_block(&b, "before realloc");
  trace("%s realloc(%p [%zu], %zu)", copies[b.copy]->prefix, (void *)b.p, b.size, size);
  void *q = copies[b.copy]->realloc(b.p, size);
  if (!q)
    fuzz_fail("%s: realloc(%p, %zu) returned NULL", copies[b.copy]->prefix, (void *)b.p, size);
  model_remove(&fz.model, i);
  size_t kept = b.size < size ? b.size : size;
  size_t bad = pattern_check(q, b.size, b.seed, kept);
  if (bad != MODEL_NONE)
    fuzz_fail("%s: realloc(%p, %zu) -> %p lost the contents at offset %zu", copies[b.copy]->prefix,
              (void *)b.p, size, q, bad);
  if (q != b.p) stale_push(b.copy, b.p);
  /* In place the block keeps its heap; moved, it comes from the caller's
   * default heap. */
  if (q == b.p)
    new_block(b.copy, b.heap, q, size, b.alignment, false, false, "realloc");
  else
    new_block(b.copy, HEAP_DEFAULT, q, size, 0, false, false, "realloc");
}

static void op_free(reader *r) {
  size_t i = read_block(r);
  uint8_t how = read_byte(r) % 3;
  if (i == MODEL_NONE) return;
  model_block b = fz.model.blocks[i];
  const fuzz_copy *copy = copies[b.copy];
  check_block(&b, "before free");
  model_remove(&fz.model, i);
  stale_push(b.copy, b.p);
  if (how == 2 && b.heap != HEAP_DEFAULT) {
    trace("%s heap_free(heap %d, %p)", copy->prefix, b.heap, (void *)b.p);
    copy->heap_free(fz.heaps[b.heap], b.p);
  } else if (how == 1) {
    trace("%s free_sized(%p, %zu)", copy->prefix, (void *)b.p, b.size);
    copy->free_sized(b.p, b.size);
  } else {
    trace("%s free(%p)", copy->prefix, (void *)b.p);
    copy->free(b.p);
  }
}

static void op_usable_size(reader *r) {
  size_t i = read_block(r);
  if (i == MODEL_NONE) return;
  const model_block *b = &fz.model.blocks[i];
  size_t usable = copies[b->copy]->usable_size(b->p);
  trace("%s usable_size(%p) -> %zu", copies[b->copy]->prefix, (void *)b->p, usable);
  if (usable != b->usable)
    fuzz_fail("%s: usable_size(%p) = %zu, was %zu", copies[b->copy]->prefix, (void *)b->p, usable,
              b->usable);
}

static void heap_new_in_slot(int s) {
  const fuzz_copy *copy = copies[s / HEAPS_PER_COPY];
  fz.heaps[s] = copy->heap_new();
  trace("%s heap %d = heap_new() -> %p", copy->prefix, s, (void *)fz.heaps[s]);
  if (!fz.heaps[s]) fuzz_fail("%s: heap_new returned NULL", copy->prefix);
}

static void op_heap_new(reader *r) {
  uint8_t c = read_byte(r) & 1;
  for (int s = c * HEAPS_PER_COPY; s < (c + 1) * HEAPS_PER_COPY; s++)
    if (!fz.heaps[s]) {
      heap_new_in_slot(s);
      return;
    }
}

/* The live heap slot the input names, or -1. */
static int read_heap(reader *r) {
  int s = read_byte(r) % (2 * HEAPS_PER_COPY);
  return fz.heaps[s] ? s : -1;
}

/* heap_malloc on a slot without a heap creates it first (short inputs reach
 * heaps that adopted abandoned segments sooner). */
static void op_heap_malloc(reader *r) {
  int s = read_byte(r) % (2 * HEAPS_PER_COPY), c = s / HEAPS_PER_COPY;
  size_t size = read_size(r);
  if (fz.model.count == MODEL_MAX_BLOCKS) return;
  if (!fz.heaps[s]) heap_new_in_slot(s);
  new_block(c, s, copies[c]->heap_malloc(fz.heaps[s], size), size, 0, false, true, "heap_malloc");
}

/* heap_destroy releases the heap's blocks with it; heap_delete hands them to
 * the calling thread's default heap. */
static void op_heap_end(reader *r, bool destroy) {
  int s = read_heap(r);
  if (s < 0) return;
  const fuzz_copy *copy = copies[s / HEAPS_PER_COPY];
  for (size_t i = fz.model.count; i-- > 0;) {
    model_block *b = &fz.model.blocks[i];
    if (b->heap != s) continue;
    check_block(b, destroy ? "before heap_destroy" : "before heap_delete");
    if (destroy) {
      stale_push(b->copy, b->p);
      model_remove(&fz.model, i);
    } else {
      b->heap = HEAP_DEFAULT;
    }
  }
  trace("%s heap_%s(heap %d)", copy->prefix, destroy ? "destroy" : "delete", s);
  if (destroy)
    copy->heap_destroy(fz.heaps[s]);
  else
    copy->heap_delete(fz.heaps[s]);
  fz.heaps[s] = NULL;
}

static void op_collect(reader *r) {
  uint8_t b = read_byte(r);
  trace("%s collect(%s)", copies[b & 1]->prefix, b & 2 ? "true" : "false");
  copies[b & 1]->collect(b & 2);
}

static void run_ops(reader *r, size_t max_ops, bool worker);

typedef struct worker_args {
  reader *r;
  size_t ops;
} worker_args;

static void *worker_main(void *arg) {
  worker_args *args = arg;
  run_ops(args->r, args->ops, true);
  return NULL;
}

/* A thread that runs the next operations of the input and exits (its heaps
 * are abandoned with whatever blocks it left); the main thread waits, so the
 * model is never shared. */
static void op_thread(reader *r, bool worker) {
  worker_args args = {r, read_byte(r) % 8 + 1};
  if (worker) return; /* no nesting */
  trace("thread: the next %zu operations", args.ops);
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker_main, &args) != 0) fuzz_fail("pthread_create failed");
  pthread_join(thread, NULL);
  trace("thread: exited");
}

static void run_op(reader *r, bool worker) {
  enum op_code code = read_byte(r) % OPC_COUNT;
  switch (code) {
  case OPC_MALLOC:
  case OPC_CALLOC:
  case OPC_ALIGNED:
    op_alloc(r, code);
    break;
  case OPC_REALLOC:
    op_realloc(r);
    break;
  case OPC_FREE:
    op_free(r);
    break;
  case OPC_USABLE_SIZE:
    op_usable_size(r);
    break;
  case OPC_HEAP_NEW:
    op_heap_new(r);
    break;
  case OPC_HEAP_MALLOC:
    op_heap_malloc(r);
    break;
  case OPC_HEAP_DESTROY:
    op_heap_end(r, true);
    break;
  case OPC_HEAP_DELETE:
    op_heap_end(r, false);
    break;
  case OPC_THREAD:
    op_thread(r, worker);
    break;
  case OPC_COLLECT:
    op_collect(r);
    break;
  case OPC_INVALID:
  case OPC_COUNT:
    op_invalid(r);
    break;
  }
}

static void run_ops(reader *r, size_t max_ops, bool worker) {
  for (size_t n = 0; n < max_ops && r->pos < r->size; n++) {
    run_op(r, worker);
    check_copies();
  }
}

/* ---- one input -------------------------------------------------------------- */
static void begin_input(void) {
  uint64_t seed = fz.next_seed;
  memset(&fz, 0, sizeof fz);
  fz.next_seed = seed;
  fz.libc_block = malloc(64);
  trace_count = 0;
  for (int c = 0; c < 2; c++) {
    copies[c]->stats(&base[c]);
    messages_seen[c] = 0;
  }
}

/* Free everything (contents checked), give the heaps back, collect both
 * copies: they must be empty again, with nothing left abandoned. */
static void end_input(void) {
  trace("end of input: free everything, delete the heaps, collect(true)");
  while (fz.model.count) {
    model_block b = fz.model.blocks[fz.model.count - 1];
    check_block(&b, "at the end of the input");
    model_remove(&fz.model, fz.model.count - 1);
    copies[b.copy]->free(b.p);
  }
  for (int s = 0; s < 2 * HEAPS_PER_COPY; s++)
    if (fz.heaps[s]) copies[s / HEAPS_PER_COPY]->heap_delete(fz.heaps[s]);
  for (int c = 0; c < 2; c++)
    copies[c]->collect(true);
  check_copies();
  for (int c = 0; c < 2; c++) {
    nsalloc_stats_t s;
    copies[c]->stats(&s);
    if (s.abandoned_segments != 0)
      fuzz_fail("%s: %zu abandoned segments left after collect(true)", copies[c]->prefix,
                s.abandoned_segments);
  }
  free(fz.libc_block);
}

void engine_run(const uint8_t *data, size_t size) {
  engine_init();
  begin_input();
  reader r = {data, size, 0};
  run_ops(&r, SIZE_MAX, false);
  end_input();
}
