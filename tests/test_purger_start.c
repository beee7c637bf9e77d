/*
 * test_purger_start.c - a deadline that appears while the purger thread is
 * starting wakes it (core.purger_start_wakes).
 *
 * purger_start() marks the purger STARTING, creates the thread and only then
 * marks it RUNNING. The new thread may already be waiting on its condition
 * variable in between, for the deadline it read when it began: none at all
 * (wait without a timeout) when another thread's pass (a collect, a slow
 * path) had just purged everything. purger_note() used to wake it only when
 * RUNNING, so a deadline noted in that window was lost, and every later one,
 * being later, wakes nobody either: an idle program kept what it freed for
 * good (100 MiB in the red-team program hostile/start_race.c).
 *
 * This program interposes pthread_create (the copy is linked into it) to
 * put into that window what any other thread may do there: before the
 * thread starts, nsalloc_collect(true) (no deadline left); once it runs and
 * before pthread_create returns, the frees of 32 MiB of blocks. The purge
 * delay is 50 ms; 1.5 s later the freed memory must be purged. Host builds
 * only (dlsym(RTLD_NEXT), like the other purger tests: /proc).
 */
#define _GNU_SOURCE 1
#include "nsalloc.h"
#include "test_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#define MIB   ((size_t)1 << 20)
#define COUNT (32 * MIB / 1024)

static void *blocks[COUNT];
static int creates;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
  creates++;
  nsalloc_collect(true); /* the purger, once started, finds no deadline */
  int result = real(thread, attr, fn, arg);
  sleep_ms(50); /* it waits now; purger_start has not marked it RUNNING */
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
  for (int i = 0; i < 200; i++) /* a page emptied: the purger starts */
    nsalloc_free(first[i]);
  CHECK_EQ(creates, 1);
  sleep_ms(1500);
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  fprintf(stderr, "committed 1.5 s after freeing 32 MiB: %zu KiB\n", stats.committed_bytes / 1024);
  CHECK(stats.committed_bytes < 8 * MIB);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_purger_start_wakes),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
