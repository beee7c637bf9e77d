/*
 * test_move_failure.c - what the copy does when the kernel refuses to move
 * pages (prim_move, core/segment_fill.c). A seccomp filter installed in a
 * child process makes every mremap() fail with a chosen errno:
 *
 *   - EINVAL: the kernel refused before touching the destination. The copy
 *     falls back: sources are unmapped, destinations stay fresh, a growing
 *     block's bytes are copied. Every block keeps its contents.
 *   - ENOMEM: the kernel may have failed after it released the destination,
 *     which another mapping may now hold. The copy stops with a message
 *     naming the move instead of writing there (here the destination was
 *     never released: the check errs on the side of stopping).
 *
 * Linux with seccomp only; each case in a child (a filter cannot be
 * removed).
 */
#include "nsalloc.h"
#include "test_util.h"

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#if defined(__x86_64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define THIS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* Make every mremap() of this process fail with `error`. */
static bool mremap_fails_with(int error) {
  struct sock_filter filter[] = {
      /* another architecture's call numbers (an emulator's host): allowed */
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_AUDIT_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mremap, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)error & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0;
}

/* A freed block whose resident segment a larger one would take in (a move),
 * then a written block grown by realloc (a move of a live block). Exits 0
 * when every byte survived, 2 without seccomp. */
static void churn_with_failing_moves(void *error) {
  /* No purger runs in a child and the cache's resident budget would purge
   * the warm segment at once: keep it resident. */
  nsalloc_option_set(NSALLOC_OPTION_PURGE_DELAY_MS, -1);
  void *warm = nsalloc_malloc(6 * MIB); /* cached resident: the next fill's source */
  if (warm) memset(warm, 0x11, 6 * MIB);
  nsalloc_free(warm);
  if (!mremap_fails_with(*(int *)error)) {
    fprintf(stderr, "note: no seccomp filter: %s\n", strerror(errno));
    _exit(2);
  }
  uint8_t *block = nsalloc_malloc(10 * MIB);
  if (!block) _exit(3);
  test_fill(block, 10 * MIB, 7);
  uint8_t *grown = nsalloc_realloc(block, 30 * MIB);
  if (!grown || !test_verify(grown, 10 * MIB, 7)) _exit(4);
  nsalloc_free(grown);
  _exit(0);
}

/* -1: not checked here (noted). Valgrind emulates mremap and mmap itself and
 * does not honour MAP_FIXED_NOREPLACE, so a refused move looks lost there. */
static int run_child(int error, char *output, size_t capacity) {
  if (test_under_valgrind()) {
    fprintf(stderr, "note: under valgrind, which emulates mremap/mmap: not checked\n");
    return -1;
  }
  return test_in_child(churn_with_failing_moves, &error, output, capacity);
}

static void test_refused_moves_fall_back(void) {
  char output[2048];
  int status = run_child(EINVAL, output, sizeof output);
  if (status == -1) return;
  fprintf(stderr, "%s", output);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return; /* noted in the output */
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(strstr(output, "aborting") == NULL);
}

static void test_failed_moves_stop_the_copy(void) {
  char output[2048];
  int status = run_child(ENOMEM, output, sizeof output);
  if (status == -1) return;
  fprintf(stderr, "%s", output);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return;
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  CHECK(strstr(output, "moving pages from 0x") != NULL);
  CHECK(strstr(output, "aborting") != NULL);
}

int main(int argc, char **argv) {
  static const test_case tests[] = {TEST(test_refused_moves_fall_back),
                                    TEST(test_failed_moves_stop_the_copy)};
  return test_main(argc, argv, tests, TEST_COUNT(tests));
}
#else
int main(void) {
  return 0; /* pages move only on Linux (PRIM_MOVES_PAGES) */
}
#endif
