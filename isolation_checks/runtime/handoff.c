/*
 * handoff.c - a block of copy A handed to copy B's free, realloc and
 * usable_size, for every ordered pair of copies, in every policy:
 *   REPORT   each call is counted as foreign (exactly), diagnosed, and the
 *            block is left alone (contents and A's accounting intact);
 *   FORWARD  the calls reach A's allocator: usable sizes agree, realloc
 *            preserves the contents into a block of A, free returns it to A;
 *   ABORT    each call aborts with the diagnostic (observed in a child).
 */
#include "checks.h"
#include "pattern.h"
#include "verdict.h"

#include "test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define BLOCK_SIZE 48
#define GROWN_SIZE 96
#define SEED       0x48616e646f6666ULL

#define FOREIGN_TEXT "pointer not owned by this copy (foreign)"

typedef struct captured {
  size_t count;
  char last[2048];
} captured;

static void capture_message(const char *message, void *arg) {
  captured *c = arg;
  c->count++;
  snprintf(c->last, sizeof c->last, "%s", message);
}

static nsalloc_stats_t stats_of(const iso_copy *copy) {
  nsalloc_stats_t stats;
  copy->api->stats(&stats);
  return stats;
}

/* Does `text` say that copy b, handed a's block, refused it for `op`,
 * naming both copies by prefix and module file? With two copies of one
 * prefix, only the module tells which complained and which owns the block.
 * (Module files are matched by name: Windows reports a DOS path.) */
static bool names_both(const char *text, const iso_copy *a, const iso_copy *b, const char *op) {
  const char *owner = strstr(text, FOREIGN_TEXT ": a block of ");
  if (!owner) return false;
  char complainer[2048], call[64];
  snprintf(complainer, sizeof complainer, "%.*s", (int)(owner - text), text);
  snprintf(call, sizeof call, "]: %s(0x", op);
  return test_names_copy(complainer, b->api->prefix(), b->name) && strstr(complainer, call) &&
         test_names_copy(owner, a->api->prefix(), a->name);
}

static void expect_message(const captured *c, size_t count, const iso_copy *a, const iso_copy *b,
                           const char *op) {
  ISO_EXPECT(c->count == count && names_both(c->last, a, b, op),
             "%s: %s of %s's block gave message #%zu '%s'", b->name, op, a->name, c->count,
             c->last);
}

static void handoff_report(const iso_copy *a, const iso_copy *b, void *p) {
  captured messages = {0};
  b->api->set_message_handler(capture_message, &messages);
  ISO_EXPECT(b->api->set_foreign_policy(NSALLOC_POLICY_REPORT, NULL) == 0, "policy refused");
  nsalloc_stats_t a_before = stats_of(a), b_before = stats_of(b);
  b->api->free(p);
  expect_message(&messages, 1, a, b, "free");
  errno = 0;
  ISO_EXPECT(b->api->realloc(p, GROWN_SIZE) == NULL && errno == EINVAL,
             "%s: realloc of %s's block was not refused", b->name, a->name);
  expect_message(&messages, 2, a, b, "realloc");
  ISO_EXPECT(b->api->usable_size(p) == 0, "%s: usable_size of %s's block is not 0", b->name,
             a->name);
  expect_message(&messages, 3, a, b, "usable_size");
  nsalloc_stats_t a_after = stats_of(a), b_after = stats_of(b);
  ISO_EXPECT(b_after.foreign_pointers == b_before.foreign_pointers + 3 &&
                 b_after.forwarded == b_before.forwarded &&
                 b_after.invalid_pointers == b_before.invalid_pointers &&
                 b_after.in_use_blocks == b_before.in_use_blocks,
             "%s: report mode counted %llu foreign pointers, expected exactly 3", b->name,
             (unsigned long long)(b_after.foreign_pointers - b_before.foreign_pointers));
  ISO_EXPECT(a_after.in_use_blocks == a_before.in_use_blocks && a->api->owns(p) &&
                 iso_verify(p, BLOCK_SIZE, SEED),
             "%s: the block %s reported on was changed", a->name, b->name);
  b->api->set_message_handler(NULL, NULL);
}

/* Returns the grown block (A's). */
static void *handoff_forward(iso_copies *copies, const iso_copy *a, const iso_copy *b, void *p) {
  nsalloc_forward_t forward = iso_forward_to_owner(copies);
  ISO_EXPECT(b->api->set_foreign_policy(NSALLOC_POLICY_FORWARD, &forward) == 0, "policy refused");
  nsalloc_stats_t b_before = stats_of(b);
  ISO_EXPECT(b->api->usable_size(p) == a->api->usable_size(p),
             "%s: forwarded usable_size disagrees with %s", b->name, a->name);
  void *q = b->api->realloc(p, GROWN_SIZE);
  ISO_EXPECT(q && a->api->owns(q) && !b->api->owns(q) && iso_verify(q, BLOCK_SIZE, SEED),
             "%s: forwarded realloc did not preserve %s's block in %s", b->name, a->name, a->name);
  nsalloc_stats_t b_after = stats_of(b);
  ISO_EXPECT(b_after.forwarded == b_before.forwarded + 2 &&
                 b_after.foreign_pointers == b_before.foreign_pointers + 2,
             "%s: forward mode counted %llu forwarded, expected 2", b->name,
             (unsigned long long)(b_after.forwarded - b_before.forwarded));
  return q;
}

typedef struct abort_case {
  const iso_copy *b;
  void *p;
  const char *op;
} abort_case;

static void foreign_call_in_child(void *arg) {
  const abort_case *c = arg;
  const iso_module_api *api = c->b->api;
  api->set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
  if (strcmp(c->op, "free") == 0)
    api->free(c->p);
  else if (strcmp(c->op, "realloc") == 0)
    (void)api->realloc(c->p, GROWN_SIZE);
  else
    (void)api->usable_size(c->p);
}

static void handoff_abort(const iso_copy *a, const iso_copy *b, void *p) {
  static const char *const ops[] = {"free", "realloc", "usable_size"};
  for (size_t i = 0; i < 3; i++) {
    abort_case c = {b, p, ops[i]};
    char output[4096];
    int status = test_in_child(foreign_call_in_child, &c, output, sizeof output);
    ISO_EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
                   names_both(output, a, b, ops[i]) && strstr(output, "]; aborting"),
               "%s: %s of a foreign block did not abort with a diagnostic (status %#x): %s",
               b->name, ops[i], status, output);
  }
}

static void handoff_pair(iso_copies *copies, const iso_copy *a, const iso_copy *b) {
  void *p = a->api->malloc(BLOCK_SIZE);
  ISO_EXPECT(p, "%s: malloc failed", a->name);
  if (!p) return;
  iso_fill(p, BLOCK_SIZE, SEED);
  /* Everything below hands p to b as a FOREIGN block; if b owns it the two
   * "copies" share their state, and continuing would free p twice. */
  if (b->api->owns(p)) {
    ISO_EXPECT(false, "%s owns a block of %s: the copies share state", b->name, a->name);
    a->api->free(p);
    return;
  }
  handoff_report(a, b, p);
  handoff_abort(a, b, p);
  void *q = handoff_forward(copies, a, b, p);
  if (q) b->api->free(q); /* forwarded to a */
  b->api->set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
}

void check_handoff(iso_copies *copies) {
  size_t before = iso_violation_count();
  for (size_t i = 0; i < copies->count; i++)
    for (size_t j = 0; j < copies->count; j++)
      if (i != j) handoff_pair(copies, &copies->items[i], &copies->items[j]);
  for (size_t i = 0; i < copies->count; i++)
    iso_expect_balanced(&copies->items[i], true);
  printf("handoff: %zu ordered pairs x {report, forward, abort} x {free, realloc, usable_size}: "
         "%s\n",
         copies->count * (copies->count - 1),
         iso_violation_count() == before ? "every foreign block caught" : "NOT CAUGHT");
}
