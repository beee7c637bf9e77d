/*
 * test_override.c - the override library answers like glibc. Run with
 * libnsalloc-override.so preloaded (ctest sets LD_PRELOAD); glibc's own
 * answers come from the C library's definitions, looked up in libc.so.6
 * itself, so every comparison is made against the glibc the test runs on.
 */
#define _GNU_SOURCE
#include "test_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *libc_handle(void) {
  static void *handle;
  if (!handle) handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return handle;
}
#define LIBC(name) ((__typeof__(&name))dlsym(libc_handle(), #name))

/* Results go through this volatile sink: a compiler may otherwise elide a
 * malloc/free pair and assume the allocation succeeded (clang does). */
static void *volatile kept;
/* The allocation functions whose errno is checked are called through
 * volatile pointers: clang otherwise assumes they leave errno alone. */
static void *(*volatile call_malloc)(size_t) = malloc;
static void *(*volatile call_calloc)(size_t, size_t) = calloc;
static void *(*volatile call_pvalloc)(size_t) = pvalloc;
static void *(*volatile call_memalign)(size_t, size_t) = memalign;
static void *(*volatile call_aligned_alloc)(size_t, size_t) = aligned_alloc;

static size_t rss_bytes(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* The override is what answers, not glibc (the preload took effect). */
static void test_override_is_active(void) {
  Dl_info info;
  CHECK(dladdr((void *)malloc, &info) && strstr(info.dli_fname, "nsalloc-override"));
  CHECK(libc_handle() != NULL && LIBC(malloc) != malloc);
}

/* pvalloc rounds up to whole pages: a size that cannot be rounded is ENOMEM. */
static void test_pvalloc_overflow(void) {
  static const size_t sizes[] = {SIZE_MAX - 100, SIZE_MAX, SIZE_MAX - 4094};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    errno = 0;
    CHECK((kept = call_pvalloc(sizes[i])) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(LIBC(pvalloc)(sizes[i]) == NULL && errno == ENOMEM);
  }
  char *p = pvalloc(1);
  CHECK(p && ((uintptr_t)p & 4095) == 0 && malloc_usable_size(p) >= 4096);
  free(p);
}

/* Requests the kernel's overcommit policy refuses fail as they do in glibc;
 * what glibc gets, nsalloc gets. */
static void test_overcommit_like_glibc(void) {
  static const size_t sizes[] = {(size_t)1 << 40, (size_t)32 << 40, (size_t)64 << 30};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    errno = 0;
    void *theirs = LIBC(malloc)(sizes[i]);
    int their_errno = errno;
    errno = 0;
    void *ours = kept = call_malloc(sizes[i]);
    CHECK((ours != NULL) == (theirs != NULL));
    if (!ours) CHECK_EQ(errno, ENOMEM);
    if (!theirs) CHECK_EQ(their_errno, ENOMEM);
    free(ours);
    LIBC(free)(theirs);
    errno = 0;
    ours = kept = call_calloc(1, sizes[i]);
    theirs = LIBC(calloc)(1, sizes[i]);
    CHECK((ours != NULL) == (theirs != NULL));
    free(ours);
    LIBC(free)(theirs);
  }
}

/* Fresh memory from the OS is already zero: a big calloc must not touch it. */
static void test_calloc_leaves_fresh_memory_untouched(void) {
  size_t size = (size_t)1 << 30, before = rss_bytes();
  unsigned char *p = kept = calloc(1, size);
  CHECK(p != NULL);
  if (!p) return;
  CHECK(rss_bytes() - before < ((size_t)16 << 20));
  CHECK(p[0] == 0 && p[size / 2] == 0 && p[size - 1] == 0);
  free(p);
}

/* glibc 2.36's memalign and aligned_alloc: any alignment up to SIZE_MAX/2+1,
 * rounded up to a power of two; NULL and errno exactly where glibc says. */
static void test_memalign_like_glibc(void) {
  static const size_t alignments[] = {0,
                                      1,
                                      3,
                                      8,
                                      16,
                                      24,
                                      48,
                                      100,
                                      1000,
                                      4097,
                                      65537,
                                      (size_t)3 << 20,
                                      SIZE_MAX / 2 + 1,
                                      SIZE_MAX / 2 + 2,
                                      SIZE_MAX};
  static const size_t sizes[] = {1, 100, 5000};
  for (size_t a = 0; a < sizeof alignments / sizeof *alignments; a++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (int which = 0; which < 2; which++) {
        size_t alignment = alignments[a], size = sizes[s];
        errno = 0;
        void *theirs =
            which ? LIBC(memalign)(alignment, size) : LIBC(aligned_alloc)(alignment, size);
        int their_errno = errno;
        errno = 0;
        void *ours = kept =
            which ? call_memalign(alignment, size) : call_aligned_alloc(alignment, size);
        int our_errno = errno;
        CHECK((ours != NULL) == (theirs != NULL));
        if (!ours && !theirs) CHECK_EQ(our_errno, their_errno);
        if (ours) {
          size_t expected = 16; /* glibc's rounding of a granted alignment (<= 2^63) */
          while (expected < alignment)
            expected <<= 1;
          CHECK(((uintptr_t)ours & (expected - 1)) == 0 && malloc_usable_size(ours) >= size);
        }
        if ((ours != NULL) != (theirs != NULL))
          fprintf(stderr, "  %s(%zu, %zu): ours %p (errno %d), glibc %p (errno %d)\n",
                  which ? "memalign" : "aligned_alloc", alignment, size, ours, our_errno, theirs,
                  their_errno);
        free(ours);
        LIBC(free)(theirs);
      }
}

/* mallinfo2 reports nsalloc's memory: live bytes grow and shrink with it. */
static void test_mallinfo_reports_nsalloc_memory(void) {
  enum { COUNT = 1000, SIZE = 10000 };
  static void *blocks[COUNT];
  struct mallinfo2 before = mallinfo2();
  for (int i = 0; i < COUNT; i++)
    blocks[i] = malloc(SIZE);
  struct mallinfo2 during = mallinfo2();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* the old interface is the point */
  struct mallinfo old = mallinfo();
#pragma GCC diagnostic pop
  CHECK(during.uordblks - before.uordblks >= (size_t)COUNT * SIZE);
  CHECK(during.arena >= during.uordblks && during.fordblks == during.arena - during.uordblks);
  CHECK_EQ(old.uordblks, (int)during.uordblks);
  for (int i = 0; i < COUNT; i++)
    free(blocks[i]);
  struct mallinfo2 after = mallinfo2();
  CHECK(after.uordblks <= before.uordblks + 64 * 1024);
}

/* malloc_trim gives freed memory back to the OS, and says so. */
static void test_malloc_trim_releases_memory(void) {
  enum { COUNT = 65536, SIZE = 1000 };
  static void *blocks[COUNT];
  for (int i = 0; i < COUNT; i++) {
    blocks[i] = malloc(SIZE);
    memset(blocks[i], 1, SIZE);
  }
  for (int i = 0; i < COUNT; i++)
    free(blocks[i]);
  size_t freed_rss = rss_bytes(), freed_arena = mallinfo2().arena;
  CHECK_EQ(malloc_trim(0), 1);
  struct mallinfo2 trimmed = mallinfo2();
  CHECK(rss_bytes() < freed_rss);
  CHECK(trimmed.arena < freed_arena);
  CHECK(trimmed.fordblks < ((size_t)1 << 20)); /* hardly any free memory left resident */
}

/* malloc_stats prints glibc's format with nsalloc's figures. */
static void test_malloc_stats_prints_nsalloc_figures(void) {
  void *p = kept = malloc(123456);
  int fds[2];
  CHECK(pipe(fds) == 0);
  int saved = dup(STDERR_FILENO);
  dup2(fds[1], STDERR_FILENO);
  malloc_stats();
  dup2(saved, STDERR_FILENO);
  close(fds[1]);
  close(saved);
  char text[1024] = {0};
  CHECK(read(fds[0], text, sizeof text - 1) > 0);
  close(fds[0]);
  size_t in_use = 0;
  const char *line = strstr(text, "in use bytes     =");
  CHECK(strncmp(text, "Arena 0:\n", 9) == 0 && line);
  if (line) in_use = strtoull(line + 18, NULL, 10);
  CHECK_EQ(in_use, mallinfo2().uordblks);
  CHECK(in_use >= 123456);
  free(p);
}

/* glibc's layout tunables do not apply to nsalloc: mallopt says so (0). */
static void test_mallopt_reports_not_applied(void) {
  CHECK_EQ(mallopt(M_MMAP_THRESHOLD, 1 << 20), 0);
  CHECK_EQ(mallopt(M_ARENA_MAX, 2), 0);
}

/* 1000 short-lived threads, 8 at a time, each allocating and freeing 1 MiB of
 * small blocks: what stays resident once the program is idle is bounded as in
 * glibc (which keeps about 1.5 MiB here), not one segment per exited thread.
 * Idle means past the purge delay (500 ms): until then the last threads'
 * memory stays resident for the next ones (about 8.6 MiB right after). */
static void *one_mib_of_small_blocks(void *arg) {
  enum { COUNT = (1 << 20) / 64 };
  unsigned seed = (unsigned)(uintptr_t)arg;
  void **blocks = malloc(COUNT * sizeof *blocks);
  for (int i = 0; i < COUNT; i++) {
    size_t size = 16 + (size_t)rand_r(&seed) % 96;
    blocks[i] = malloc(size);
    memset(blocks[i], 1, size);
  }
  for (int i = 0; i < COUNT; i++)
    free(blocks[i]);
  free(blocks);
  return NULL;
}
static void test_thread_churn_returns_memory(void) {
  size_t before = rss_bytes();
  for (uintptr_t i = 0; i < 1000; i += 8) {
    pthread_t threads[8];
    for (uintptr_t k = 0; k < 8; k++)
      pthread_create(&threads[k], NULL, one_mib_of_small_blocks, (void *)(i + k));
    for (int k = 0; k < 8; k++)
      pthread_join(threads[k], NULL);
  }
  usleep(1000 * 1000);
  size_t grown = rss_bytes() - before;
  if (grown > ((size_t)4 << 20)) fprintf(stderr, "  resident after churn: +%zu KiB\n", grown >> 10);
  CHECK(grown <= ((size_t)4 << 20));
}

int main(int argc, char **argv) {
  static const test_case tests[] = {
      TEST(test_override_is_active),          TEST(test_pvalloc_overflow),
      TEST(test_overcommit_like_glibc),       TEST(test_calloc_leaves_fresh_memory_untouched),
      TEST(test_memalign_like_glibc),         TEST(test_mallinfo_reports_nsalloc_memory),
      TEST(test_malloc_trim_releases_memory), TEST(test_malloc_stats_prints_nsalloc_figures),
      TEST(test_mallopt_reports_not_applied), TEST(test_thread_churn_returns_memory),
  };
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
