/*
 * test_uv.c - libuv running on a copy (nsalloc_uv.h): the event loop, the
 * thread pool (work items allocating and freeing from its worker threads) and
 * scandir, whose C-library-allocated entries must never reach the copy (its
 * policy is abort: a foreign pointer would kill the test).
 */
#include <uv.h>

#include "nsalloc_uv.h"
#include "test_util.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { WORK_ITEMS = 2000 };

typedef struct job {
  uv_work_t request;
  uint64_t seed;
  bool ok;
} job;

static atomic_int completed;

static void do_work(uv_work_t *request) {
  job *j = (job *)request;
  void *blocks[32];
  uint64_t rng = j->seed;
  j->ok = true;
  for (int i = 0; i < 32; i++) {
    size_t size = 16 + test_random(&rng) % 5000;
    blocks[i] = nsalloc_malloc(size);
    test_fill(blocks[i], size, j->seed + (uint64_t)i);
    j->ok &= test_verify(blocks[i], size, j->seed + (uint64_t)i);
  }
  for (int i = 0; i < 32; i++)
    nsalloc_free(blocks[i]);
}

static void after_work(uv_work_t *request, int status) {
  job *j = (job *)request;
  CHECK(status == 0 && j->ok);
  atomic_fetch_add(&completed, 1);
  nsalloc_free(j); /* allocated on the loop thread, freed here too */
}

static void test_loop_threadpool_and_scandir(void) {
  CHECK_EQ(nsalloc_uv_install(), 0);
  nsalloc_stats_t before;
  nsalloc_stats(&before);
  uv_loop_t *loop = nsalloc_malloc(sizeof *loop);
  CHECK_EQ(uv_loop_init(loop), 0);
  for (int i = 0; i < WORK_ITEMS; i++) {
    job *j = nsalloc_calloc(1, sizeof *j);
    j->seed = (uint64_t)i + 1;
    CHECK_EQ(uv_queue_work(loop, &j->request, do_work, after_work), 0);
  }
  uv_fs_t scan;
  CHECK(uv_fs_scandir(loop, &scan, "/", 0, NULL) > 0); /* synchronous */
  uv_dirent_t entry;
  int entries = 0;
  while (uv_fs_scandir_next(&scan, &entry) != UV_EOF)
    entries++;
  uv_fs_req_cleanup(&scan);
  CHECK(entries > 3);
  CHECK_EQ(uv_run(loop, UV_RUN_DEFAULT), 0);
  CHECK_EQ(completed, WORK_ITEMS);
  CHECK_EQ(uv_loop_close(loop), 0);
  nsalloc_free(loop);
  nsalloc_stats_t after;
  nsalloc_stats(&after);
  CHECK_EQ(after.foreign_pointers, 0);
  CHECK_EQ(after.invalid_pointers, 0);
  CHECK_EQ(after.in_use_bytes, before.in_use_bytes); /* libuv freed all it allocated */
}

int main(int argc, char **argv) {
  static const test_case tests[] = {TEST(test_loop_threadpool_and_scandir)};
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
