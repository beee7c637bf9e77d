/*
 * test_purger.c - the purger thread's start and stop against other threads.
 *
 * core.purger_start_wakes: a deadline that appears while the purger thread
 * is starting wakes it.
 *
 * purger_start() marks the purger STARTING, creates the thread and only then
 * marks it RUNNING. The new thread may already be waiting on its condition
 * variable in between, for the deadline it read when it began: none at all
 * (wait without a timeout) when another thread's pass (a collect, a slow
 * path) had just purged everything. purger_note() used to wake it only when
 * RUNNING, so a deadline noted in that window was lost, and every later one,
 * being later, wakes nobody either: an idle program kept what it freed for
 * good (100 MiB in a red-team program).
 *
 * This program interposes pthread_create (the copy is linked into it) to
 * put into that window what any other thread may do there: before the
 * thread starts, nsalloc_collect(true) (no deadline left); once it runs and
 * before pthread_create returns, the frees of 32 MiB of blocks. The purge
 * delay is 50 ms; 1.5 s later the freed memory must be purged.
 *
 * core.purger_stops_once: two threads stop the purger at once (one sets
 * purge_thread=0, the other calls nsalloc_shutdown). Both used to join it,
 * and the second join never returned (every run hung in its first round).
 * A hang fails the test (alarm).
 *
 * Host builds only (dlsym(RTLD_NEXT), like the other purger tests: /proc).
 */
#define _GNU_SOURCE 1
#include "nsalloc.h"
#include "test_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define MIB   ((size_t)1 << 20)
#define COUNT (32 * MIB / 1024)

static void *blocks[COUNT];
static int creates;
static int interfere; /* the next pthread_create runs core.purger_start_wakes' sequence */

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
  if (!interfere) return real(thread, attr, fn, arg);
  interfere = 0;
  creates++;
  nsalloc_collect(true); /* the purger, once started, finds no deadline */
  int result = real(thread, attr, fn, arg);
  test_sleep_ms(50); /* it waits now; purger_start has not marked it RUNNING */
  for (size_t i = 0; i < COUNT; i++)
    nsalloc_free(blocks[i]);
  return result;
}

static void test_purger_start_wakes(void) {
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 1), 0); /* TSan builds default to 0 */
  CHECK_EQ(nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, 50), 0);
  void *first[200];
  for (int i = 0; i < 200; i++) /* several pages of one bin */
    first[i] = nsalloc_malloc(1000);
  for (size_t i = 0; i < COUNT; i++) {
    blocks[i] = nsalloc_malloc(1000);
    memset(blocks[i], 1, 1000);
  }
  interfere = 1;
  for (int i = 0; i < 200; i++) /* a page emptied: the purger starts */
    nsalloc_free(first[i]);
  CHECK_EQ(creates, 1);
  test_sleep_ms(1500);
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  fprintf(stderr, "committed 1.5 s after freeing 32 MiB: %zu KiB\n", stats.committed_bytes / 1024);
  CHECK(stats.committed_bytes < 8 * MIB);
}

#define STOP_ROUNDS 200
static pthread_barrier_t stop_barrier;

static void *stopper(void *arg) {
  for (int round = 0; round < STOP_ROUNDS; round++) {
    pthread_barrier_wait(&stop_barrier);
    if (arg)
      nsalloc_shutdown();
    else
      nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 0);
    pthread_barrier_wait(&stop_barrier);
  }
  return NULL;
}

static void test_purger_stops_once(void) {
  alarm(60); /* a hang fails the test instead of stalling it */
  nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 0); /* the count below starts without one */
  pthread_barrier_init(&stop_barrier, NULL, 3);
  pthread_t threads[2];
  for (int i = 0; i < 2; i++)
    CHECK_EQ(pthread_create(&threads[i], NULL, stopper, i ? (void *)1 : NULL), 0);
  const char *purger = test_purger_name(nsalloc_prefix());
  long started = 0;
  for (int round = 0; round < STOP_ROUNDS; round++) {
    nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 1);
    void *v[200];
    for (int i = 0; i < 200; i++)
      v[i] = nsalloc_malloc(1000);
    for (int i = 0; i < 200; i++) /* a page emptied: the purger starts */
      nsalloc_free(v[i]);
    started += test_threads_named_become(purger, 1, 50); /* it names itself as it starts */
    pthread_barrier_wait(&stop_barrier);
    pthread_barrier_wait(&stop_barrier);
  }
  for (int i = 0; i < 2; i++)
    pthread_join(threads[i], NULL);
  CHECK(test_threads_named_become(purger, 0, 5000)); /* no purger left */
  fprintf(stderr, "the purger ran in %ld of %d rounds\n", started, STOP_ROUNDS);
  if (!test_instrumented()) CHECK(started > STOP_ROUNDS / 2);
  alarm(0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_purger_start_wakes),
      TEST(test_purger_stops_once),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
