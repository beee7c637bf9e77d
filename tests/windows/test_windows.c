/*
 * test_windows.c - what the Windows port adds (core/prim/windows.c), on
 * native threads (CreateThread, not winpthreads):
 *   - a thread's heap is released when it exits (FLS callback), and, as the
 *     control, stays when the thread is killed without running callbacks;
 *   - threads that exit holding live blocks: the blocks stay valid, are
 *     freed by another thread, and a forced collect gives the memory back;
 *   - purge (MEM_DECOMMIT + MEM_COMMIT) keeps the range usable and reading
 *     zero; without a purge the old contents are still there (control);
 *   - nsalloc_shutdown (FlsFree) leaves the heaps of live threads alone.
 */
#include "nsalloc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>
#include <windows.h>

static nsalloc_stats_t stats(void) {
  nsalloc_stats_t s;
  nsalloc_stats(&s);
  return s;
}

/* ---- thread exit ----------------------------------------------------------- */
enum { THREADS = 16, KEPT = 64 };

typedef struct worker {
  HANDLE thread;
  HANDLE ready;   /* set by the worker once it has allocated */
  HANDLE release; /* set by the test to let it exit */
  void *kept[KEPT];
  uint64_t seed;
} worker;

static DWORD WINAPI allocate_then_wait(LPVOID p) {
  worker *w = p;
  for (int i = 0; i < KEPT; i++) {
    size_t size = 16 + (w->seed * 7 + (uint64_t)i * 131) % 3000;
    w->kept[i] = nsalloc_malloc(size);
    test_fill(w->kept[i], 16, w->seed + (uint64_t)i);
  }
  SetEvent(w->ready);
  WaitForSingleObject(w->release, INFINITE);
  return 0;
}

/* Starts THREADS workers and waits until each holds its blocks. */
static void start_workers(worker *workers) {
  for (int i = 0; i < THREADS; i++) {
    workers[i].seed = (uint64_t)i + 1;
    workers[i].ready = CreateEventA(NULL, TRUE, FALSE, NULL);
    workers[i].release = CreateEventA(NULL, TRUE, FALSE, NULL);
    workers[i].thread = CreateThread(NULL, 0, allocate_then_wait, &workers[i], 0, NULL);
    WaitForSingleObject(workers[i].ready, INFINITE);
  }
}

/* Frees every worker's blocks here (remote frees into exited or killed
 * threads' pages); returns how many had lost their contents. */
static int free_kept_blocks(worker *workers) {
  int bad = 0;
  for (int i = 0; i < THREADS; i++) {
    for (int k = 0; k < KEPT; k++) {
      bad += !test_verify(workers[i].kept[k], 16, workers[i].seed + (uint64_t)k);
      nsalloc_free(workers[i].kept[k]);
    }
    CloseHandle(workers[i].thread);
    CloseHandle(workers[i].ready);
    CloseHandle(workers[i].release);
  }
  return bad;
}

static void test_thread_exit_releases_heap(void) {
  nsalloc_collect(true);
  nsalloc_stats_t before = stats();
  static worker workers[THREADS];
  start_workers(workers);
  CHECK_EQ(stats().heaps, before.heaps + THREADS);
  for (int i = 0; i < THREADS; i++) {
    SetEvent(workers[i].release);
    WaitForSingleObject(workers[i].thread, INFINITE);
  }
  nsalloc_stats_t exited = stats();
  CHECK_EQ(exited.heaps, before.heaps); /* every exit ran the callback */
  CHECK(exited.abandoned_segments > 0); /* their live blocks' segments wait for reclaim */
  CHECK_EQ(free_kept_blocks(workers), 0);
  nsalloc_collect(true); /* adopts the abandoned segments; now empty, they go back */
  nsalloc_stats_t after = stats();
  CHECK_EQ(after.abandoned_segments, 0);
  CHECK_EQ(after.in_use_blocks, before.in_use_blocks);
  CHECK(after.committed_bytes <= before.committed_bytes + ((size_t)1 << 20));
}

/* Control: TerminateThread runs no FLS callback, so the heaps stay live; the
 * test above would see it. (The killed threads' heaps are leaked.) */
static void test_terminated_thread_keeps_heap(void) {
  nsalloc_stats_t before = stats();
  static worker workers[THREADS];
  start_workers(workers);
  for (int i = 0; i < THREADS; i++) {
    TerminateThread(workers[i].thread, 1);
    WaitForSingleObject(workers[i].thread, INFINITE);
  }
  CHECK_EQ(stats().heaps, before.heaps + THREADS);
  CHECK_EQ(free_kept_blocks(workers), 0);
}

/* Many short native threads in waves: the address space stays bounded by
 * what one wave holds, because later threads reuse what earlier ones left. */
static DWORD WINAPI short_lived(LPVOID p) {
  uint64_t rng = (uintptr_t)p;
  void *blocks[128];
  for (int i = 0; i < 128; i++)
    blocks[i] = nsalloc_malloc(16 + test_random(&rng) % 4000);
  for (int i = 0; i < 128; i++)
    nsalloc_free(blocks[i]);
  return 0;
}

static void test_thread_waves_stay_bounded(void) {
  enum { WAVE = 8 };
  size_t waves = test_scale(40);
  nsalloc_stats_t before = stats();
  for (size_t wave = 0; wave < waves; wave++) {
    HANDLE threads[WAVE];
    for (uintptr_t i = 0; i < WAVE; i++)
      threads[i] = CreateThread(NULL, 0, short_lived, (LPVOID)(wave * WAVE + i + 1), 0, NULL);
    WaitForMultipleObjects(WAVE, threads, TRUE, INFINITE);
    for (int i = 0; i < WAVE; i++)
      CloseHandle(threads[i]);
  }
  nsalloc_stats_t after = stats();
  CHECK_EQ(after.heaps, before.heaps);
  CHECK_EQ(after.in_use_blocks, before.in_use_blocks);
  CHECK(after.reserved_bytes <= before.reserved_bytes + (size_t)(WAVE + 8) * ((size_t)4 << 20));
}

/* ---- purge --------------------------------------------------------------- */
enum { SPAN = 1 << 20 }; /* a large object: whole slices of a shared segment */

static bool all_bytes(const unsigned char *p, size_t size, unsigned char value) {
  for (size_t i = 0; i < size; i++)
    if (p[i] != value) return false;
  return true;
}

/* Frees a filled span and allocates the same size again (the same slices come
 * back); returns whether the new block is at the same address and all zero. */
static bool span_reads_zero_after(bool purge, bool *same_address) {
  unsigned char *p = nsalloc_malloc(SPAN);
  memset(p, 0xAB, SPAN);
  nsalloc_free(p);
  if (purge) nsalloc_collect(true);
  unsigned char *q = nsalloc_malloc(SPAN);
  *same_address = q == p;
  MEMORY_BASIC_INFORMATION info;
  bool committed = VirtualQuery(q, &info, sizeof info) && info.State == MEM_COMMIT &&
                   info.Protect == PAGE_READWRITE;
  bool zero = committed && all_bytes(q, SPAN, 0);
  nsalloc_free(q);
  return zero;
}

static void test_purge_reads_zero(void) {
  long delay = nsalloc_option_get(NSALLOC_OPTION_PURGE_DELAY_MS);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, -1); /* only collect(true) purges */
  bool same = false;
  uint64_t purges = stats().purges;
  CHECK(span_reads_zero_after(true, &same));
  CHECK(same);
  CHECK(stats().purges > purges);
  /* control: no purge, the old bytes are still there */
  CHECK(!span_reads_zero_after(false, &same));
  CHECK(same);
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, delay);
}

/* ---- shutdown with live threads --------------------------------------------- */
static void test_shutdown_leaves_live_heaps(void) {
  static worker workers[THREADS];
  start_workers(workers);
  nsalloc_stats_t before = stats();
  nsalloc_shutdown(); /* FlsFree: must not run the exit callback on live threads */
  nsalloc_stats_t after = stats();
  CHECK_EQ(after.heaps, before.heaps);
  CHECK_EQ(after.abandoned_segments, before.abandoned_segments);
  for (int i = 0; i < THREADS; i++) {
    SetEvent(workers[i].release);
    WaitForSingleObject(workers[i].thread, INFINITE);
  }
  CHECK_EQ(free_kept_blocks(workers), 0);
  void *p = nsalloc_malloc(100); /* the copy still works after shutdown */
  CHECK(p != NULL);
  nsalloc_free(p);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_thread_exit_releases_heap),  TEST(test_terminated_thread_keeps_heap),
      TEST(test_thread_waves_stay_bounded),  TEST(test_purge_reads_zero),
      TEST(test_shutdown_leaves_live_heaps), /* last: it shuts the copy down */
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
