/*
 * test_util.h - a minimal test harness: CHECK records a failure and goes on,
 * RUN executes one test function, and test_main prints "N passed, N failed".
 */
#ifndef NSALLOC_TEST_UTIL_H
#define NSALLOC_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern int test_failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      test_failures++;                                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
    }                                                                                              \
  } while (0)

#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                                \
    if (check_a_ != check_b_) {                                                                    \
      test_failures++;                                                                             \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__, __LINE__, #a,  \
              check_a_, #b, check_b_);                                                             \
    }                                                                                              \
  } while (0)

typedef struct test_case {
  const char *name;
  void (*run)(void);
} test_case;

/* Runs the tests named on the command line (all when none) and returns the
 * process exit status. */
int test_main(int argc, char **argv, const test_case *tests, size_t count);

/* Deterministic pseudo-random numbers (xorshift64*). */
uint64_t test_random(uint64_t *state);

/* Fill / verify a block with a pattern derived from a seed. */
void test_fill(void *p, size_t size, uint64_t seed);
bool test_verify(const void *p, size_t size, uint64_t seed);

/* Does `text` name a copy as diagnostics do, "nsalloc[<prefix> in
 * <module>]", with `module_part` in its module's file name (a path, or
 * just the file's base name: on Windows ".exe" or ".dll" follows)? */
bool test_names_copy(const char *text, const char *prefix, const char *module_part);

/* Run fn in a forked child; returns its wait status. The child's stderr is
 * captured into `output` (NUL-terminated, truncated to `capacity`).
 * Windows has no fork: fn runs on a new thread of this process with stderr
 * redirected, and an abort() ends only that thread (a SIGABRT handler calls
 * ExitThread); the status is encoded as a POSIX wait status, so the W*
 * macros below read it the same way. */
int test_in_child(void (*fn)(void *), void *arg, char *output, size_t capacity);
#if defined(_WIN32)
#define WIFEXITED(status)   (((status)&0x7f) == 0)
#define WEXITSTATUS(status) (((status) >> 8) & 0xff)
#define WIFSIGNALED(status) (((status)&0x7f) != 0)
#define WTERMSIG(status)    ((status)&0x7f)
#else
#include <sys/wait.h>
#endif

/* `n` scaled down for slow instrumentation: 1/20 under valgrind
 * (NSALLOC_UNDER_VALGRIND set by scripts/memcheck.sh) and TSan, 1/4 under
 * ASan and wine; at least 1. Tests keep their full size in the plain build. */
size_t test_scale(size_t n);
/* Under valgrind or a sanitizer, whose own bookkeeping shows in the process's
 * memory figures. */
bool test_instrumented(void);
#if defined(__linux__)
/* The VmFlags of the mapping holding p contain `flag` (/proc/self/smaps;
 * "hg": advised MADV_HUGEPAGE). */
bool test_mapping_has_flag(const void *p, const char *flag);
#endif
#if !defined(_WIN32)
/* The process's minor page faults so far (getrusage). */
long test_minor_faults(void);
/* Sleep `ms` milliseconds, through interruptions. */
void test_sleep_ms(long ms);
/* The threads of this process named `name` (/proc/self/task/TID/comm, as
 * the thread set it with prctl(PR_SET_NAME)), or -1 where unknown. */
long test_threads_named(const char *name);
/* The name of the purger thread of the copy with this prefix: the prefix
 * followed by "purge", cut to the 15 bytes Linux keeps (a static buffer). */
const char *test_purger_name(const char *prefix);
/* Wait up to `ms` milliseconds until test_threads_named(name) is `count`;
 * whether it became that. A thread leaves /proc a moment after its join
 * returned (much later under qemu). */
bool test_threads_named_become(const char *name, long count, long ms);
#endif
/* Under valgrind (NSALLOC_UNDER_VALGRIND, set by scripts/memcheck.sh), which
 * emulates the memory system calls itself. */
bool test_under_valgrind(void);
/* Under valgrind, which runs one thread at a time: races need real overlap. */
bool test_threads_serialised(void);
/* The body of a loop that spins on another thread: gives up the processor
 * when threads are serialised, where a spinning thread would otherwise run
 * its whole time slice for nothing and starve the one it waits for. */
void test_spin_pause(void);

#define TEST(fn)                                                                                   \
  { #fn, fn }
#define TEST_COUNT(array) (sizeof(array) / sizeof((array)[0]))

#endif
