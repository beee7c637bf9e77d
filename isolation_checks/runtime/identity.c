/*
 * identity.c - is each module's copy really its own?
 *
 * Under symbol interposition (a copy built with default visibility, loaded
 * RTLD_GLOBAL beside another with the same prefix) a module's references to
 * its API bind to the first module's definitions: its function pointers then
 * point into the other module, and its blocks belong to the other copy.
 */
#include "checks.h"
#include "verdict.h"

#include "dl_compat.h"
#include <stdint.h>
#include <stdio.h>

static const void *module_base(const void *address) {
  Dl_info info;
  return dladdr(address, &info) ? info.dli_fbase : NULL;
}

static void expect_in_module(const iso_copy *copy, const void *address, const char *what) {
  const void *base = module_base(copy->api);
  ISO_EXPECT(module_base(address) == base, "%s: %s lives in another module (interposed)",
             copy->name, what);
}

#define FUNCTION_ADDRESS(fn) ((const void *)(uintptr_t)(fn))

static void check_functions(const iso_copy *copy) {
  const iso_module_api *api = copy->api;
  expect_in_module(copy, FUNCTION_ADDRESS(api->malloc), "malloc");
  expect_in_module(copy, FUNCTION_ADDRESS(api->realloc), "realloc");
  expect_in_module(copy, FUNCTION_ADDRESS(api->free), "free");
  expect_in_module(copy, FUNCTION_ADDRESS(api->usable_size), "usable_size");
  expect_in_module(copy, FUNCTION_ADDRESS(api->owns), "owns");
  expect_in_module(copy, FUNCTION_ADDRESS(api->stats), "stats");
  expect_in_module(copy, FUNCTION_ADDRESS(api->set_foreign_policy), "set_foreign_policy");
  expect_in_module(copy, api->prefix(), "the prefix string");
}

/* A block of copy i is owned by i alone and counted in i's stats alone. */
static void check_blocks(const iso_copies *copies, size_t i) {
  const iso_copy *copy = &copies->items[i];
  size_t before[ISO_MAX_COPIES];
  for (size_t j = 0; j < copies->count; j++) {
    nsalloc_stats_t stats;
    copies->items[j].api->stats(&stats);
    before[j] = stats.in_use_blocks;
  }
  void *p = copy->api->malloc(64);
  ISO_EXPECT(p && copy->api->owns(p), "%s: malloc gave a block it does not own", copy->name);
  for (size_t j = 0; j < copies->count; j++) {
    if (j == i) continue;
    nsalloc_stats_t stats;
    copies->items[j].api->stats(&stats);
    ISO_EXPECT(!copies->items[j].api->owns(p), "%s owns a block of %s: the copies are one",
               copies->items[j].name, copy->name);
    ISO_EXPECT(stats.in_use_blocks == before[j], "%s counts a block of %s: the copies are one",
               copies->items[j].name, copy->name);
  }
  copy->api->free(p);
}

void check_identity(iso_copies *copies) {
  size_t before = iso_violation_count();
  for (size_t i = 0; i < copies->count; i++) {
    check_functions(&copies->items[i]);
    check_blocks(copies, i);
  }
  printf("identity: %zu copies, each its own module's: %s\n", copies->count,
         iso_violation_count() == before ? "yes" : "NO");
}
