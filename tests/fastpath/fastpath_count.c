/*
 * fastpath_count.c - loads fastpath_module.so and drives its loops; run
 * under `valgrind --tool=callgrind` by fastpath_count.sh, which divides the
 * instructions of the calls each loop makes by their number. First the local
 * pair (one thread mallocs and frees), then producer -> consumer: the main
 * thread mallocs each batch, a second thread frees it (remote frees), the two
 * strictly taking turns, so the count does not depend on scheduling.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH  50 /* live blocks per round: the pairs do not always hit one slot */
#define ROUNDS 20000

typedef void (*mallocs_fn)(void **, unsigned, size_t);
typedef void (*frees_fn)(void **, unsigned);

typedef struct consumer_s {
  frees_fn frees;
  void **blocks;
  sem_t full, empty;
} consumer_t;

static void *consume(void *arg) {
  consumer_t *c = arg;
  for (unsigned round = 0; round < ROUNDS; round++) {
    sem_wait(&c->full);
    c->frees(c->blocks, BATCH);
    sem_post(&c->empty);
  }
  return NULL;
}

static void *symbol(void *module, const char *path, const char *name) {
  void *fn = dlsym(module, name);
  if (!fn) {
    fprintf(stderr, "%s: missing %s\n", path, name);
    exit(1);
  }
  return fn;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODULE\n", argv[0]);
    return 2;
  }
  void *module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  mallocs_fn mallocs = (mallocs_fn)symbol(module, argv[1], "fastpath_mallocs");
  frees_fn frees = (frees_fn)symbol(module, argv[1], "fastpath_frees");
  mallocs_fn producer = (mallocs_fn)symbol(module, argv[1], "fastpath_producer_mallocs");
  void *blocks[BATCH];
  /* The first round maps the segment and carves the page; the profile counts
   * it too, amortised over the 20,000 rounds as in any long-running program. */
  for (unsigned round = 0; round < ROUNDS; round++) {
    mallocs(blocks, BATCH, 32);
    frees(blocks, BATCH);
  }
  static consumer_t c;
  c.frees = (frees_fn)symbol(module, argv[1], "fastpath_remote_frees");
  c.blocks = blocks;
  pthread_t thread;
  if (sem_init(&c.full, 0, 0) != 0 || sem_init(&c.empty, 0, 0) != 0 ||
      pthread_create(&thread, NULL, consume, &c) != 0) {
    fprintf(stderr, "cannot start the consumer thread\n");
    return 1;
  }
  for (unsigned round = 0; round < ROUNDS; round++) {
    producer(blocks, BATCH, 32);
    sem_post(&c.full);
    sem_wait(&c.empty);
  }
  pthread_join(thread, NULL);
  return 0;
}
