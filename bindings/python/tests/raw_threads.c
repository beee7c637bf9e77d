/*
 * raw_threads.c - test helper, loaded with ctypes: drives PyMem_Raw* from
 * threads Python knows nothing about (plain pthreads, never holding the GIL).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

enum { MAX_THREADS = 64, SLOTS = 256 };

/* Blocks in flight between threads: a thread swaps its block into a random
 * slot and frees (after checking) whatever it took out, so most blocks are
 * freed by a thread other than the one that allocated them. */
typedef struct block_header_s {
  size_t size;
  uint64_t seed;
} block_header_t;

typedef struct churn_s {
  _Atomic(block_header_t *) slots[SLOTS];
  int rounds;
  _Atomic(int) errors;
} churn_t;

static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13, *state ^= *state >> 7, *state ^= *state << 17;
  return *state;
}

static void fill(block_header_t *block) {
  uint8_t *bytes = (uint8_t *)(block + 1);
  for (size_t i = 0; i < block->size - sizeof *block; i++)
    bytes[i] = (uint8_t)(block->seed + i);
}

static bool intact(const block_header_t *block) {
  const uint8_t *bytes = (const uint8_t *)(block + 1);
  for (size_t i = 0; i < block->size - sizeof *block; i++)
    if (bytes[i] != (uint8_t)(block->seed + i)) return false;
  return true;
}

static void check_and_free(churn_t *churn, block_header_t *block) {
  if (!block) return;
  if (!intact(block)) atomic_fetch_add(&churn->errors, 1);
  PyMem_RawFree(block);
}

static void *churn_thread(void *arg) {
  churn_t *churn = arg;
  uint64_t state = (uint64_t)(uintptr_t)&state | 1;
  for (int round = 0; round < churn->rounds; round++) {
    uint64_t r = next_random(&state);
    size_t size = sizeof(block_header_t) + (r % 8 == 0 ? r % 70000 : r % 600);
    block_header_t *block = PyMem_RawMalloc(size);
    if (!block) {
      atomic_fetch_add(&churn->errors, 1);
      continue;
    }
    *block = (block_header_t){size, r};
    fill(block);
    if (r % 3 == 0) { /* grow or shrink it: the common prefix must move along */
      size_t new_size = sizeof(block_header_t) + (r >> 8) % 3000;
      block_header_t *moved = PyMem_RawRealloc(block, new_size);
      if (!moved) {
        atomic_fetch_add(&churn->errors, 1);
        PyMem_RawFree(block);
        continue;
      }
      if (moved->size != size || moved->seed != r) atomic_fetch_add(&churn->errors, 1);
      moved->size = new_size < size ? new_size : size;
      if (!intact(moved)) atomic_fetch_add(&churn->errors, 1);
      moved->size = new_size;
      fill(moved);
      block = moved;
    }
    check_and_free(churn, atomic_exchange(&churn->slots[(r >> 32) % SLOTS], block));
  }
  return NULL;
}

/* Run `threads` pthreads doing `rounds` RAW allocations each; returns the
 * number of corrupted blocks or failed allocations (-1: bad arguments or no
 * threads). */
int raw_threads_churn(int threads, int rounds) {
  if (threads < 1 || threads > MAX_THREADS) return -1;
  static churn_t churn;
  memset(&churn, 0, sizeof churn);
  churn.rounds = rounds;
  pthread_t ids[MAX_THREADS];
  for (int i = 0; i < threads; i++)
    if (pthread_create(&ids[i], NULL, churn_thread, &churn) != 0) return -1;
  for (int i = 0; i < threads; i++)
    pthread_join(ids[i], NULL);
  for (int i = 0; i < SLOTS; i++)
    check_and_free(&churn, churn.slots[i]);
  return atomic_load(&churn.errors);
}

typedef struct free_job_s {
  void **blocks;
  size_t count, step, first;
} free_job_t;

static void *free_thread(void *arg) {
  free_job_t *job = arg;
  for (size_t i = job->first; i < job->count; i += job->step)
    PyMem_RawFree(job->blocks[i]);
  return NULL;
}

/* Free `count` blocks through PyMem_RawFree from `threads` pthreads at once.
 * Returns 0, or -1 when the threads could not be started. */
int raw_threads_free(void **blocks, size_t count, int threads) {
  if (threads < 1 || threads > MAX_THREADS) return -1;
  pthread_t ids[MAX_THREADS];
  free_job_t jobs[MAX_THREADS];
  for (int i = 0; i < threads; i++) {
    jobs[i] = (free_job_t){blocks, count, (size_t)threads, (size_t)i};
    if (pthread_create(&ids[i], NULL, free_thread, &jobs[i]) != 0) return -1;
  }
  for (int i = 0; i < threads; i++)
    pthread_join(ids[i], NULL);
  return 0;
}
