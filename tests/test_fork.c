/*
 * test_fork.c - fork() while other threads are allocating: the child can
 * allocate and free at once (the copy's lock is held across fork and released
 * in both processes), and blocks inherited from the parent stay usable; other
 * fork handlers may allocate; neither a remote free nor a thread exit nor a
 * release cut short by fork() hangs or breaks the child.
 *
 * White-box: the test compiles the core itself (copy t_) to stage the state a
 * thread leaves behind when fork() interrupts it.
 */
#include "nsalloc.c"

#include "demo_copy.h"
#include "test_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
/* The children of test_fork_during_a_thread_exit inherit the exiting thread,
 * finished and never joined there: not a leak of theirs. */
const char *__tsan_default_options(void) {
  return "report_thread_leaks=0";
}
#endif

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

/* A prepare handler registered before a copy exists runs after the copy's
 * own (which holds the copy's lock) and allocates a block that needs a new
 * segment. Regression: fork() hung forever in segment_obtain. The copy lives
 * in a module loaded after the handler was registered, as a plugin's would. */
static const demo_copy *late_copy;
static void *prepare_block;
static void late_prepare(void) {
  prepare_block = late_copy->malloc((size_t)3 << 20);
}
static void late_after(void) {
  late_copy->free(prepare_block);
}
static void fork_with_allocating_handler(void *arg) {
  (void)arg;
  alarm(20); /* a hang fails the test instead of stalling it */
  pthread_atfork(late_prepare, late_after, late_after);
  void *module = dlopen(DEMO_MODULE, RTLD_NOW | RTLD_LOCAL);
  if (!module) _exit(4);
  late_copy = ((demo_copy_entry)dlsym(module, DEMO_COPY_ENTRY))();
  late_copy->free(late_copy->malloc(10)); /* the copy is in use */
  pid_t pid = fork();
  if (pid == 0) _exit(prepare_block ? 0 : 5);
  int status = 0;
  waitpid(pid, &status, 0);
  _exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 && prepare_block ? 0 : 6);
}
static void test_fork_handler_that_allocates(void) {
  char output[256];
  int status = test_in_child(fork_with_allocating_handler, NULL, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* fork() between a remote free's push onto a parked page (TF_NOTIFYING set)
 * and its notification: the freeing thread does not exist in the child, so
 * the child must not wait for it. Staged by hand: block b is pushed the way
 * free_remote() pushes it, and its notification is left pending. */
static void collect_in_child(void *arg) {
  (void)arg;
  alarm(20);
  nsalloc_collect(true); /* collects every page, b's included */
  void *p = nsalloc_malloc(64);
  nsalloc_free(p);
  _exit(0);
}
static void test_fork_during_remote_notification(void) {
  void *a = nsalloc_malloc(64), *b = nsalloc_malloc(64);
  page_t *page = live_block_page(b);
  CHECK(page != NULL && live_block_page(a) == page);
  ((block_t *)b)->tag = (uintptr_t)page;
  ((block_t *)b)->next = NULL;
  atomic_store(&page->thread_free, thread_free_bits(page, b) | TF_COUNT_ONE | TF_NOTIFYING);
  char output[256];
  int status = test_in_child(collect_in_child, NULL, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  page_notify_owner(page); /* the staged free's notification, in the parent */
  nsalloc_free(a);
  nsalloc_collect(true);
  nsalloc_stats_t stats;
  nsalloc_stats(&stats);
  CHECK_EQ(stats.in_use_blocks, 0);
}

/* fork() while another thread abandons its heap at exit: fork waits for the
 * abandonment, so the child never inherits a half-abandoned heap (a segment
 * both on the heap's list and on the abandoned list), which its unload used to
 * unmap twice (a red-team program crashed 188 children of 200). The exiting
 * thread keeps a live block in each of its segments and dirties a second one,
 * so its exit has many segments to collect, purge and abandon; fork() comes
 * at a random moment of it. The child frees the blocks, unloads the copy
 * and allocates again. */
#define EXIT_SEGMENTS 24
#define EXIT_BLOCK    ((size_t)1900 << 10)
static void *kept[EXIT_SEGMENTS];
static atomic_bool exiting;

static void *exit_with_segments(void *arg) {
  (void)arg;
  void *dirty[EXIT_SEGMENTS];
  for (int i = 0; i < EXIT_SEGMENTS; i++) {
    kept[i] = nsalloc_malloc(EXIT_BLOCK);
    dirty[i] = nsalloc_malloc(EXIT_BLOCK);
    memset(dirty[i], 1, EXIT_BLOCK);
  }
  for (int i = 0; i < EXIT_SEGMENTS; i++)
    nsalloc_free(dirty[i]);
  atomic_store(&exiting, true);
  return NULL; /* thread_done abandons the segments one by one */
}

static void unload_after_the_exit(void *arg) {
  (void)arg;
  alarm(20);
  for (int i = 0; i < EXIT_SEGMENTS; i++)
    nsalloc_free(kept[i]);
  nsalloc_unload();
  void *p = nsalloc_malloc(100);
  nsalloc_free(p);
  _exit(p ? 0 : 3);
}

static void test_fork_during_a_thread_exit(void) {
  uint64_t rng = 99;
  size_t rounds = test_scale(30);
  for (size_t round = 0; round < rounds; round++) {
    atomic_store(&exiting, false);
    pthread_t thread;
    CHECK_EQ(pthread_create(&thread, NULL, exit_with_segments, NULL), 0);
    while (!atomic_load(&exiting))
      test_spin_pause();
    usleep((useconds_t)(test_random(&rng) % 2000));
    char output[256];
    int status = test_in_child(unload_after_the_exit, NULL, output, sizeof output);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fprintf(stderr, "child: %s\n", output);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pthread_join(thread, NULL);
    for (int i = 0; i < EXIT_SEGMENTS; i++)
      nsalloc_free(kept[i]);
  }
}

/* fork() from inside the forking thread's own exit (a host memory source's
 * callback, say): fork does not wait for itself, and in the child that exit
 * is still the thread's own, so the child's unload does not wait for it
 * either. Staged: the exit is entered by hand. */
static void unload_inside_own_exit(void *arg) {
  (void)arg;
  alarm(20);
  nsalloc_unload(); /* the caller is inside its own exit */
  copy_exit_end();
  _exit(atomic_load(&copy.exits_inside) == 0 ? 0 : 3);
}
static void test_fork_inside_own_exit(void) {
  CHECK(copy_exit_begin());
  char output[256];
  int status = test_in_child(unload_inside_own_exit, NULL, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  copy_exit_end();
}

/* fork() while another thread's release waits at the closed gate: that
 * release does not exist in the child, whose running copy must open the gate
 * again, or every later thread exit there would be turned away and keep its
 * heap. Staged: the gate is closed by hand, as copy_exits_close() does. */
static void *allocate_and_exit(void *arg) {
  (void)arg;
  nsalloc_free(nsalloc_malloc(1000));
  return NULL;
}
static void exits_return_heaps_in_child(void *arg) {
  (void)arg;
  alarm(20);
  nsalloc_stats_t before, after;
  nsalloc_stats(&before);
  for (int i = 0; i < 20; i++) {
    pthread_t thread;
    pthread_create(&thread, NULL, allocate_and_exit, NULL);
    pthread_join(thread, NULL);
  }
  nsalloc_stats(&after);
  _exit(after.heaps == before.heaps ? 0 : 3);
}
static void test_fork_while_a_release_waits(void) {
  atomic_store(&copy.exits_closed, true);
  char output[256];
  int status = test_in_child(exits_return_heaps_in_child, NULL, output, sizeof output);
  atomic_store(&copy.exits_closed, false);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {TEST(test_fork_while_threads_allocate),
                                    TEST(test_fork_handler_that_allocates),
                                    TEST(test_fork_during_remote_notification),
                                    TEST(test_fork_during_a_thread_exit),
                                    TEST(test_fork_inside_own_exit),
                                    TEST(test_fork_while_a_release_waits)};
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
