/*
 * test_reload.c - a module whose unload hook calls nsalloc_unload(), loaded
 * again after dlclose(). With glibc the reload is a fresh copy. With musl
 * dlclose() unloads nothing, so the reload reuses the copy that was shut
 * down: it must start again, and threads must still give their heaps back
 * when they exit - both threads born after the reload and a thread whose heap
 * predates the unload.
 */
#include "demo/demo_copy.h"
#include "test_util.h"

#include <dlfcn.h>
#include <pthread.h>

static const char *module_path;

static void allocate_and_free(const demo_copy *copy) {
  void *blocks[100];
  for (int i = 0; i < 100; i++) /* 100 sizes: reaches the malloc slow path */
    blocks[i] = copy->malloc((size_t)(i * 53 + 1));
  for (int i = 0; i < 100; i++)
    copy->free(blocks[i]);
}

static void *short_lived(void *copy) {
  allocate_and_free(copy);
  return NULL;
}

static size_t live_heaps(const demo_copy *copy) {
  nsalloc_stats_t stats;
  copy->stats(&stats);
  return stats.heaps;
}

/* A thread started before the first unload: allocates in each cycle's copy
 * when told to, exits at the end. */
typedef struct veteran {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  const demo_copy *copy; /* set: allocate through it, then clear */
  bool quit;
} veteran;

static void *veteran_main(void *arg) {
  veteran *v = arg;
  pthread_mutex_lock(&v->lock);
  for (;;) {
    while (!v->copy && !v->quit)
      pthread_cond_wait(&v->changed, &v->lock);
    if (v->quit) break;
    allocate_and_free(v->copy);
    v->copy = NULL;
    pthread_cond_broadcast(&v->changed);
  }
  pthread_mutex_unlock(&v->lock);
  return NULL;
}

static void veteran_use(veteran *v, const demo_copy *copy) {
  pthread_mutex_lock(&v->lock);
  v->copy = copy;
  pthread_cond_broadcast(&v->changed);
  while (v->copy)
    pthread_cond_wait(&v->changed, &v->lock);
  pthread_mutex_unlock(&v->lock);
}

static void test_reload_after_unload(void) {
  veteran v = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, false};
  pthread_t vt;
  pthread_create(&vt, NULL, veteran_main, &v);
  const demo_copy *copy = NULL;
  for (int cycle = 0; cycle < 4; cycle++) {
    void *module = dlopen(module_path, RTLD_NOW | RTLD_LOCAL);
    CHECK(module != NULL);
    if (!module) break;
    copy = ((demo_copy_entry)dlsym(module, DEMO_COPY_ENTRY))();
    veteran_use(&v, copy);
    size_t before = live_heaps(copy); /* the veteran's */
    pthread_t t;
    pthread_create(&t, NULL, short_lived, (void *)copy);
    pthread_join(t, NULL);
    CHECK_EQ(live_heaps(copy), before); /* its exit gave the heap back */
    if (cycle == 3) break;              /* the last copy stays loaded */
    copy->unload();
    CHECK_EQ(dlclose(module), 0);
  }
  pthread_mutex_lock(&v.lock);
  v.quit = true;
  pthread_cond_broadcast(&v.changed);
  pthread_mutex_unlock(&v.lock);
  pthread_join(vt, NULL);
  if (copy) CHECK_EQ(live_heaps(copy), 0); /* the veteran's exit, too */
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODULE [TEST...]\n", argv[0]);
    return 2;
  }
  module_path = argv[1];
  static const test_case tests[] = {TEST(test_reload_after_unload)};
  return test_main(argc - 1, argv + 1, tests, TEST_COUNT(tests));
}
