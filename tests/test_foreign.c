/*
 * test_foreign.c - pointers that are not this copy's live blocks: glibc
 * blocks, stack and static addresses, another copy's blocks, interior
 * pointers, double frees and stale pointers. Each policy is observed: abort
 * (in a forked child), report (counted exactly, block left alone) and forward
 * (reaches the other allocator with its contents).
 *
 * The test program embeds copy t_ (the canonical names) and links a second
 * private copy, o_, through other_copy.c.
 */
#include "nsalloc.h"
#include "other_copy.h"
#include "test_util.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static char static_buffer[64];

/* ---- captured diagnostics ---------------------------------------------- */
static char last_message[512];
static int message_count;

static void capture(const char *message, void *arg) {
  (void)arg;
  strncpy(last_message, message, sizeof last_message - 1);
  message_count++;
}

static nsalloc_stats_t stats(void) {
  nsalloc_stats_t s;
  nsalloc_stats(&s);
  return s;
}

/* ---- abort: observed in a child ------------------------------------------- */
typedef struct bad_call {
  const char *op; /* "free", "realloc", "usable_size" */
  void *pointer;
} bad_call;

static void call_in_child(void *arg) {
  bad_call *call = arg;
  if (strcmp(call->op, "free") == 0)
    nsalloc_free(call->pointer);
  else if (strcmp(call->op, "realloc") == 0)
    (void)nsalloc_realloc(call->pointer, 100);
  else
    (void)nsalloc_usable_size(call->pointer);
}

/* The call must abort, and the message must name the copy (prefix and
 * module file: this program), operation, address and reason. */
static void expect_abort(const char *op, void *pointer, const char *reason) {
  char output[4096], expected[128];
  bad_call call = {op, pointer};
  int status = test_in_child(call_in_child, &call, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  snprintf(expected, sizeof expected, "]: %s(0x%" PRIxPTR "): ", op, (uintptr_t)pointer);
  bool named = test_names_copy(output, "t_", "test_foreign");
  CHECK(named);
  CHECK(strstr(output, expected) != NULL);
  CHECK(strstr(output, reason) != NULL);
  if (!named || !strstr(output, expected) || !strstr(output, reason))
    fprintf(stderr, "  child said: %s\n  expected: nsalloc[t_ in ...test_foreign%s ... %s\n",
            output, expected, reason);
}

static void test_abort_on_foreign_pointers(void) {
  int on_stack;
  void *from_libc = malloc(48);
  static const char *const ops[] = {"free", "realloc", "usable_size"};
  for (int i = 0; i < 3; i++) {
    expect_abort(ops[i], from_libc, "not owned by this copy (foreign); aborting");
    expect_abort(ops[i], &on_stack, "not owned by this copy (foreign); aborting");
    expect_abort(ops[i], static_buffer, "not owned by this copy (foreign); aborting");
  }
  free(from_libc);
}

/* Another copy's blocks are recognised by their segment's signature, and
 * the message names their owner: small, large and huge blocks, huge ones
 * aligned to 4 and 8 MiB (they start one alignment past their segment). */
static void test_abort_names_the_owning_copy(void) {
  void *blocks[] = {other_malloc(48), other_malloc(300000), other_malloc((size_t)20 << 20),
                    other_aligned_alloc((size_t)4 << 20, (size_t)5 << 20),
                    other_aligned_alloc((size_t)8 << 20, 100)};
  static const char *const ops[] = {"free", "realloc", "usable_size"};
  for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
    CHECK(blocks[b] != NULL);
    for (int i = 0; i < 3; i++) {
      char output[4096];
      bad_call call = {ops[i], blocks[b]};
      int status = test_in_child(call_in_child, &call, output, sizeof output);
      CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
      bool named = test_names_copy(output, "t_", "test_foreign") &&
                   strstr(output, "not owned by this copy (foreign): a block of nsalloc[o_ in ") &&
                   test_names_copy(output, "o_", "test_foreign") && strstr(output, "; aborting");
      CHECK(named);
      if (!named) fprintf(stderr, "  block %zu, %s: child said: %s\n", b, ops[i], output);
    }
    other_free(blocks[b]);
  }
}

static void test_abort_on_invalid_own_pointers(void) {
  char *block = nsalloc_malloc(64);
  char *large = nsalloc_malloc(300000);
  char *huge = nsalloc_malloc((size_t)5 << 20);
  expect_abort("free", block + 16, "interior pointer");
  expect_abort("free", block + 1, "interior pointer");
  expect_abort("realloc", large + 4096, "interior pointer");
  expect_abort("free", huge + 64, "interior pointer");
  expect_abort("usable_size", block + 32, "interior pointer");
  char *freed = nsalloc_malloc(64);
  nsalloc_free(freed);
  expect_abort("free", freed, "double free");
  expect_abort("realloc", freed, "double free");
  /* a page that no longer exists (its blocks all freed and collected) */
  char *gone = nsalloc_malloc(40000);
  nsalloc_free(gone);
  nsalloc_collect(true);
  expect_abort("free", gone, "no block is allocated");
  /* block positions of a live page that were never carved, near and far */
  expect_abort("free", block + 64 * 100, "no block is allocated");
  expect_abort("usable_size", block + 64 * 1000, "no block is allocated");
  expect_abort("realloc", block + 64 * 1000, "no block is allocated");
  nsalloc_free(block);
  nsalloc_free(large);
  nsalloc_free(huge);
}

/* The last, incomplete block position of a page (its start is a multiple of
 * the block size, but the block would run into the next slice): never a
 * block, even once the whole page is carved. Regression: it passed the free
 * fast path, and a later malloc handed it out over its neighbour. */
static void test_abort_on_partial_tail_block(void) {
  enum { SIZE = 48, SLICE = 64 * 1024, COUNT = SLICE / SIZE };
  char *blocks[COUNT];
  for (int i = 0; i < COUNT; i++)
    blocks[i] = nsalloc_malloc(SIZE);
  /* COUNT allocations fill at least one whole 48-byte page; the page of the
   * lowest block that starts a slice-aligned run ends COUNT blocks later. */
  char *start = NULL;
  for (int i = 0; i < COUNT && !start; i++)
    if (((uintptr_t)blocks[i] & (SLICE - 1)) == 0) start = blocks[i];
  CHECK(start != NULL);
  if (start) {
    char *tail = start + (size_t)COUNT * SIZE; /* 65520: 16 bytes before the slice's end */
    expect_abort("free", tail, "no block is allocated");
    expect_abort("usable_size", tail, "no block is allocated");
  }
  for (int i = 0; i < COUNT; i++)
    nsalloc_free(blocks[i]);
}

/* ---- report: counted exactly, nothing touched ----------------------------- */
static void test_report_counts_exactly(void) {
  nsalloc_set_message_handler(capture, NULL);
  CHECK_EQ(nsalloc_set_foreign_policy(NSALLOC_POLICY_REPORT, NULL), 0);
  nsalloc_stats_t before = stats();
  message_count = 0;

  unsigned char *from_other = other_malloc(64);
  memset(from_other, 0x5A, 64);
  nsalloc_free(from_other);
  CHECK(strstr(last_message, "free(") && test_names_copy(last_message, "t_", "test_foreign") &&
        test_names_copy(last_message, "o_", "test_foreign") && strstr(last_message, "left alone"));
  errno = 0;
  CHECK(nsalloc_realloc(from_other, 128) == NULL && errno == EINVAL);
  CHECK(strstr(last_message, "realloc refused"));
  CHECK_EQ(nsalloc_usable_size(from_other), 0);
  nsalloc_free_sized(from_other, 64);
  bool intact = true;
  for (int i = 0; i < 64; i++)
    intact &= from_other[i] == 0x5A;
  CHECK(intact); /* the other copy's block was never written */
  CHECK(other_usable_size(from_other) >= 64);
  other_free(from_other);

  char *block = nsalloc_malloc(64);
  nsalloc_free(block + 16); /* interior: reported, ignored */
  nsalloc_free(block);
  nsalloc_free(block); /* double free: reported, ignored */
  /* free_sized takes free's fast path and names itself in the diagnostic. */
  char *sized = nsalloc_malloc(64);
  nsalloc_free_sized(sized, 64);
  nsalloc_free_sized(sized, 64);
  CHECK(strstr(last_message, "free_sized(") && strstr(last_message, "double free"));

  nsalloc_stats_t after = stats();
  CHECK_EQ(after.foreign_pointers - before.foreign_pointers, 4);
  CHECK_EQ(after.invalid_pointers - before.invalid_pointers, 3);
  CHECK_EQ(after.forwarded - before.forwarded, 0);
  CHECK_EQ(message_count, 7);
  nsalloc_set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
  nsalloc_set_message_handler(NULL, NULL);
}

/* ---- forward: foreign blocks reach the other allocator ----------------------- */
static int forwarded_frees;
static void *last_ctx; /* the ctx the last forward hook was called with */

static void forward_free(void *ctx, void *p) {
  last_ctx = ctx;
  forwarded_frees++;
  other_free(p);
}
static void *forward_realloc(void *ctx, void *p, size_t size) {
  last_ctx = ctx;
  return other_realloc(p, size);
}
static size_t forward_usable_size(void *ctx, const void *p) {
  last_ctx = ctx;
  return other_usable_size(p);
}

static void test_forward_preserves_contents(void) {
  nsalloc_forward_t forward = {&forwarded_frees, forward_free, forward_realloc,
                               forward_usable_size};
  CHECK_EQ(nsalloc_set_foreign_policy(NSALLOC_POLICY_FORWARD, &forward), 0);
  nsalloc_stats_t before = stats();
  unsigned long *keys = other_malloc(48);
  keys[0] = 0xA1, keys[1] = 0xB2, keys[2] = 0xC3;
  last_ctx = NULL;
  keys = nsalloc_realloc(keys, 96); /* the incident's call, in the wrong copy */
  CHECK(last_ctx == &forwarded_frees);
  CHECK(keys && other_owns(keys) && !nsalloc_owns(keys));
  CHECK(keys && keys[0] == 0xA1 && keys[1] == 0xB2 && keys[2] == 0xC3);
  last_ctx = NULL;
  CHECK(nsalloc_usable_size(keys) >= 96);
  CHECK(last_ctx == &forwarded_frees);
  last_ctx = NULL;
  nsalloc_free(keys);
  CHECK_EQ(forwarded_frees, 1);
  CHECK(last_ctx == &forwarded_frees);
  nsalloc_stats_t after = stats();
  CHECK_EQ(after.forwarded - before.forwarded, 3);
  /* invalid pointers into this copy are never forwarded */
  char *block = nsalloc_malloc(64);
  expect_abort("free", block + 16, "interior pointer");
  nsalloc_free(block);
  nsalloc_set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
}

/* nsalloc_forwarding_free/realloc hand their own ctx to the forward hooks
 * (NULL: the registered one), as a binding serving several domains needs; a
 * block of this copy is freed or resized as by nsalloc_free/realloc. */
static void test_forwarding_calls_pass_their_ctx(void) {
  static int domain_a, domain_b;
  nsalloc_forward_t forward = {&domain_a, forward_free, forward_realloc, forward_usable_size};
  CHECK_EQ(nsalloc_set_foreign_policy(NSALLOC_POLICY_FORWARD, &forward), 0);
  unsigned long *p = other_malloc(32);
  p[0] = 0xD4;
  p = nsalloc_forwarding_realloc(p, 4096, &domain_b);
  CHECK(p && other_owns(p) && p[0] == 0xD4 && last_ctx == &domain_b);
  nsalloc_forwarding_free(p, &domain_b);
  CHECK(last_ctx == &domain_b);
  nsalloc_forwarding_free(other_malloc(32), NULL);
  CHECK(last_ctx == &domain_a);
  nsalloc_free(other_malloc(32));
  CHECK(last_ctx == &domain_a);
  void *fresh = nsalloc_forwarding_realloc(NULL, 16, &domain_b); /* a malloc */
  CHECK(fresh && nsalloc_owns(fresh));
  nsalloc_free(fresh);
  int frees_before = forwarded_frees;
  last_ctx = NULL;
  char *mine = nsalloc_forwarding_realloc(nsalloc_malloc(40), 5000, &domain_b);
  CHECK(mine && nsalloc_owns(mine));
  nsalloc_forwarding_free(mine, &domain_b);
  CHECK(last_ctx == NULL && forwarded_frees == frees_before);
  nsalloc_set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
}

/* The other direction: this copy's blocks are foreign to the other copy. */
static void test_copies_do_not_own_each_other(void) {
  void *mine = nsalloc_malloc(100), *theirs = other_malloc(100);
  CHECK(nsalloc_owns(mine) && !nsalloc_owns(theirs));
  CHECK(other_owns(theirs) && !other_owns(mine));
  nsalloc_free(mine);
  other_free(theirs);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_abort_on_foreign_pointers),     TEST(test_abort_names_the_owning_copy),
      TEST(test_abort_on_invalid_own_pointers), TEST(test_abort_on_partial_tail_block),
      TEST(test_report_counts_exactly),         TEST(test_forward_preserves_contents),
      TEST(test_copies_do_not_own_each_other),  TEST(test_forwarding_calls_pass_their_ctx),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
