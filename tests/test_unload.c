/*
 * test_unload.c - a module with a private copy, loaded and unloaded over and
 * over, with a thread that allocates through it and exits only after the
 * dlclose: nothing may call back into the unloaded copy, and nothing piles up
 * in the address space, whether the module's unload path calls
 * nsalloc_unload() or the host just calls dlclose() (the copy's destructor
 * returns the empty segments then). The control shows the measurement sees
 * retained segments: a block the thread keeps alive pins its segment. The
 * module's purger thread is joined at dlclose.
 */
#include "demo/demo_copy.h"
#include "test_module.h"
#include "test_util.h"

#include "nsalloc.h"

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static size_t address_space(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f) {
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
  }
  return (size_t)pages * 4096;
}

static const char *module_path, *ctor_module_path;

enum unload_mode {
  CALL_UNLOAD, /* nsalloc_unload(), then dlclose */
  PLAIN,       /* dlclose only */
  KEEP_BLOCK   /* dlclose only, and the thread keeps one block alive (control) */
};

typedef struct worker {
  const demo_copy *copy;
  bool keep_block;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int stage; /* 0: allocate, 1: allocated, 2: may exit */
} worker;

/* Allocates through the copy (so this thread has a heap in it), then waits
 * until the module is gone and only then exits. */
static void *worker_main(void *arg) {
  worker *w = arg;
  void *blocks[100];
  for (int i = 0; i < 100; i++)
    blocks[i] = w->copy->malloc((size_t)(i * 37 + 1));
  for (int i = w->keep_block ? 1 : 0; i < 100; i++)
    w->copy->free(blocks[i]);
  pthread_mutex_lock(&w->lock);
  w->stage = 1;
  pthread_cond_broadcast(&w->changed);
  while (w->stage != 2)
    pthread_cond_wait(&w->changed, &w->lock);
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* Start a worker on the module's copy and wait until it has allocated. */
static void worker_start(worker *w, void *module, bool keep_block, pthread_t *thread) {
  *w = (worker){((demo_copy_entry)dlsym(module, DEMO_COPY_ENTRY))(), keep_block,
                PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  pthread_create(thread, NULL, worker_main, w);
  pthread_mutex_lock(&w->lock);
  while (w->stage != 1)
    pthread_cond_wait(&w->changed, &w->lock);
  pthread_mutex_unlock(&w->lock);
}

/* Let the worker exit, and wait until it has. */
static void worker_exit(worker *w, pthread_t thread) {
  pthread_mutex_lock(&w->lock);
  w->stage = 2;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  pthread_join(thread, NULL);
}

static void load_use_unload(enum unload_mode mode) {
  void *module = dlopen(module_path, RTLD_NOW | RTLD_LOCAL);
  CHECK(module != NULL);
  if (!module) return;
  worker w;
  pthread_t thread;
  worker_start(&w, module, mode == KEEP_BLOCK, &thread);
  void *p = w.copy->malloc(5000);
  w.copy->free(p);
  if (mode == CALL_UNLOAD) w.copy->unload();
  CHECK_EQ(dlclose(module), 0);
  worker_exit(&w, thread); /* it exits only now: no destructor of the module may run */
}

/* Address-space growth over `cycles` load/use/unload cycles, measured after
 * as many cycles again have settled one-time costs (the loader's structures,
 * a sanitizer's per-thread bookkeeping). Negative when the space shrank (a
 * tool's own mappings going, under valgrind). */
static ptrdiff_t growth_over(int cycles, enum unload_mode mode) {
  for (int i = 0; i < cycles; i++)
    load_use_unload(mode);
  size_t before = address_space();
  for (int i = 0; i < cycles; i++)
    load_use_unload(mode);
  return (ptrdiff_t)(address_space() - before);
}

/* With nsalloc_unload() and with a plain dlclose() the address space stays
 * flat; in the control each cycle leaves the thread's segment behind (a live
 * block pins it), which shows the measurement sees retained segments. Under
 * instrumentation, whose own bookkeeping grows too, only the difference is
 * attributable to the copy. */
static void test_unload_returns_everything(void) {
  int cycles = (int)test_scale(50);
  ptrdiff_t with_unload = growth_over(cycles, CALL_UNLOAD);
  ptrdiff_t plain = growth_over(cycles, PLAIN);
  ptrdiff_t control = growth_over(cycles, KEEP_BLOCK);
  ptrdiff_t segment = (ptrdiff_t)4 << 20;
  if (test_loader_unloads(module_path)) {
    CHECK(control >= with_unload + cycles * segment * 9 / 10);
    CHECK(control >= plain + cycles * segment * 9 / 10);
  } else { /* musl: every cycle reuses the one copy, so even a kept block pins nothing new */
    fprintf(stderr, "note: dlclose() unloads nothing here (musl): no control; reload semantics "
                    "are core.reload's\n");
  }
  if (!test_instrumented()) {
    CHECK(with_unload < 2 * segment);
    CHECK(plain < 2 * segment);
  }
  fprintf(stderr,
          "%d cycles: address space %+td KiB with nsalloc_unload, %+td KiB with a plain dlclose, "
          "%+td KiB with a block kept alive (control)\n",
          cycles, with_unload / 1024, plain / 1024, control / 1024);
}

/* nsalloc_unload() on this program's own copy (so it runs last): segments
 * without live blocks go back, live blocks survive and can still be freed -
 * as a NIF resource destructor does after the unload hook - and a thread's
 * other pages keep working. */
static void test_late_frees_after_unload(void) {
  enum { COUNT = 3000, KEPT = 10 };
  static void *blocks[COUNT];
  for (int i = 0; i < COUNT; i++) {
    blocks[i] = nsalloc_malloc((size_t)(i % 40) * 1000 + 16);
    test_fill(blocks[i], 16, (uint64_t)i);
  }
  for (int i = KEPT; i < COUNT; i++)
    nsalloc_free(blocks[i]);
  nsalloc_stats_t before, after;
  nsalloc_stats(&before);
  nsalloc_unload();
  nsalloc_stats(&after);
  CHECK(after.reserved_bytes < before.reserved_bytes);
  CHECK_EQ(after.in_use_blocks, KEPT);
  for (int i = 0; i < KEPT; i++) {
    CHECK(test_verify(blocks[i], 16, (uint64_t)i));
    nsalloc_free(blocks[i]);
  }
  nsalloc_stats(&after);
  CHECK_EQ(after.in_use_blocks, 0);
}

/* A module's copy starts its purger thread once a free leaves a purge
 * pending, and its destructor at dlclose stops and joins it: while the
 * module is loaded one thread carries the copy's purger name, and after
 * dlclose none does. (Counted by name: a thread an earlier test joined may
 * still be listed, and qemu runs threads of its own.) */
static void test_purger_joined_at_dlclose(void) {
  const char *purger = test_purger_name("demo_a_"); /* the module's copy */
  if (test_threads_named(purger) < 0) {
    fprintf(stderr, "note: no /proc/self/task: purger thread not counted\n");
    return;
  }
  /* Where dlclose() unloads nothing (musl) an earlier test's load of the
   * module is still here, options read and purger perhaps running: this
   * dlopen() then starts no second copy and at most restarts its purger. */
  void *resident = dlopen(module_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (resident)
    dlclose(resident);
  else /* the earlier tests' dlclose joined their copies' purgers */
    CHECK(test_threads_named_become(purger, 0, 10000));
  /* The default everywhere but in ThreadSanitizer builds (options.c); the
   * module's copy reads it when it is loaded. */
  setenv("DEMO_A_OPTIONS", "purge_thread=1", 1);
  void *module = dlopen(module_path, RTLD_NOW | RTLD_LOCAL);
  unsetenv("DEMO_A_OPTIONS");
  CHECK(module != NULL);
  if (!module) return;
  const demo_copy *copy = ((demo_copy_entry)dlsym(module, DEMO_COPY_ENTRY))();
  enum { COUNT = 2000 };
  static void *blocks[COUNT];
  for (int i = 0; i < COUNT; i++)
    blocks[i] = copy->malloc(5000);
  for (int i = 0; i < COUNT; i++)
    copy->free(blocks[i]);
  /* The purger names itself as it starts: give it a moment. */
  long loaded = test_threads_named_become(purger, 1, 10000) ? 1 : test_threads_named(purger);
  CHECK_EQ(dlclose(module), 0);
  fprintf(stderr, "purger threads: %ld with the module\n", loaded);
  if (resident) {
    fprintf(stderr, "note: the module was still loaded (musl): its purger is not counted anew\n");
    CHECK(loaded <= 1);
    return;
  }
  CHECK_EQ(loaded, 1);
  if (test_loader_unloads(module_path))
    CHECK(test_threads_named_become(purger, 0, 10000));
  else /* musl: the module stays, and so may its purger */
    fprintf(stderr, "note: dlclose() unloads nothing here (musl): purger not expected to stop\n");
}

/* A module's constructor starts a thread that allocates through the module's
 * copy and waits for it: that thread joins the copy while dlopen() holds the
 * loader's lock, so joining must not take it. Registering the thread's exit
 * with glibc (__cxa_thread_atexit_impl, tried on 032a764) did, and this
 * dlopen() hung. */
static void test_constructor_thread_allocates(void) {
  alarm(60); /* a hang fails the test */
  void *module = dlopen(ctor_module_path, RTLD_NOW | RTLD_LOCAL);
  CHECK(module != NULL);
  if (!module) return;
  int (*checked)(void) = (int (*)(void))dlsym(module, "ctor_thread_blocks_checked");
  CHECK(checked != NULL);
  if (checked) CHECK_EQ(checked(), 100);
  CHECK_EQ(dlclose(module), 0);
  alarm(0);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODULE CTOR_THREAD_MODULE [TEST...]\n", argv[0]);
    return 2;
  }
  module_path = argv[1];
  ctor_module_path = argv[2];
  /* The loader allocates each thread's block of the module's TLS with the C
   * library's malloc: keep it from opening a new 64 MiB arena meanwhile. */
#if defined(M_ARENA_MAX) /* glibc */
  mallopt(M_ARENA_MAX, 1);
#endif
  static const test_case tests[] = {
      TEST(test_unload_returns_everything), TEST(test_late_frees_after_unload),
      TEST(test_purger_joined_at_dlclose), TEST(test_constructor_thread_allocates)};
  return test_main(argc - 2, argv + 2, tests, TEST_COUNT(tests));
}
