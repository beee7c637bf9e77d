/*
 * stress.c - threads hammer every copy at once.
 *
 * Each thread keeps SLOTS live blocks spread over all copies and, per
 * operation, allocates into an empty slot or frees, grows/shrinks (realloc)
 * or hands a live block to the next thread, which frees it in the same copy
 * (a cross-thread free). Every byte of a block is verified before it is
 * resized or freed; every new block must be owned by its copy and by no other.
 * At the end every copy's statistics must balance to zero.
 */
#include "checks.h"
#include "mailbox.h"
#include "pattern.h"
#include "verdict.h"

#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 256

typedef struct stress_shared {
  iso_copies *copies;
  size_t threads;
  uint64_t ops_per_thread;
  iso_mailbox *mailboxes; /* one per thread: blocks to free for others */
  pthread_barrier_t sends_done;
  _Atomic(uint64_t) mallocs, reallocs, frees, remote_frees;
} stress_shared;

typedef struct stress_thread {
  stress_shared *shared;
  size_t index;
  uint64_t random;
  uint64_t mallocs, reallocs, frees, remote_frees;
  iso_block slots[SLOTS];
} stress_thread;

/* Mostly small blocks, some medium and large ones, a rare huge one. */
static size_t pick_size(uint64_t r) {
  uint64_t bucket = r % 100000, spread = r >> 20;
  if (bucket == 0) return ((size_t)2 << 20) + spread % ((size_t)1 << 20);
  if (bucket < 900) return 2048 + spread % (30 * 1024);
  if (bucket < 15000) return 257 + spread % 1792;
  return 1 + spread % 256;
}

static const iso_copy *copy_of(const stress_thread *t, const iso_block *b) {
  return &t->shared->copies->items[b->copy];
}

static void block_verify(const stress_thread *t, const iso_block *b, size_t size) {
  ISO_EXPECT(iso_verify(b->p, size, b->seed), "%s: a %zu-byte block %p changed while live",
             copy_of(t, b)->name, b->size, b->p);
}

static void block_new(stress_thread *t, iso_block *b) {
  const iso_copies *copies = t->shared->copies;
  uint64_t r = test_random(&t->random);
  b->copy = (uint32_t)(r % copies->count);
  b->size = pick_size(test_random(&t->random));
  const iso_copy *copy = copy_of(t, b);
  b->p = copy->api->malloc(b->size);
  t->mallocs++;
  ISO_EXPECT(b->p, "%s: malloc(%zu) failed", copy->name, b->size);
  if (!b->p) return;
  ISO_EXPECT(copy->api->owns(b->p), "%s: does not own its own block", copy->name);
  if (copies->count > 1) {
    const iso_copy *other =
        &copies->items[(b->copy + 1 + (r >> 32) % (copies->count - 1)) % copies->count];
    ISO_EXPECT(!other->api->owns(b->p), "%s owns a block of %s", other->name, copy->name);
  }
  b->seed = test_random(&t->random);
  iso_fill(b->p, b->size, b->seed);
}

static void block_free(stress_thread *t, iso_block *b) {
  block_verify(t, b, b->size);
  copy_of(t, b)->api->free(b->p);
  b->p = NULL;
  t->frees++;
}

static void block_resize(stress_thread *t, iso_block *b) {
  block_verify(t, b, b->size);
  size_t size = pick_size(test_random(&t->random));
  void *q = copy_of(t, b)->api->realloc(b->p, size);
  t->reallocs++;
  ISO_EXPECT(q, "%s: realloc to %zu failed", copy_of(t, b)->name, size);
  if (!q) return;
  b->p = q;
  block_verify(t, b, size < b->size ? size : b->size);
  b->size = size;
  b->seed = test_random(&t->random);
  iso_fill(b->p, b->size, b->seed);
}

static void block_send(stress_thread *t, iso_block *b) {
  stress_shared *shared = t->shared;
  if (iso_mailbox_push(&shared->mailboxes[(t->index + 1) % shared->threads], b))
    b->p = NULL;
  else
    block_free(t, b);
}

/* Free the blocks other threads sent: cross-thread frees within each copy. */
static void drain_mailbox(stress_thread *t) {
  iso_block b;
  while (iso_mailbox_pop(&t->shared->mailboxes[t->index], &b)) {
    block_free(t, &b);
    t->remote_frees++;
  }
}

static void *stress_main(void *arg) {
  stress_thread *t = arg;
  for (uint64_t op = 0; op < t->shared->ops_per_thread; op++) {
    uint64_t r = test_random(&t->random);
    iso_block *slot = &t->slots[r % SLOTS];
    if (!slot->p)
      block_new(t, slot);
    else if ((r >> 16) % 8 < 4)
      block_free(t, slot);
    else if ((r >> 16) % 8 < 6)
      block_resize(t, slot);
    else
      block_send(t, slot);
    if ((op & 63) == 0) drain_mailbox(t);
  }
  for (size_t i = 0; i < SLOTS; i++)
    if (t->slots[i].p) block_free(t, &t->slots[i]);
  pthread_barrier_wait(&t->shared->sends_done);
  drain_mailbox(t);
  atomic_fetch_add(&t->shared->mallocs, t->mallocs);
  atomic_fetch_add(&t->shared->reallocs, t->reallocs);
  atomic_fetch_add(&t->shared->frees, t->frees);
  atomic_fetch_add(&t->shared->remote_frees, t->remote_frees);
  return NULL;
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

void check_stress(iso_copies *copies, const iso_options *options) {
  stress_shared shared = {.copies = copies,
                          .threads = options->threads,
                          .ops_per_thread = options->operations / options->threads};
  shared.mailboxes = calloc(shared.threads, sizeof *shared.mailboxes);
  stress_thread *threads = calloc(shared.threads, sizeof *threads);
  pthread_t *ids = calloc(shared.threads, sizeof *ids);
  if (!shared.mailboxes || !threads || !ids) abort();
  pthread_barrier_init(&shared.sends_done, NULL, (unsigned)shared.threads);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (size_t i = 0; i < shared.threads; i++)
    iso_mailbox_init(&shared.mailboxes[i]);
  for (size_t i = 0; i < shared.threads; i++) {
    threads[i] = (stress_thread){.shared = &shared, .index = i, .random = 0x5eed + i};
    if (pthread_create(&ids[i], NULL, stress_main, &threads[i]) != 0) abort();
  }
  for (size_t i = 0; i < shared.threads; i++)
    pthread_join(ids[i], NULL);
  double elapsed = seconds_since(&start);
  uint64_t total = shared.mallocs + shared.reallocs + shared.frees;
  printf("stress: %zu copies, %zu threads, %llu operations in %.2f s (%.1f M/s): "
         "%llu malloc, %llu realloc, %llu free (%llu cross-thread)\n",
         copies->count, shared.threads, (unsigned long long)total, elapsed,
         (double)total / elapsed / 1e6, (unsigned long long)shared.mallocs,
         (unsigned long long)shared.reallocs, (unsigned long long)shared.frees,
         (unsigned long long)shared.remote_frees);
  for (size_t i = 0; i < copies->count; i++) {
    size_t before = iso_violation_count();
    iso_expect_balanced(&copies->items[i], false);
    printf("  %-28s prefix=%-10s stats balance to zero: %s\n", copies->items[i].name,
           copies->items[i].api->prefix(), iso_violation_count() == before ? "yes" : "NO");
  }
  for (size_t i = 0; i < shared.threads; i++)
    iso_mailbox_destroy(&shared.mailboxes[i]);
  pthread_barrier_destroy(&shared.sends_done);
  free(ids);
  free(threads);
  free(shared.mailboxes);
}
