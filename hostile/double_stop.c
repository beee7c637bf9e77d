/* purger_stop() from two threads at once (purge_thread=0 set by both, or
 * nsalloc_shutdown() racing it): both may see RUNNING and both join the same
 * thread. Usage: double_stop ROUNDS [shutdown] */
#include "common.h"
#include <stdatomic.h>

static pthread_barrier_t bar;
static int rounds, use_shutdown;

static void start_purger(void) {
  void *v[200];
  for (int i = 0; i < 200; i++) v[i] = nsalloc_malloc(1000);
  for (int i = 0; i < 200; i++) nsalloc_free(v[i]); /* a page emptied: purger_poll */
}
static void *stopper(void *arg) {
  long me = (long)(uintptr_t)arg;
  for (int r = 0; r < rounds; r++) {
    pthread_barrier_wait(&bar);
    if (use_shutdown && me == 1)
      nsalloc_shutdown();
    else
      nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 0);
    pthread_barrier_wait(&bar);
  }
  return NULL;
}
int main(int argc, char **argv) {
  rounds = argc > 1 ? atoi(argv[1]) : 2000;
  use_shutdown = argc > 2 && !strcmp(argv[2], "shutdown");
  pthread_barrier_init(&bar, NULL, 3);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, stopper, (void *)(uintptr_t)i);
  int started = 0;
  double w0 = wall_ms();
  for (int r = 0; r < rounds; r++) {
    nsalloc_option_set(NSALLOC_OPTION_PURGE_THREAD, 1);
    start_purger();
    if (thread_count() == 4) started++;
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    if (r % 500 == 0) { printf("round %d (%.0f ms), purger started in %d rounds, threads now %d\n", r, wall_ms() - w0, started, thread_count()); fflush(stdout); }
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("done: %d rounds, purger started in %d, threads now %d\n", rounds, started, thread_count());
  return 0;
}
