/*
 * test_threads.c - the copy under threads: cross-thread frees both ways,
 * producer/consumer, thousands of short-lived threads that exit holding live
 * blocks (abandonment and reclaim), first-class heaps deleted and destroyed
 * while other threads free into them. Every block's contents are verified and
 * the copy's statistics must balance at the end.
 */
#include "nsalloc.h"
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static size_t in_use_bytes(void) {
  nsalloc_stats_t s;
  nsalloc_stats(&s);
  return s.in_use_bytes;
}

/* Mostly small blocks, some medium, a few large (one in 256). */
/* The copy's own count of resident-capable memory: meaningful under
 * sanitizers too, unlike the process RSS. */
static size_t committed_bytes(void) {
  nsalloc_stats_t s;
  nsalloc_stats(&s);
  return s.committed_bytes;
}

static size_t size_for(uint64_t r) {
  switch (r % 16) {
  case 0:
    return 16 + r % 4096;
  case 1:
    return r % 16 == 1 && (r >> 8) % 16 == 0 ? 70000 + r % 400000 : 9000 + r % 30000;
  default:
    return 8 + r % 256;
  }
}

/* A block with its size and seed in front: whoever frees it can verify it. */
typedef struct tagged {
  size_t size;
  uint64_t seed;
} tagged;

static void *tagged_new(uint64_t seed, size_t size) {
  tagged *t = nsalloc_malloc(sizeof(tagged) + size);
  if (!t) return NULL;
  t->size = size;
  t->seed = seed;
  test_fill(t + 1, size, seed);
  return t;
}

static bool tagged_free(void *p) {
  tagged *t = p;
  bool ok = test_verify(t + 1, t->size, t->seed);
  nsalloc_free(t);
  return ok;
}

/* ---- a bounded queue between threads ---------------------------------------- */
enum { QUEUE_CAPACITY = 1024 };
typedef struct queue {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  void *items[QUEUE_CAPACITY];
  size_t head, count;
} queue;

static void queue_init(queue *q) {
  memset(q, 0, sizeof *q);
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->changed, NULL);
}

static void queue_push(queue *q, void *item) {
  pthread_mutex_lock(&q->lock);
  while (q->count == QUEUE_CAPACITY)
    pthread_cond_wait(&q->changed, &q->lock);
  q->items[(q->head + q->count++) % QUEUE_CAPACITY] = item;
  pthread_cond_broadcast(&q->changed);
  pthread_mutex_unlock(&q->lock);
}

static void *queue_pop(queue *q) {
  pthread_mutex_lock(&q->lock);
  while (q->count == 0)
    pthread_cond_wait(&q->changed, &q->lock);
  void *item = q->items[q->head];
  q->head = (q->head + 1) % QUEUE_CAPACITY;
  q->count--;
  pthread_cond_broadcast(&q->changed);
  pthread_mutex_unlock(&q->lock);
  return item;
}

/* ---- cross-thread frees in both directions ---------------------------------- */
typedef struct exchange_arg {
  queue *out, *in;
  uint64_t seed;
  size_t count;
  atomic_int bad;
} exchange_arg;

/* Send `count` blocks to the peer and free the peer's `count` blocks, in
 * batches that fit the queue (so neither side waits on every block). */
static void *exchange_thread(void *p) {
  exchange_arg *arg = p;
  uint64_t rng = arg->seed;
  enum { BATCH = QUEUE_CAPACITY / 2 };
  for (size_t done = 0; done < arg->count; done += BATCH) {
    size_t n = arg->count - done < BATCH ? arg->count - done : BATCH;
    for (size_t i = 0; i < n; i++) {
      uint64_t r = test_random(&rng);
      queue_push(arg->out, tagged_new(r, size_for(r)));
    }
    for (size_t i = 0; i < n; i++)
      if (!tagged_free(queue_pop(arg->in))) arg->bad++;
  }
  return NULL;
}

static void test_cross_thread_both_directions(void) {
  size_t base = in_use_bytes();
  queue a_to_b, b_to_a;
  queue_init(&a_to_b);
  queue_init(&b_to_a);
  exchange_arg a = {&a_to_b, &b_to_a, 1, test_scale(200000), 0};
  exchange_arg b = {&b_to_a, &a_to_b, 2, test_scale(200000), 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, exchange_thread, &a);
  pthread_create(&tb, NULL, exchange_thread, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK_EQ(a.bad + b.bad, 0);
  CHECK_EQ(in_use_bytes(), base);
}

/* ---- producer / consumer ----------------------------------------------------- */
typedef struct pipeline_arg {
  queue *q;
  size_t count;
  atomic_int bad;
} pipeline_arg;

static void *producer(void *p) {
  pipeline_arg *arg = p;
  uint64_t rng = 99;
  for (size_t i = 0; i < arg->count; i++) {
    uint64_t r = test_random(&rng);
    queue_push(arg->q, tagged_new(r, 8 + r % 200));
  }
  queue_push(arg->q, NULL);
  return NULL;
}

static void *consumer(void *p) {
  pipeline_arg *arg = p;
  for (void *item; (item = queue_pop(arg->q)) != NULL;)
    if (!tagged_free(item)) arg->bad++;
  return NULL;
}

static void test_producer_consumer(void) {
  size_t base = in_use_bytes();
  queue q;
  queue_init(&q);
  pipeline_arg arg = {&q, test_scale(500000), 0};
  pthread_t p, c;
  pthread_create(&p, NULL, producer, &arg);
  pthread_create(&c, NULL, consumer, &arg);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  CHECK_EQ(arg.bad, 0);
  CHECK_EQ(in_use_bytes(), base);
}

/* ---- short-lived threads exiting with live blocks ---------------------------- */
enum { KEPT_PER_THREAD = 16 };
typedef struct churn_arg {
  void *kept[KEPT_PER_THREAD];
  uint64_t seed;
} churn_arg;

static void *short_lived(void *p) {
  churn_arg *arg = p;
  uint64_t rng = arg->seed;
  void *scratch[64];
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 64; i++) {
      uint64_t r = test_random(&rng);
      scratch[i] = tagged_new(r, size_for(r));
    }
    for (int i = 0; i < 64; i++)
      tagged_free(scratch[i]);
  }
  for (int i = 0; i < KEPT_PER_THREAD; i++) {
    uint64_t r = test_random(&rng);
    arg->kept[i] = tagged_new(r, 16 + r % 2000); /* outlives its thread */
  }
  return NULL;
}

static void test_thread_churn(void) {
  size_t base = in_use_bytes();
  size_t threads = test_scale(2000), waves = 10;
  churn_arg *args = calloc(threads, sizeof *args);
  pthread_t *ids = calloc(threads, sizeof *ids);
  nsalloc_collect(true);
  size_t committed_before = committed_bytes();
  int bad = 0;
  for (size_t wave = 0; wave < waves; wave++) {
    size_t first = threads * wave / waves, last = threads * (wave + 1) / waves;
    for (size_t i = first; i < last; i++) {
      args[i].seed = i + 1;
      pthread_create(&ids[i], NULL, short_lived, &args[i]);
    }
    for (size_t i = first; i < last; i++)
      pthread_join(ids[i], NULL);
    /* blocks freed after their owner died are not lost: free them here */
    for (size_t i = first; i < last; i++)
      for (int k = 0; k < KEPT_PER_THREAD; k++)
        bad += !tagged_free(args[i].kept[k]);
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(in_use_bytes(), base);
  /* abandoned segments are reclaimed by later threads: the address space
   * stays bounded by one wave's worth of concurrently live threads, not by
   * all threads; and once everything is freed, a forced collect (which adopts
   * what exited threads left) gives the memory back */
  nsalloc_stats_t s;
  nsalloc_stats(&s);
  size_t per_wave = threads / waves + 1;
  CHECK(s.reserved_bytes <= per_wave * ((size_t)8 << 20));
  nsalloc_collect(true);
  CHECK(committed_bytes() <= committed_before + ((size_t)4 << 20));
  nsalloc_stats(&s);
  CHECK_EQ(s.abandoned_segments, 0);
  free(args);
  free(ids);
}

/* ---- heaps deleted and destroyed while other threads free into them --------- */
typedef struct heap_arg {
  void **blocks;
  size_t first, last;
  atomic_int bad;
} heap_arg;

static void *free_range(void *p) {
  heap_arg *arg = p;
  for (size_t i = arg->first; i < arg->last; i++)
    if (!tagged_free(arg->blocks[i])) arg->bad++;
  return NULL;
}

static void *heap_tagged_new(nsalloc_heap_t *heap, uint64_t seed, size_t size) {
  tagged *t = nsalloc_heap_malloc(heap, sizeof(tagged) + size);
  t->size = size;
  t->seed = seed;
  test_fill(t + 1, size, seed);
  return t;
}

static void heap_scenario(bool destroy) {
  size_t base = in_use_bytes();
  size_t count = test_scale(60000);
  void **blocks = calloc(count, sizeof *blocks);
  nsalloc_heap_t *heap = nsalloc_heap_new();
  uint64_t rng = 5;
  for (size_t i = 0; i < count; i++) {
    uint64_t r = test_random(&rng);
    blocks[i] = heap_tagged_new(heap, r, size_for(r));
  }
  /* two threads free the first two thirds remotely while this thread keeps
   * using the heap, then deletes or destroys it */
  heap_arg args[2] = {{blocks, 0, count / 3, 0}, {blocks, count / 3, 2 * count / 3, 0}};
  pthread_t ids[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&ids[i], NULL, free_range, &args[i]);
  for (size_t i = 0; i < count / 4; i++) {
    void *p = nsalloc_heap_malloc(heap, 32 + i % 500);
    nsalloc_heap_free(heap, p);
  }
  if (!destroy) nsalloc_heap_delete(heap); /* concurrent remote frees are fine */
  for (int i = 0; i < 2; i++)
    pthread_join(ids[i], NULL);
  CHECK_EQ(args[0].bad + args[1].bad, 0);
  if (destroy) {
    nsalloc_heap_destroy(heap); /* the last third dies with the heap */
  } else {
    int bad = 0; /* migrated blocks are intact and freeable from here */
    for (size_t i = 2 * count / 3; i < count; i++)
      bad += !tagged_free(blocks[i]);
    CHECK_EQ(bad, 0);
  }
  CHECK_EQ(in_use_bytes(), base);
  free(blocks);
}

static void test_heap_delete_with_remote_frees(void) {
  heap_scenario(false);
}
static void test_heap_destroy_after_remote_frees(void) {
  heap_scenario(true);
}

/* A first-class heap on a thread that comes after an exited thread must not
 * take over the exited thread's segments: heap_destroy would free its live
 * blocks. Regression: main's next malloc returned the exited thread's live
 * block a second time. */
static void *allocate_and_exit(void *p) {
  *(void **)p = tagged_new(400, 400);
  return NULL;
}
static void *heap_lifetime(void *p) {
  (void)p;
  nsalloc_heap_t *heap = nsalloc_heap_new();
  for (int i = 0; i < 100; i++)
    (void)heap_tagged_new(heap, (uint64_t)i, 400);
  nsalloc_heap_destroy(heap);
  return NULL;
}
static void test_heap_destroy_spares_exited_threads_blocks(void) {
  void *survivor = NULL;
  pthread_t id;
  pthread_create(&id, NULL, allocate_and_exit, &survivor);
  pthread_join(id, NULL);
  pthread_create(&id, NULL, heap_lifetime, NULL);
  pthread_join(id, NULL);
  void *fresh[100];
  for (int i = 0; i < 100; i++) {
    fresh[i] = nsalloc_malloc(400);
    CHECK(fresh[i] != survivor);
    memset(fresh[i], 0xEE, 400);
  }
  CHECK(tagged_free(survivor)); /* still intact, still freeable */
  for (int i = 0; i < 100; i++)
    nsalloc_free(fresh[i]);
}

/* ---- many threads at once, everything shared --------------------------------- */
enum { SHARED_SLOTS = 4096, WORKERS = 8 };
static _Atomic(void *) shared_slots[SHARED_SLOTS];

static void *swapper(void *p) {
  uint64_t rng = (uintptr_t)p;
  size_t ops = test_scale(300000);
  int bad = 0;
  for (size_t i = 0; i < ops; i++) {
    uint64_t r = test_random(&rng);
    void *fresh = r % 3 ? tagged_new(r, size_for(r >> 8) % 3000) : NULL;
    void *old = atomic_exchange(&shared_slots[r % SHARED_SLOTS], fresh);
    if (old) bad += !tagged_free(old);
  }
  return (void *)(uintptr_t)bad;
}

static void test_shared_slots_many_threads(void) {
  size_t base = in_use_bytes();
  pthread_t ids[WORKERS];
  for (uintptr_t i = 0; i < WORKERS; i++)
    pthread_create(&ids[i], NULL, swapper, (void *)(i + 1));
  uintptr_t bad = 0;
  for (int i = 0; i < WORKERS; i++) {
    void *result;
    pthread_join(ids[i], &result);
    bad += (uintptr_t)result;
  }
  for (int i = 0; i < SHARED_SLOTS; i++) {
    void *old = atomic_exchange(&shared_slots[i], NULL);
    if (old) bad += !tagged_free(old);
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(in_use_bytes(), base);
}

/* Blocks another thread frees into this thread's full (parked) pages bring
 * the pages back: freeing every other block of a large set on a second
 * thread, then, before any allocation, a quarter of them here (the owner's
 * frees into pages a remote free has already flagged for its sweep: pushed
 * onto their thread_free), and allocating as many again here must not grow
 * the pages, and every block keeps its contents (for the default heap and a
 * first-class heap). The first remote free onto a parked page is the one
 * that must notify the owner (docs/architecture.md). */
enum { REMOTE_REUSE_COUNT = 100000 };
static void *remote_reuse_blocks[REMOTE_REUSE_COUNT];
static void *free_every_other(void *arg) {
  (void)arg;
  for (int i = 0; i < REMOTE_REUSE_COUNT; i += 2)
    nsalloc_free(remote_reuse_blocks[i]);
  return NULL;
}
static void remote_reuse_scenario(nsalloc_heap_t *heap) {
  void **blocks = remote_reuse_blocks;
  /* page_bytes is the copy's: the segments earlier tests' threads left are
   * adopted and freed now, not by the purger's sweep in the middle. */
  nsalloc_collect(true);
  size_t base = in_use_bytes();
  for (int i = 0; i < REMOTE_REUSE_COUNT; i++) {
    blocks[i] = heap ? nsalloc_heap_malloc(heap, 64) : nsalloc_malloc(64);
    test_fill(blocks[i], 64, (uint64_t)i);
  }
  nsalloc_stats_t before, after;
  nsalloc_stats(&before);
  pthread_t id;
  CHECK(pthread_create(&id, NULL, free_every_other, NULL) == 0);
  pthread_join(id, NULL);
  for (int i = 1; i < REMOTE_REUSE_COUNT; i += 4)
    heap ? nsalloc_heap_free(heap, blocks[i]) : nsalloc_free(blocks[i]);
  for (int i = 0; i < REMOTE_REUSE_COUNT; i++) {
    if (i % 4 == 3) continue;
    blocks[i] = heap ? nsalloc_heap_malloc(heap, 64) : nsalloc_malloc(64);
    test_fill(blocks[i], 64, (uint64_t)i);
  }
  nsalloc_stats(&after);
  CHECK_EQ(after.page_bytes, before.page_bytes);
  int bad = 0;
  for (int i = 0; i < REMOTE_REUSE_COUNT; i++) {
    bad += !test_verify(blocks[i], 64, (uint64_t)i);
    nsalloc_free(blocks[i]);
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(in_use_bytes(), base);
}
static void test_remote_frees_bring_full_pages_back(void) {
  remote_reuse_scenario(NULL);
  nsalloc_heap_t *heap = nsalloc_heap_new();
  remote_reuse_scenario(heap);
  nsalloc_heap_destroy(heap);
}

/* Threads exit in waves with their blocks still published in shared slots;
 * other threads free them (remote frees into abandoned segments: each
 * notifies, and the purger's sweep collects the pages under the copy's
 * lock) while a third allocates and frees all along, adopting abandoned
 * segments in its slow paths, with the purger on and a 1 ms purge delay,
 * so sweeps, purges of the adopted segments' free slices and adoptions
 * overlap. Every block keeps its contents and the statistics balance.
 * Under ThreadSanitizer this caught the adopter reading a segment's purge
 * deadline unordered with the purger's write (segment_link_heap). */
enum { SWEEP_WAVE_THREADS = 4, SWEEP_BLOCKS_PER_THREAD = 300 };
static atomic_bool sweep_stop;

static void *publish_and_exit(void *p) {
  uint64_t rng = (uintptr_t)p;
  uintptr_t bad = 0;
  for (int i = 0; i < SWEEP_BLOCKS_PER_THREAD; i++) {
    uint64_t r = test_random(&rng);
    void *old = atomic_exchange(&shared_slots[r % SHARED_SLOTS], tagged_new(r, size_for(r >> 8)));
    if (old) bad += !tagged_free(old);
  }
  return (void *)bad;
}

static void *drain_slots(void *p) {
  uint64_t rng = (uintptr_t)p;
  uintptr_t bad = 0;
  while (!atomic_load(&sweep_stop)) {
    void *old = atomic_exchange(&shared_slots[test_random(&rng) % SHARED_SLOTS], NULL);
    if (old) bad += !tagged_free(old);
    test_spin_pause();
  }
  return (void *)bad;
}

static void *allocate_and_free(void *p) {
  uint64_t rng = (uintptr_t)p;
  uintptr_t bad = 0;
  void *held[64];
  while (!atomic_load(&sweep_stop)) {
    for (int i = 0; i < 64; i++) {
      uint64_t r = test_random(&rng);
      held[i] = tagged_new(r, size_for(r));
    }
    for (int i = 0; i < 64; i++)
      bad += !tagged_free(held[i]);
    test_spin_pause();
  }
  return (void *)bad;
}

static uintptr_t join_result(pthread_t id) {
  void *result;
  pthread_join(id, &result);
  return (uintptr_t)result;
}

static void test_sweep_races_adoption(void) {
  long purge_thread = nsalloc_option_get(NSALLOC_OPTION_PURGE_THREAD);
  long delay = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 1);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 1);
  size_t base = in_use_bytes();
  atomic_store(&sweep_stop, false);
  pthread_t drainers[2], adopter;
  for (uintptr_t i = 0; i < 2; i++)
    pthread_create(&drainers[i], NULL, drain_slots, (void *)(i + 100));
  pthread_create(&adopter, NULL, allocate_and_free, (void *)200);
  uintptr_t bad = 0;
  /* Enough for the race under TSan. Under valgrind, which runs one thread at
   * a time, nothing overlaps anyway: a few waves check the memory accesses
   * (the drainers and the adopter yield there, or they starve the waves). */
  size_t waves = test_threads_serialised() ? 10 : test_instrumented() ? 50 : 100;
  for (size_t wave = 0; wave < waves; wave++) {
    pthread_t ids[SWEEP_WAVE_THREADS];
    for (uintptr_t i = 0; i < SWEEP_WAVE_THREADS; i++)
      pthread_create(&ids[i], NULL, publish_and_exit, (void *)(wave * SWEEP_WAVE_THREADS + i + 1));
    for (int i = 0; i < SWEEP_WAVE_THREADS; i++)
      bad += join_result(ids[i]);
  }
  atomic_store(&sweep_stop, true);
  for (int i = 0; i < 2; i++)
    bad += join_result(drainers[i]);
  bad += join_result(adopter);
  for (int i = 0; i < SHARED_SLOTS; i++) {
    void *old = atomic_exchange(&shared_slots[i], NULL);
    if (old) bad += !tagged_free(old);
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(in_use_bytes(), base);
  nsalloc_collect(true);
  nsalloc_stats_t s;
  nsalloc_stats(&s);
  CHECK_EQ(s.abandoned_segments, 0);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, purge_thread);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_cross_thread_both_directions),
      TEST(test_producer_consumer),
      TEST(test_thread_churn),
      TEST(test_heap_delete_with_remote_frees),
      TEST(test_heap_destroy_after_remote_frees),
      TEST(test_heap_destroy_spares_exited_threads_blocks),
      TEST(test_shared_slots_many_threads),
      TEST(test_remote_frees_bring_full_pages_back),
      TEST(test_sweep_races_adoption),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
