/*
 * ctor_thread_module.c - a module (private copy, prefix ct_) whose
 * constructor starts a thread that allocates through the copy and waits for
 * it, as a plugin that sets up a worker at load time does. The thread's first
 * malloc joins the copy while dlopen() runs the constructor with the loader's
 * lock held: core.unload's test_constructor_thread_allocates hangs if joining
 * takes that lock.
 */
#include "nsalloc.h"

#include <pthread.h>
#include <string.h>

static int blocks_checked;

static void *allocate_and_check(void *unused) {
  (void)unused;
  for (int i = 0; i < 100; i++) {
    size_t size = (size_t)i * 40 + 1;
    unsigned char *block = nsalloc_malloc(size);
    if (!block) break;
    memset(block, i, size);
    if (block[0] == i && block[size - 1] == i) blocks_checked++;
    nsalloc_free(block);
  }
  return NULL;
}

__attribute__((constructor)) static void start_worker_and_wait(void) {
  pthread_t worker;
  if (pthread_create(&worker, NULL, allocate_and_check, NULL) == 0) pthread_join(worker, NULL);
}

/* The blocks the constructor's thread allocated and found intact (100). */
__attribute__((visibility("default"))) int ctor_thread_blocks_checked(void) {
  return blocks_checked;
}
