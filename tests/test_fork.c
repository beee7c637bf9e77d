/*
 * test_fork.c - fork() while other threads are allocating: the child can
 * allocate and free at once (the copy's lock is held across fork and released
 * in both processes), and blocks inherited from the parent stay usable.
 */
#include "nsalloc.h"
#include "test_util.h"

#if defined(_WIN32)
/* Windows has no fork(): ctest reports the test as skipped (SKIP_RETURN_CODE). */
int main(void) {
  puts("SKIP: fork() does not exist on Windows");
  return 77;
}
#else
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_bool stop;

/* Keeps taking the slow paths (new segments, purges) that hold the lock. */
static void *churn(void *arg) {
  uint64_t rng = (uintptr_t)arg;
  void *held[64] = {0};
  while (!atomic_load(&stop)) {
    uint64_t r = test_random(&rng);
    size_t slot = r % 64;
    nsalloc_free(held[slot]);
    held[slot] = nsalloc_malloc(r % 3 ? 16 + r % 512 : 100000 + r % ((size_t)5 << 20));
  }
  for (int i = 0; i < 64; i++)
    nsalloc_free(held[i]);
  return NULL;
}

static void child_work(void *arg) {
  unsigned char *inherited = arg;
  bool ok = test_verify(inherited, 1000, 42);
  void *blocks[2000];
  for (int i = 0; i < 2000; i++)
    blocks[i] = nsalloc_malloc((size_t)(i % 700) * 13 + 1);
  for (int i = 0; i < 2000; i++)
    nsalloc_free(blocks[i]);
  void *huge = nsalloc_malloc((size_t)6 << 20);
  nsalloc_free(huge);
  nsalloc_free(inherited);
  _exit(ok && huge ? 0 : 3);
}

static void test_fork_while_threads_allocate(void) {
  pthread_t threads[3];
  for (uintptr_t i = 0; i < 3; i++)
    pthread_create(&threads[i], NULL, churn, (void *)(i + 7));
  size_t forks = test_scale(50);
  for (size_t round = 0; round < forks; round++) {
    unsigned char *inherited = nsalloc_malloc(1000);
    test_fill(inherited, 1000, 42);
    char output[256];
    int status = test_in_child(child_work, inherited, output, sizeof output);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    nsalloc_free(inherited);
  }
  atomic_store(&stop, true);
  for (int i = 0; i < 3; i++)
    pthread_join(threads[i], NULL);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {TEST(test_fork_while_threads_allocate)};
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
#endif
