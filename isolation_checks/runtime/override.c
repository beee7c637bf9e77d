/*
 * override.c - private copies beside the override library.
 *
 * The check re-executes this program in a child with LD_PRELOAD naming the
 * override library, so the process's malloc/free ARE an nsalloc copy (prefix
 * nsalloc_, exported). In the child it loads the copies RTLD_GLOBAL (some
 * with the same nsalloc_ prefix) and checks that the override and every copy
 * still keep to their own blocks, then runs identity and a short stress.
 */
#include "checks.h"
#include "pattern.h"
#include "verdict.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_MARK "ISO_OVERRIDE_CHILD"

typedef bool (*owns_fn)(const void *p);

static void libc_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}
static void *libc_realloc(void *ctx, void *p, size_t size) {
  (void)ctx;
  return realloc(p, size);
}

static void check_beside_override(const iso_copy *copy, owns_fn override_owns) {
  void *ours = copy->api->malloc(80), *process = malloc(80);
  if (!ours || !process) abort();
  iso_fill(process, 80, 1);
  ISO_EXPECT(!override_owns(ours), "the override owns a block of %s", copy->name);
  ISO_EXPECT(!copy->api->owns(process), "%s owns a block of the process malloc", copy->name);
  /* The process's block given to the copy is foreign: forwarded, it reaches
   * the override (the process allocator) with its contents. */
  nsalloc_forward_t forward = {.free = libc_free, .realloc = libc_realloc};
  copy->api->set_foreign_policy(NSALLOC_POLICY_FORWARD, &forward);
  void *grown = copy->api->realloc(process, 160);
  ISO_EXPECT(grown && override_owns(grown) && iso_verify(grown, 80, 1),
             "%s: forwarded realloc lost the override's block", copy->name);
  copy->api->free(grown);
  copy->api->set_foreign_policy(NSALLOC_POLICY_ABORT, NULL);
  copy->api->free(ours);
}

static void run_child(char **paths, size_t count, const iso_options *options) {
  owns_fn override_owns = (owns_fn)dlsym(RTLD_DEFAULT, "nsalloc_owns");
  void *probe = malloc(32);
  ISO_EXPECT(override_owns && override_owns(probe), "the override library is not active");
  free(probe);
  iso_copies copies;
  iso_copies_load(&copies, paths, count, RTLD_GLOBAL);
  ISO_EXPECT((owns_fn)dlsym(RTLD_DEFAULT, "nsalloc_owns") == override_owns,
             "a loaded copy now provides the global nsalloc_owns");
  check_identity(&copies);
  check_stress(&copies, options); /* before the foreign pointers below reach the copies */
  for (size_t i = 0; i < copies.count; i++)
    check_beside_override(&copies.items[i], override_owns);
  printf("override: %zu copies beside the preloaded override library: %s\n", copies.count,
         iso_violation_count() ? "NOT ISOLATED" : "isolated");
  iso_copies_close(&copies);
}

void check_override(char **paths, size_t count, const iso_options *options, char **argv) {
  if (getenv(CHILD_MARK)) {
    run_child(paths, count, options);
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("LD_PRELOAD", options->preload, 1);
    setenv(CHILD_MARK, "1", 1);
    execv("/proc/self/exe", argv);
    perror("execv");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ISO_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "the child with %s preloaded failed (status %#x)", options->preload, status);
}
