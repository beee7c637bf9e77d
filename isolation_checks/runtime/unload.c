/*
 * unload.c - dlclose one copy while threads keep using the others.
 *
 * Threads started BEFORE the unload have used the victim copy (so each has a
 * default heap and a thread-exit callback registered in it) and keep running
 * on the other copies while the victim's module is closed; threads started
 * AFTER it never see it. All of them then exit: a copy that left its
 * thread-exit callback or fork handlers registered would crash here, in
 * code that is no longer mapped. The victim is then loaded again as a fresh
 * copy, and a fork() checks its unloaded predecessor left no atfork handler.
 */
#include "checks.h"
#include "pattern.h"
#include "verdict.h"

#include "test_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#define ROUND_BLOCKS 64
#define MAX_THREADS  32 /* on each side of the unload */

typedef struct unload_run {
  iso_copies copies; /* items[0] is the victim */
  _Atomic(size_t) done_with_victim;
  _Atomic(bool) victim_closed, stop;
} unload_run;

/* Allocate, verify and free a round of blocks in one copy. */
static void use_copy(const iso_copy *copy, uint64_t *random) {
  void *blocks[ROUND_BLOCKS];
  uint64_t seed = test_random(random);
  for (size_t i = 0; i < ROUND_BLOCKS; i++) {
    blocks[i] = copy->api->malloc(16 + i * 24);
    ISO_EXPECT(blocks[i], "%s: malloc failed", copy->name);
    if (blocks[i]) iso_fill(blocks[i], 16 + i * 24, seed + i);
  }
  for (size_t i = 0; i < ROUND_BLOCKS; i++) {
    if (!blocks[i]) continue;
    ISO_EXPECT(iso_verify(blocks[i], 16 + i * 24, seed + i), "%s: block changed", copy->name);
    copy->api->free(blocks[i]);
  }
}

static void use_survivors(unload_run *run, uint64_t *random) {
  for (size_t i = 1; i < run->copies.count; i++)
    use_copy(&run->copies.items[i], random);
}

static void *before_main(void *arg) {
  unload_run *run = arg;
  uint64_t random = 7;
  use_copy(&run->copies.items[0], &random);
  atomic_fetch_add(&run->done_with_victim, 1);
  while (!atomic_load(&run->stop))
    use_survivors(run, &random);
  return NULL;
}

static void *after_main(void *arg) {
  unload_run *run = arg;
  uint64_t random = 11;
  ISO_EXPECT(atomic_load(&run->victim_closed), "an after-thread ran before the unload");
  for (int i = 0; i < 50; i++)
    use_survivors(run, &random);
  return NULL;
}

static void exit_quietly(void *arg) {
  (void)arg;
}

void check_unload(char **paths, size_t count, const iso_options *options) {
  unload_run *run = calloc(1, sizeof *run);
  if (!run || count < 2) abort();
  iso_copies_load(&run->copies, paths, count, RTLD_LOCAL);
  size_t half = options->threads / 2;
  half = half < 1 ? 1 : half > MAX_THREADS ? MAX_THREADS : half;
  pthread_t before[MAX_THREADS], after[MAX_THREADS];
  for (size_t i = 0; i < half; i++)
    if (pthread_create(&before[i], NULL, before_main, run) != 0) abort();
  while (atomic_load(&run->done_with_victim) < half)
    sched_yield();

  const iso_copy *victim = &run->copies.items[0];
  iso_expect_balanced(victim, false);
  ISO_EXPECT(dlclose(victim->handle) == 0, "dlclose %s: %s", victim->name, dlerror());
#if defined(__GLIBC__) /* musl's dlclose unloads nothing, by design (core.reload covers it) */
  ISO_EXPECT(!dlopen(victim->path, RTLD_NOW | RTLD_NOLOAD), "%s is still loaded", victim->name);
#endif
  atomic_store(&run->victim_closed, true);

  for (size_t i = 0; i < half; i++)
    if (pthread_create(&after[i], NULL, after_main, run) != 0) abort();
  for (size_t i = 0; i < half; i++)
    pthread_join(after[i], NULL);
  atomic_store(&run->stop, true);
  for (size_t i = 0; i < half; i++)
    pthread_join(before[i], NULL);

  iso_copy reloaded;
  iso_copy_load(&reloaded, victim->path, RTLD_LOCAL);
  uint64_t random = 3;
  use_copy(&reloaded, &random);
  iso_expect_balanced(&reloaded, false);
  dlclose(reloaded.handle);

  char output[256];
  int status = test_in_child(exit_quietly, NULL, output, sizeof output);
  ISO_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "fork after the unload: child status %#x %s", status, output);
  for (size_t i = 1; i < run->copies.count; i++)
    iso_expect_balanced(&run->copies.items[i], false);
  printf("unload: %s closed under %zu running threads, %zu more started after; all exited, "
         "reload and fork fine\n",
         victim->name, half, half);
  for (size_t i = 1; i < run->copies.count; i++)
    dlclose(run->copies.items[i].handle);
  free(run);
}
