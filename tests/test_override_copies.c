/*
 * test_override_copies.c - blocks of modules' private copies handed to the
 * process's free/realloc/malloc_usable_size while libnsalloc-override.so is
 * preloaded (ctest sets LD_PRELOAD), and glibc's own blocks beside them.
 *
 * Usage: test_override_copies <module>... - demo modules (demo_copy.h): two
 * with the same prefix (the incident's shape) and others with 2 MiB and
 * 8 MiB segments. A module's block must never reach glibc: the override
 * aborts with a message naming itself and the module that owns the block.
 * glibc's blocks (main heap, mmapped, aligned to a segment boundary, holding
 * a copy of a real segment signature) must still go to glibc.
 */
#define _GNU_SOURCE
#include "../tests/demo/demo_copy.h"
#include "test_util.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODULES 8

static struct module {
  const char *path;
  const demo_copy *copy;
} modules[MAX_MODULES];
static size_t module_count;
static char override_path[4096];

static void *libc_handle(void) {
  static void *handle;
  if (!handle) handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return handle;
}
#define LIBC(name) ((__typeof__(&name))dlsym(libc_handle(), #name))

/* A block of `m` whose 8 bytes before it lie in another live block of the
 * same copy, set to 0x21: a glibc chunk header (size 32, PREV_INUSE) - the
 * issue's repro. glibc's free() takes such a block into its tcache without
 * a word and writes its first 16 bytes. */
static unsigned char *block_with_chunk_header(const struct module *m) {
  unsigned char *blocks[64];
  unsigned char *found = NULL;
  for (int i = 0; i < 64; i++)
    blocks[i] = m->copy->malloc(24);
  for (int i = 0; i < 64 && !found; i++)
    for (int j = 0; j < 64 && !found; j++)
      if (blocks[j] == blocks[i] + 32) found = blocks[j];
  for (int i = 0; i < 64; i++)
    if (blocks[i] != found && blocks[i] + 32 != found) m->copy->free(blocks[i]);
  if (found) {
    memcpy(found - 8, &(uint64_t){0x21}, 8);
    memset(found, 0xAB, 24);
  }
  return found;
}

typedef struct process_call {
  const char *op; /* "free", "realloc", "usable_size" */
  unsigned char *p;
} process_call;

/* In the child: the process's allocation function on another copy's block.
 * Surviving it means the block went to glibc: say whether glibc wrote it. */
static void *volatile kept;

static void call_process_allocator(void *arg) {
  process_call *call = arg;
  if (strcmp(call->op, "free") == 0)
    free(call->p);
  else if (strcmp(call->op, "realloc") == 0)
    kept = realloc(call->p, 100);
  else
    (void)malloc_usable_size(call->p);
  bool intact = true;
  for (int i = 0; i < 16; i++)
    intact &= call->p[i] == 0xAB;
  fprintf(stderr, "the process's %s accepted another copy's block silently%s\n", call->op,
          intact ? "" : " and glibc overwrote its first bytes");
}

/* `output` must name the complaining copy (the override) and the owner. */
static void expect_both_named(const char *output, const char *op, const void *p,
                              const char *owner_prefix, const char *owner_path) {
  char expected[8192];
  snprintf(expected, sizeof expected,
           "nsalloc[nsalloc_ in %s]: %s(0x%" PRIxPTR
           "): pointer not owned by this copy (foreign): a block of nsalloc[%s in %s]; aborting",
           override_path, op, (uintptr_t)p, owner_prefix, owner_path);
  CHECK(strstr(output, expected) != NULL);
  if (!strstr(output, expected)) fprintf(stderr, "  got: %s\n  expected: %s\n", output, expected);
}

/* The repro, for each module (all three segment sizes) and each
 * operation: the override recognises the block and aborts instead of
 * forwarding it to glibc. */
static void test_copy_blocks_never_reach_glibc(void) {
  static const char *const ops[] = {"free", "realloc", "usable_size"};
  for (size_t i = 0; i < module_count; i++) {
    unsigned char *p = block_with_chunk_header(&modules[i]);
    CHECK(p != NULL);
    if (!p) continue;
    for (int k = 0; k < 3; k++) {
      char output[8192];
      process_call call = {ops[k], p};
      int status = test_in_child(call_process_allocator, &call, output, sizeof output);
      CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
      expect_both_named(output, ops[k], p, modules[i].copy->prefix(), modules[i].path);
    }
    modules[i].copy->free(p);
  }
}

/* Large and huge blocks too (a huge one spans several segment units). */
static void test_large_and_huge_blocks_recognised(void) {
  static const size_t sizes[] = {300000, (size_t)5 << 20, (size_t)20 << 20};
  for (size_t i = 0; i < module_count; i++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      unsigned char *p = modules[i].copy->malloc(sizes[s]);
      memset(p, 0xAB, 16);
      char output[8192];
      process_call call = {"free", p};
      int status = test_in_child(call_process_allocator, &call, output, sizeof output);
      CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
      expect_both_named(output, "free", p, modules[i].copy->prefix(), modules[i].path);
      modules[i].copy->free(p);
    }
}

typedef struct copy_call {
  const demo_copy *copy;
  void *p;
} copy_call;

static void call_copy_free(void *arg) {
  copy_call *call = arg;
  call->copy->free(call->p);
}

/* Two modules with the same prefix (the incident's shape): a private copy
 * handed the other's block names both modules, so they can be told apart. */
static void test_same_prefix_copies_named_by_module(void) {
  for (size_t i = 0; i < module_count; i++)
    for (size_t j = 0; j < module_count; j++) {
      if (i == j || strcmp(modules[i].copy->prefix(), modules[j].copy->prefix()) != 0) continue;
      void *theirs = modules[j].copy->malloc(48);
      char output[8192], expected[8192];
      copy_call call = {modules[i].copy, theirs};
      int status = test_in_child(call_copy_free, &call, output, sizeof output);
      CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
      snprintf(expected, sizeof expected,
               "nsalloc[%s in %s]: free(0x%" PRIxPTR
               "): pointer not owned by this copy (foreign): a block of nsalloc[%s in %s]",
               modules[i].copy->prefix(), modules[i].path, (uintptr_t)theirs,
               modules[j].copy->prefix(), modules[j].path);
      CHECK(strstr(output, expected) != NULL);
      if (!strstr(output, expected))
        fprintf(stderr, "  got: %s\n  expected: %s\n", output, expected);
      modules[j].copy->free(theirs);
    }
}

/* ---- glibc's own blocks still go to glibc ------------------------------- */

/* glibc's own figures (its mallinfo2, not the override's): bytes in use in
 * its arenas and mmapped chunks. Blocks above the tcache's limit (1032
 * bytes) go back to the bins at once, so a free shows here. */
static size_t glibc_in_use(void) {
  struct mallinfo2 info = LIBC(mallinfo2)();
  return info.uordblks + info.hblkhd;
}

/* free() of glibc's block p of `size` bytes (> 1032): glibc gets it back. */
static void expect_freed_by_glibc(void *p, size_t size) {
  size_t before = glibc_in_use();
  free(p);
  CHECK(before - glibc_in_use() >= size);
}

typedef struct hostile {
  const unsigned char *signature; /* a real segment's first 64 bytes */
} hostile;

/* In the child: glibc blocks whose candidate segment bases are mapped, freed
 * through the override. Exits 1 on a failed check. */
static void free_hostile_glibc_blocks(void *arg) {
  const hostile *h = arg;
  enum { SIZE = 2048, MAX_KEPT = 8192 };
  /* A block at a segment boundary (so every candidate base is mapped: the
   * block itself) holding a real signature copied from another address. */
  for (size_t alignment = (size_t)2 << 20; alignment <= (size_t)8 << 20; alignment <<= 1) {
    unsigned char *p = LIBC(memalign)(alignment, SIZE);
    CHECK(p && ((uintptr_t)p & (alignment - 1)) == 0);
    memcpy(p, h->signature, 64);
    expect_freed_by_glibc(p, SIZE);
  }
  /* Main-heap blocks whose 4 MiB-aligned base lies inside glibc's heap. */
  static void *kept[MAX_KEPT];
  unsigned char *first = LIBC(malloc)(SIZE);
  size_t count = 0, checked = 0;
  while (count < MAX_KEPT && checked < 8) {
    unsigned char *p = kept[count++] = LIBC(malloc)(SIZE);
    if (((uintptr_t)p & ~(uintptr_t)((4 << 20) - 1)) > (uintptr_t)first) {
      expect_freed_by_glibc(kept[--count], SIZE);
      checked++;
    }
  }
  CHECK_EQ(checked, 8);
  /* mmapped chunks, one aligned to 8 MiB. */
  expect_freed_by_glibc(LIBC(malloc)((size_t)5 << 20), (size_t)5 << 20);
  expect_freed_by_glibc(LIBC(memalign)((size_t)8 << 20, (size_t)9 << 20), (size_t)9 << 20);
  while (count)
    free(kept[--count]);
  free(first);
  exit(test_failures ? 1 : 0);
}

static void test_glibc_blocks_still_go_to_glibc(void) {
  CHECK(module_count > 0);
  if (!module_count) return;
  /* A real signature: the first bytes of the segment of a module's block. */
  unsigned char *block = modules[0].copy->malloc(64);
  hostile h = {(const unsigned char *)((uintptr_t)block & ~(uintptr_t)((4 << 20) - 1))};
  char output[8192];
  int status = test_in_child(free_hostile_glibc_blocks, &h, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(strstr(output, "nsalloc[") == NULL);
  if (output[0]) fprintf(stderr, "  child said: %s\n", output);
  modules[0].copy->free(block);
}

int main(int argc, char **argv) {
  Dl_info info;
  if (!dladdr((void *)free, &info) || !strstr(info.dli_fname, "nsalloc-override")) {
    fprintf(stderr, "run with libnsalloc-override.so preloaded\n");
    return 1;
  }
  snprintf(override_path, sizeof override_path, "%s", info.dli_fname);
  int first_test_arg = 1;
  for (; first_test_arg < argc && module_count < MAX_MODULES && argv[first_test_arg][0] != '-';
       first_test_arg++) {
    void *handle = dlopen(argv[first_test_arg], RTLD_NOW | RTLD_LOCAL);
    demo_copy_entry entry = handle ? (demo_copy_entry)dlsym(handle, DEMO_COPY_ENTRY) : NULL;
    if (!entry) {
      fprintf(stderr, "cannot load %s: %s\n", argv[first_test_arg], dlerror());
      return 1;
    }
    modules[module_count++] = (struct module){argv[first_test_arg], entry()};
  }
  static const test_case tests[] = {
      TEST(test_copy_blocks_never_reach_glibc),
      TEST(test_large_and_huge_blocks_recognised),
      TEST(test_same_prefix_copies_named_by_module),
      TEST(test_glibc_blocks_still_go_to_glibc),
  };
  argv[first_test_arg - 1] = argv[0];
  return test_main(argc - first_test_arg + 1, argv + first_test_arg - 1, tests, TEST_COUNT(tests));
}
