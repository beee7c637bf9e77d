/*
 * prim/unix.c - the platform seam on Linux (and other POSIX systems):
 * mmap, madvise, clock_gettime and pthreads.
 */
#include "../internal.h"

#include <sys/mman.h>
#include <time.h>

static void *prim_map(size_t size) {
  void *p =
      mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void *prim_map_aligned(size_t size, size_t alignment) {
  if (size > SIZE_MAX - alignment) return NULL;
  /* Over-allocate, then trim the misaligned head and the unused tail. */
  uint8_t *raw = prim_map(size + alignment);
  if (!raw) return NULL;
  uint8_t *aligned = (uint8_t *)align_up((uintptr_t)raw, alignment);
  size_t head = (size_t)(aligned - raw), tail = alignment - head;
  if (head) munmap(raw, head);
  if (tail) munmap(aligned + size, tail);
  return aligned;
}

static void prim_unmap(void *p, size_t size) {
  munmap(p, size);
}

static void prim_purge(void *p, size_t size) {
  madvise(p, size, MADV_DONTNEED);
}

static uint64_t prim_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void prim_lock(prim_lock_t *lock) {
  pthread_mutex_lock(lock);
}
static void prim_unlock(prim_lock_t *lock) {
  pthread_mutex_unlock(lock);
}
static void prim_once(prim_once_t *once, void (*fn)(void)) {
  pthread_once(once, fn);
}

static bool prim_key_create(prim_key_t *key, void (*fn)(void *)) {
  return pthread_key_create(key, fn) == 0;
}
static void prim_key_set(prim_key_t key, void *value) {
  pthread_setspecific(key, value);
}
static void prim_key_delete(prim_key_t key) {
  pthread_key_delete(key);
}
static void prim_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  pthread_atfork(prepare, parent, child);
}
