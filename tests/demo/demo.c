/*
 * demo.c - nsalloc's main job in one screen: three private copies in one
 * process (two with different prefixes, two with the same prefix), each
 * allocating and reallocating on its own; a block of one copy handed to
 * another is caught with a clear message; per-copy statistics.
 */
#include "demo_copy.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { COPIES = 3 };

static void print_message(const char *message, void *arg) {
  (void)arg;
  printf("    caught: %s\n", message);
}

static const demo_copy *load(const char *path) {
  void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    fprintf(stderr, "demo: %s\n", dlerror());
    exit(1);
  }
  return ((demo_copy_entry)dlsym(module, DEMO_COPY_ENTRY))();
}

int main(int argc, char **argv) {
  if (argc != COPIES + 1) {
    fprintf(stderr, "usage: %s MODULE MODULE MODULE\n", argv[0]);
    return 2;
  }
  const demo_copy *copy[COPIES];
  for (int i = 0; i < COPIES; i++) {
    copy[i] = load(argv[i + 1]);
    printf("loaded %-28s private copy, prefix %s\n", strrchr(argv[i + 1], '/') + 1,
           copy[i]->prefix());
  }

  printf("\n1. Each copy grows a 3-key vector 48 -> 96 bytes (the NIF incident's shape):\n");
  void *keys[COPIES];
  for (int i = 0; i < COPIES; i++) {
    unsigned long *v = copy[i]->malloc(48);
    v[0] = 0x1111, v[1] = 0x2222, v[2] = 0x3333;
    v = copy[i]->realloc(v, 96);
    printf("   copy %d: keys after realloc = %lx %lx %lx %s\n", i, v[0], v[1], v[2],
           v[0] == 0x1111 && v[2] == 0x3333 ? "(intact)" : "(CORRUPTED)");
    keys[i] = v;
  }

  printf("\n2. Copy 0's block handed to copy 2 (same prefix as copy 0!) and copy 1:\n");
  for (int i = 1; i < COPIES; i++) {
    printf("   copy %d owns it? %s\n", i, copy[i]->owns(keys[0]) ? "yes" : "no");
    copy[i]->set_message_handler(print_message, NULL);
    copy[i]->set_foreign_policy(NSALLOC_POLICY_REPORT, NULL);
    void *moved = copy[i]->realloc(keys[0], 200);
    printf("    realloc in the wrong copy returned %p: the block is untouched\n", moved);
  }

  printf("\n3. Under the default policy (abort), the wrong copy stops the process:\n");
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    copy[1]->set_message_handler(NULL, NULL); /* the default: one line on stderr */
    copy[1]->set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
    copy[1]->free(keys[0]);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("   child %s\n", WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT
                              ? "aborted (SIGABRT) instead of corrupting memory"
                              : "did NOT abort");

  printf("\n4. Per-copy statistics:\n");
  printf("   %-10s %12s %8s %12s %12s %8s\n", "prefix", "in use (B)", "blocks", "committed",
         "reserved", "foreign");
  for (int i = 0; i < COPIES; i++) {
    nsalloc_stats_t s;
    copy[i]->stats(&s);
    printf("   %-10s %12zu %8zu %12zu %12zu %8llu\n", copy[i]->prefix(), s.in_use_bytes,
           s.in_use_blocks, s.committed_bytes, s.reserved_bytes,
           (unsigned long long)s.foreign_pointers);
  }
  for (int i = 0; i < COPIES; i++)
    copy[i]->free(keys[i]);
  printf("\nEvery block went back to the copy that owns it.\n");
  return 0;
}
