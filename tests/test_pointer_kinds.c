/*
 * test_pointer_kinds.c - what free, realloc and usable_size do with every
 * kind of pointer, under each foreign-pointer policy: one test per kind x
 * operation x policy (the table in docs/architecture.md names these rows).
 *
 * Every test runs in a forked child of a process that never touched the copy,
 * so each starts from the same fresh state and an abort is observed from
 * outside:
 *   abort    foreign and invalid pointers: SIGABRT, and the diagnostic names
 *            the prefix, the operation and the address, and says why.
 *   report   exactly one diagnostic (same names), one foreign or invalid
 *            pointer counted, nothing changed: live blocks as before, realloc
 *            returns NULL with errno EINVAL, usable_size 0, and an
 *            unallocated position is never handed out afterwards.
 *   forward  foreign pointers reach the hooks (and only once); pointers into
 *            the copy that are not live block starts are never forwarded:
 *            they abort.
 * Live block starts and NULL behave the same under every policy.
 */
#include "nsalloc.h"
#include "other_copy.h"
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLICE   ((uintptr_t)64 << 10)
#define SEGMENT ((uintptr_t)4 << 20)
#define HUGE    ((size_t)5 << 20)

static char static_bytes[64];

/* ---- the pointer kinds ------------------------------------------------------ */
typedef enum { LIVE, NULL_POINTER, FOREIGN, INVALID } expectation;

typedef struct made {
  char *p;           /* the pointer handed to the operation */
  size_t size;       /* LIVE: its requested size */
  bool readable;     /* FOREIGN: memory the test may read (to see it left alone) */
  size_t reuse_size; /* never-carved and tail positions: after the call, this */
  int reuse_count;   /* many malloc(reuse_size) must not return p (a fresh page
                      * hands out its blocks in order, p's turn comes later or never) */
} made;

typedef struct kind_row {
  const char *name;
  expectation expect;
  const char *reason; /* what the diagnostic says; alternatives separated by '|' */
  void (*make)(made *m, char *stack);
  const char *fails_on_ecb8ede; /* the issue item when the current core gets it wrong */
} kind_row;

static const char *const foreign_reason = "pointer not owned by this copy (foreign)";
static const char *const interior_reason = "interior pointer (not the start of a block)";
static const char *const unallocated_reason = "no block is allocated at this address";

static void make_live(made *m, size_t size) {
  m->p = nsalloc_malloc(size);
  m->size = size;
  test_fill(m->p, size, 7);
}
static void live_small(made *m, char *stack) {
  (void)stack;
  make_live(m, 100);
}
static void live_large(made *m, char *stack) {
  (void)stack;
  make_live(m, 300000);
}
static void live_huge(made *m, char *stack) {
  (void)stack;
  make_live(m, HUGE);
}
static void null_pointer(made *m, char *stack) {
  (void)stack;
  m->p = NULL;
}
/* Foreign memory with known contents, to see that it is left alone. */
static void make_foreign(made *m, char *p) {
  memset(p, 0x5A, 16);
  m->p = p;
  m->readable = true;
}
static void foreign_libc(made *m, char *stack) {
  (void)stack;
  make_foreign(m, malloc(48));
}
static void foreign_stack(made *m, char *stack) {
  make_foreign(m, stack);
}
static void foreign_static(made *m, char *stack) {
  (void)stack;
  make_foreign(m, static_bytes);
}
static void other_copy_block(made *m, char *stack) {
  (void)stack;
  make_foreign(m, other_malloc(48));
}
static void interior_small(made *m, char *stack) {
  (void)stack;
  m->p = (char *)nsalloc_malloc(100) + 16;
}
static void interior_large(made *m, char *stack) {
  (void)stack;
  m->p = (char *)nsalloc_malloc(300000) + 4096;
}
/* A large block that realloc grew in place from 2 slices (128 KiB) to 5:
 * the block of a fresh segment's first page, with the slices after it free. */
static char *grown_large(void) {
  char *p = nsalloc_malloc(100000);
  test_fill(p, 100000, 7);
  char *grown = nsalloc_realloc(p, 300000);
  CHECK(grown == p && test_verify(grown, 100000, 7));
  return grown;
}
static void live_grown_large(made *m, char *stack) {
  (void)stack;
  m->p = grown_large();
  m->size = 300000;
  test_fill(m->p, m->size, 7);
}
/* Where a second block of the size at birth would start: the page keeps that
 * size's block_position() magic, so this offset must still read as interior. */
static void interior_grown_large(made *m, char *stack) {
  (void)stack;
  m->p = grown_large() + 2 * SLICE;
}
static void interior_huge(made *m, char *stack) {
  (void)stack;
  m->p = (char *)nsalloc_malloc(HUGE) + 64;
}
/* The start of the one-slice page of a small block (docs/architecture.md). */
static char *page_of(void *block) {
  return (char *)((uintptr_t)block & ~(SLICE - 1));
}
/* The last whole 64-byte block of a page of 1024: carved only once about a
 * thousand blocks were handed out; here one was. */
static void never_carved(made *m, char *stack) {
  (void)stack;
  m->p = page_of(nsalloc_malloc(64)) + (SLICE / 64 - 1) * 64;
  m->reuse_size = 64, m->reuse_count = 1000;
}
/* 64 KiB / 48 B = 1365 blocks and 16 bytes: the position of block 1365 is
 * block-aligned but only 16 bytes of it are in the page. */
static void page_tail(made *m, char *stack) {
  (void)stack;
  m->p = page_of(nsalloc_malloc(48)) + (SLICE / 48) * 48;
  m->reuse_size = 48, m->reuse_count = 1400;
}
/* The block after the first one of a fresh page: carved with it (pages are
 * carved an OS page at a time) but never handed out. */
static void carved_unused(made *m, char *stack) {
  (void)stack;
  m->p = (char *)nsalloc_malloc(64) + 64;
}
static void double_free(made *m, char *stack) {
  (void)stack;
  m->p = nsalloc_malloc(100);
  nsalloc_free(m->p);
}
/* Blocks of another thread's heap: the helper allocates them and then stays
 * alive (it waits until the child exits), so its pages keep its owner key and
 * this thread's free takes the remote fast path. */
typedef struct helper_s {
  size_t size;
  char *block;
  sem_t done, never;
} helper_t;
static void *helper_thread(void *arg) {
  helper_t *h = arg;
  h->block = nsalloc_malloc(h->size);
  test_fill(h->block, h->size, 7);
  sem_post(&h->done);
  sem_wait(&h->never);
  return NULL;
}
static char *other_thread_block(size_t size) {
  static helper_t h;
  h.size = size;
  pthread_t thread;
  CHECK(sem_init(&h.done, 0, 0) == 0 && sem_init(&h.never, 0, 0) == 0 &&
        pthread_create(&thread, NULL, helper_thread, &h) == 0);
  sem_wait(&h.done);
  return h.block;
}
static void remote_small(made *m, char *stack) {
  (void)stack;
  m->p = other_thread_block(100);
  m->size = 100;
}
static void remote_interior(made *m, char *stack) {
  (void)stack;
  m->p = other_thread_block(100) + 16;
}
/* Freed once by this thread (pushed onto the other thread's page), then
 * handed again. */
static void remote_double_free(made *m, char *stack) {
  (void)stack;
  m->p = other_thread_block(100);
  nsalloc_free(m->p);
}
/* A page whose blocks were all freed and which went back to its segment; the
 * segment lives on (another block holds it). */
static void freed_page(made *m, char *stack) {
  (void)stack;
  void *keep = nsalloc_malloc(100);
  (void)keep;
  m->p = nsalloc_malloc(40000);
  nsalloc_free(m->p);
  nsalloc_collect(true);
  CHECK(nsalloc_owns(m->p));
}
/* A segment without pages, kept in the copy's cache. */
static void cached_segment(made *m, char *stack) {
  (void)stack;
  m->p = nsalloc_malloc(100);
  nsalloc_free(m->p);
  nsalloc_collect(true);
  CHECK(nsalloc_owns(m->p)); /* still registered: the segment is cached, not unmapped */
}
/* The header slice of a huge block's segment, before the block. */
static void huge_header(made *m, char *stack) {
  (void)stack;
  m->p = (char *)((uintptr_t)nsalloc_malloc(HUGE) & ~(SEGMENT - 1)) + 64;
}
/* Past a huge block's segment: not this copy's memory. The segment is whole
 * units of half a segment (core/internal.h HUGE_UNIT: 2 MiB here), so it ends
 * less than 2 MiB past the block. */
static void huge_past_end(made *m, char *stack) {
  (void)stack;
  char *huge = nsalloc_malloc(HUGE);
  m->p = huge + nsalloc_usable_size(huge) + ((size_t)2 << 20) + 4096;
}

static const kind_row kinds[] = {
    {"live_small", LIVE, NULL, live_small, NULL},
    {"live_large", LIVE, NULL, live_large, NULL},
    {"live_huge", LIVE, NULL, live_huge, NULL},
    {"null", NULL_POINTER, NULL, null_pointer, NULL},
    {"foreign_libc", FOREIGN, NULL, foreign_libc, NULL},
    {"foreign_stack", FOREIGN, NULL, foreign_stack, NULL},
    {"foreign_static", FOREIGN, NULL, foreign_static, NULL},
    {"other_copy", FOREIGN, "not owned by this copy (foreign): a block of nsalloc[o_ in ",
     other_copy_block, NULL},
    {"huge_past_end", FOREIGN, NULL, huge_past_end, NULL},
    {"interior_small", INVALID, NULL, interior_small, NULL},
    {"interior_large", INVALID, NULL, interior_large, NULL},
    {"interior_huge", INVALID, NULL, interior_huge, NULL},
    {"live_grown_large", LIVE, NULL, live_grown_large, NULL},
    {"interior_grown_large", INVALID, NULL, interior_grown_large, NULL},
    {"huge_header", INVALID, NULL, huge_header, NULL},
    {"never_carved", INVALID, NULL, never_carved, "issue item 1"},
    {"page_tail", INVALID, NULL, page_tail, "issue item 2"},
    {"carved_unused", INVALID, "no block is allocated at this address|double free", carved_unused,
     "fuzzer finding: a carved block never handed out"},
    {"double_free", INVALID, "double free (the block is already free)", double_free, NULL},
    {"remote_small", LIVE, NULL, remote_small, NULL},
    {"remote_interior", INVALID, "interior pointer (not the start of a block)", remote_interior,
     NULL},
    {"remote_double_free", INVALID, "double free (the block is already free)", remote_double_free,
     NULL},
    {"freed_page", INVALID, NULL, freed_page, NULL},
    {"cached_segment", INVALID, NULL, cached_segment, NULL},
};

static const char *reason_of(const kind_row *row) {
  if (row->reason) return row->reason;
  if (row->expect == FOREIGN) return foreign_reason;
  return strncmp(row->name, "interior", 8) == 0 || strcmp(row->name, "huge_header") == 0
             ? interior_reason
             : unallocated_reason;
}

/* Does `text` contain one of the '|'-separated alternatives? */
static bool says_one_of(const char *text, const char *alternatives) {
  char copy[256];
  snprintf(copy, sizeof copy, "%s", alternatives);
  for (char *save, *alt = strtok_r(copy, "|", &save); alt; alt = strtok_r(NULL, "|", &save))
    if (strstr(text, alt)) return true;
  return false;
}

/* ---- running one test in the child ------------------------------------------ */
enum operation { OP_FREE, OP_REALLOC, OP_USABLE_SIZE, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"free", "realloc", "usable_size"};
enum policy { ABORT, REPORT, FORWARD, POLICY_COUNT };
static const char *const policy_names[POLICY_COUNT] = {"abort", "report", "forward"};

typedef struct test_id {
  const kind_row *row;
  enum operation op;
  enum policy policy;
} test_id;

static int messages;
static char message_text[2048];
static void capture(const char *text, void *arg) {
  (void)arg;
  messages++;
  snprintf(message_text, sizeof message_text, "%s", text);
}

/* Forward hooks: record the call, touch nothing. */
static int forwarded_calls;
static void *forwarded_pointer;
static char realloc_sentinel;
static void forward_free(void *ctx, void *p) {
  (void)ctx;
  forwarded_calls++, forwarded_pointer = p;
}
static void *forward_realloc(void *ctx, void *p, size_t size) {
  (void)ctx, (void)size;
  forwarded_calls++, forwarded_pointer = p;
  return &realloc_sentinel;
}
static size_t forward_usable_size(void *ctx, const void *p) {
  (void)ctx;
  forwarded_calls++, forwarded_pointer = (void *)p;
  return 777;
}

static size_t live_blocks(void) {
  nsalloc_stats_t s;
  nsalloc_stats(&s);
  return s.in_use_blocks;
}

/* A live block start or NULL: the ordinary behaviour, no diagnostic. */
static void expect_ordinary(const test_id *t, made *m) {
  size_t before = live_blocks();
  switch (t->op) {
  case OP_FREE:
    nsalloc_free(m->p);
    CHECK_EQ(live_blocks(), m->p ? before - 1 : before);
    break;
  case OP_REALLOC: {
    char *q = nsalloc_realloc(m->p, m->size * 2 + 16);
    CHECK(q != NULL);
    if (m->p) CHECK(q && test_verify(q, m->size, 7));
    CHECK_EQ(live_blocks(), m->p ? before : before + 1);
    break;
  }
  case OP_USABLE_SIZE:
    CHECK(m->p ? nsalloc_usable_size(m->p) >= m->size : nsalloc_usable_size(m->p) == 0);
    break;
  case OP_COUNT:
    break;
  }
  CHECK_EQ(messages, 0);
  CHECK_EQ(forwarded_calls, 0);
}

static void call(const test_id *t, void *p, void **realloc_result, size_t *usable) {
  errno = 0;
  if (t->op == OP_FREE)
    nsalloc_free(p);
  else if (t->op == OP_REALLOC)
    *realloc_result = nsalloc_realloc(p, 64);
  else
    *usable = nsalloc_usable_size(p);
}

/* report: one diagnostic, one count, nothing changed. */
static void expect_reported(const test_id *t, made *m) {
  nsalloc_stats_t before, after;
  char snapshot[16];
  if (m->readable) memcpy(snapshot, m->p, sizeof snapshot);
  nsalloc_stats(&before);
  void *result = &realloc_sentinel;
  size_t usable = 1;
  call(t, m->p, &result, &usable);
  int saved_errno = errno;
  nsalloc_stats(&after);
  char expected[128];
  snprintf(expected, sizeof expected, "]: %s(%p): ", op_names[t->op], (void *)m->p);
  CHECK_EQ(messages, 1);
  CHECK(strncmp(message_text, "nsalloc[t_ in ", 14) == 0 && strstr(message_text, expected) &&
        test_names_copy(message_text, "t_", "test_pointer_kinds"));
  CHECK(says_one_of(message_text, reason_of(t->row)));
  bool foreign = t->row->expect == FOREIGN;
  CHECK_EQ(after.foreign_pointers - before.foreign_pointers, foreign ? 1 : 0);
  CHECK_EQ(after.invalid_pointers - before.invalid_pointers, foreign ? 0 : 1);
  CHECK_EQ(after.in_use_blocks, before.in_use_blocks);
  if (t->op == OP_REALLOC) CHECK(result == NULL && saved_errno == EINVAL);
  if (t->op == OP_USABLE_SIZE) CHECK_EQ(usable, 0);
  if (m->readable) CHECK(memcmp(snapshot, m->p, sizeof snapshot) == 0); /* left alone */
  for (int i = 0; i < m->reuse_count; i++)
    CHECK((char *)nsalloc_malloc(m->reuse_size) != m->p);
  if (test_failures) fprintf(stderr, "  last diagnostic: %s\n", message_text);
}

/* forward, foreign pointer: the hook gets it once, its result comes back. */
static void expect_forwarded(const test_id *t, made *m) {
  void *result = NULL;
  size_t usable = 0;
  call(t, m->p, &result, &usable);
  CHECK_EQ(forwarded_calls, 1);
  CHECK(forwarded_pointer == m->p);
  if (t->op == OP_REALLOC) CHECK(result == &realloc_sentinel);
  if (t->op == OP_USABLE_SIZE) CHECK_EQ(usable, 777);
}

static void child(void *arg) {
  const test_id *t = arg;
  char on_stack[16];
  made m = {0};
  t->row->make(&m, on_stack);
  if (t->policy == REPORT) {
    nsalloc_set_message_handler(capture, NULL);
    nsalloc_set_foreign_policy(NSALLOC_POLICY_REPORT, NULL);
  } else if (t->policy == FORWARD) {
    nsalloc_forward_t hooks = {NULL, forward_free, forward_realloc, forward_usable_size};
    nsalloc_set_foreign_policy(NSALLOC_POLICY_FORWARD, &hooks);
  }
  fprintf(stderr, "pointer %p\n", (void *)m.p);
  expectation e = t->row->expect;
  if (e == LIVE || e == NULL_POINTER)
    expect_ordinary(t, &m);
  else if (t->policy == REPORT)
    expect_reported(t, &m);
  else if (t->policy == FORWARD && e == FOREIGN)
    expect_forwarded(t, &m);
  else { /* must abort */
    void *result = NULL;
    size_t usable = 0;
    call(t, m.p, &result, &usable);
    fprintf(stderr, "returned (no abort); forwarded %d times\n", forwarded_calls);
  }
  _exit(test_failures ? 1 : 0);
}

/* ---- the parent: one verdict per test ---------------------------------------- */
static bool dies_as_expected(const test_id *t, int status, const char *output) {
  void *p = NULL;
  const char *line = strstr(output, "pointer ");
  if (line) sscanf(line, "pointer %p", &p);
  char expected[128];
  snprintf(expected, sizeof expected, "]: %s(%p): ", op_names[t->op], p);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(output, expected) &&
         test_names_copy(output, "t_", "test_pointer_kinds") &&
         says_one_of(output, reason_of(t->row)) && strstr(output, "; aborting");
}

static bool run_test(const test_id *t, char *output, size_t capacity) {
  int status = test_in_child(child, (void *)t, output, capacity);
  expectation e = t->row->expect;
  bool must_abort = (e == FOREIGN && t->policy == ABORT) ||
                    (e == INVALID && (t->policy == ABORT || t->policy == FORWARD));
  if (must_abort) return dies_as_expected(t, status, output);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && !strstr(output, "nsalloc[");
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0, failed_known = 0;
  static char output[8192];
  for (size_t k = 0; k < TEST_COUNT(kinds); k++)
    for (int op = 0; op < OP_COUNT; op++)
      for (int policy = 0; policy < POLICY_COUNT; policy++) {
        test_id t = {&kinds[k], op, policy};
        char name[96];
        snprintf(name, sizeof name, "%s/%s/%s", kinds[k].name, op_names[op], policy_names[policy]);
        bool selected = argc < 2;
        for (int a = 1; a < argc; a++)
          selected |= strncmp(name, argv[a], strlen(argv[a])) == 0;
        if (!selected) continue;
        if (run_test(&t, output, sizeof output)) {
          printf("PASS %s\n", name);
          passed++;
          continue;
        }
        failed++;
        if (kinds[k].fails_on_ecb8ede) failed_known++;
        printf("FAIL %s%s%s%s\n", name,
               kinds[k].fails_on_ecb8ede ? "  [regression, failed on ecb8ede: " : "",
               kinds[k].fails_on_ecb8ede ? kinds[k].fails_on_ecb8ede : "",
               kinds[k].fails_on_ecb8ede ? "]" : "");
        printf("  child said: %s\n", output);
      }
  printf("%d passed, %d failed (%d of them in rows known to fail on ecb8ede)\n", passed, failed,
         failed_known);
  return failed == 0 && passed > 0 ? 0 : 1;
}
