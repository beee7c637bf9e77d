/*
 * incident.c - the incident's shape as a regression test.
 *
 * A 3-key map's key vector (3 x 16-byte keys = 48 bytes, allocated by copy A)
 * is grown to 96 bytes by realloc in ANOTHER copy B, on another thread than
 * the one that built it. With bundled mimalloc, B's realloc found usable size
 * 0 for A's block, copied 0 bytes and freed the original: keys[0..2] were
 * destroyed. Here every copy forwards foreign pointers to their owner (what a
 * host embedding several copies configures), so the grown vector must still
 * hold the three keys; and B must have seen the vector as foreign.
 */
#include "checks.h"
#include "mailbox.h"
#include "verdict.h"

#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct key {
  uint64_t term, hash;
} key;

#define INITIAL_KEYS 3 /* 48 bytes */
#define GROWN_KEYS   6 /* 96 bytes */

typedef struct incident_run {
  iso_copies *copies;
  iso_mailbox pending; /* vectors built by one thread, grown by another */
  uint64_t vectors_per_thread;
  _Atomic(uint64_t) grown, destroyed;
} incident_run;

static key key_for(uint64_t seed, size_t i) {
  return (key){.term = seed * 0x9E3779B97F4A7C15ULL + i, .hash = ~seed ^ ((uint64_t)i << 56)};
}

static void build_vector(incident_run *run, uint64_t *random) {
  uint64_t r = test_random(random);
  iso_block b = {.copy = (uint32_t)(r % run->copies->count),
                 .size = INITIAL_KEYS * sizeof(key),
                 .seed = test_random(random)};
  b.p = run->copies->items[b.copy].api->malloc(b.size);
  ISO_EXPECT(b.p, "malloc of a key vector failed");
  if (!b.p) return;
  key *keys = b.p;
  for (size_t i = 0; i < INITIAL_KEYS; i++)
    keys[i] = key_for(b.seed, i);
  while (!iso_mailbox_push(&run->pending, &b)) {
    iso_block oldest; /* the queue is full: drop its oldest vector */
    if (iso_mailbox_pop(&run->pending, &oldest))
      run->copies->items[oldest.copy].api->free(oldest.p);
  }
}

/* Grow a vector in a copy other than the one that allocated it. */
static void grow_vector(incident_run *run, const iso_block *b, uint64_t *random) {
  size_t count = run->copies->count;
  const iso_copy *other =
      &run->copies->items[(b->copy + 1 + test_random(random) % (count - 1)) % count];
  key *keys = other->api->realloc(b->p, GROWN_KEYS * sizeof(key));
  ISO_EXPECT(keys, "%s: realloc of a foreign key vector failed", other->name);
  if (!keys) return;
  size_t intact = 0;
  for (size_t i = 0; i < INITIAL_KEYS; i++) {
    key expected = key_for(b->seed, i);
    intact += keys[i].term == expected.term && keys[i].hash == expected.hash;
  }
  if (intact != INITIAL_KEYS) atomic_fetch_add(&run->destroyed, 1);
  ISO_EXPECT(intact == INITIAL_KEYS,
             "%s: realloc of %s's 48-byte key vector to 96 bytes kept %zu of 3 keys", other->name,
             run->copies->items[b->copy].name, intact);
  for (size_t i = INITIAL_KEYS; i < GROWN_KEYS; i++)
    keys[i] = key_for(b->seed, i);
  other->api->free(keys); /* foreign to `other` again unless realloc moved it */
  atomic_fetch_add(&run->grown, 1);
}

static void *incident_main(void *arg) {
  incident_run *run = arg;
  uint64_t random = (uint64_t)(uintptr_t)&random;
  for (uint64_t i = 0; i < run->vectors_per_thread; i++) {
    build_vector(run, &random);
    iso_block b;
    if (iso_mailbox_pop(&run->pending, &b)) grow_vector(run, &b, &random);
  }
  return NULL;
}

void check_incident(iso_copies *copies, const iso_options *options) {
  if (copies->count < 2) {
    fprintf(stderr, "setup error: the incident needs two copies\n");
    exit(2);
  }
  incident_run run = {.copies = copies,
                      .vectors_per_thread = options->operations / options->threads};
  iso_mailbox_init(&run.pending);
  nsalloc_forward_t forward = iso_forward_to_owner(copies);
  for (size_t i = 0; i < copies->count; i++)
    ISO_EXPECT(copies->items[i].api->set_foreign_policy(NSALLOC_POLICY_FORWARD, &forward) == 0,
               "%s: forward policy refused", copies->items[i].name);
  pthread_t *ids = calloc(options->threads, sizeof *ids);
  if (!ids) abort();
  for (size_t i = 0; i < options->threads; i++)
    if (pthread_create(&ids[i], NULL, incident_main, &run) != 0) abort();
  for (size_t i = 0; i < options->threads; i++)
    pthread_join(ids[i], NULL);
  uint64_t random = 1;
  iso_block b;
  while (iso_mailbox_pop(&run.pending, &b))
    grow_vector(&run, &b, &random);
  uint64_t forwarded = 0;
  for (size_t i = 0; i < copies->count; i++) {
    nsalloc_stats_t stats;
    copies->items[i].api->stats(&stats);
    forwarded += stats.forwarded;
    iso_expect_balanced(&copies->items[i], true);
  }
  ISO_EXPECT(forwarded >= run.grown, "only %llu of %llu foreign reallocs were forwarded",
             (unsigned long long)forwarded, (unsigned long long)run.grown);
  printf("incident: %llu key vectors grown 48 -> 96 bytes by another copy on %zu threads, "
         "%llu forwarded; %llu had keys destroyed\n",
         (unsigned long long)run.grown, options->threads, (unsigned long long)forwarded,
         (unsigned long long)run.destroyed);
  for (size_t i = 0; i < copies->count; i++)
    copies->items[i].api->set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
  iso_mailbox_destroy(&run.pending);
  free(ids);
}
