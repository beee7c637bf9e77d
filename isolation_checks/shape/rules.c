/*
 * rules.c - evaluating the build-shape rules on an artifact's ELF facts.
 */
#include "rules.h"

#include "id_record.h"

#include <stdio.h>
#include <string.h>

/* The C names the override library documents (core/override.c). */
static const char *const override_names[] = {
    "malloc",   "calloc",         "realloc",     "free",         "aligned_alloc",
    "memalign", "posix_memalign", "valloc",      "pvalloc",      "malloc_usable_size",
    "mallinfo", "mallinfo2",      "malloc_trim", "malloc_stats", "mallopt"};

/* Names only an allocator defines: a copy that defines one of them unprefixed
 * replaces or collides with the process allocator (or another bundled one). */
static const char *const allocator_names[] = {
    "malloc",       "calloc",         "realloc",     "free",      "aligned_alloc",
    "memalign",     "posix_memalign", "valloc",      "pvalloc",   "malloc_usable_size",
    "reallocarray", "cfree",          "malloc_trim", "mallocx",   "rallocx",
    "xallocx",      "sallocx",        "dallocx",     "sdallocx",  "nallocx",
    "mallctl",      "rpmalloc",       "rpfree",      "rprealloc", "rpcalloc",
    "dlmalloc",     "dlfree",         "dlrealloc",   "dlcalloc",  "mallinfo",
    "mallinfo2",    "malloc_stats",   "mallopt"};
static const char *const allocator_prefixes[] = {"mi_", "_mi_", "je_", "tc_"};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static bool in_list(const char *name, const char *const *list, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(name, list[i]) == 0) return true;
  return false;
}

static bool has_prefix(const char *name, const char *prefix) {
  return strncmp(name, prefix, strlen(prefix)) == 0;
}

static bool is_allocator_name(const char *name) {
  if (in_list(name, allocator_names, COUNT(allocator_names))) return true;
  for (size_t i = 0; i < COUNT(allocator_prefixes); i++)
    if (has_prefix(name, allocator_prefixes[i])) return true;
  return false;
}

static const char *const kind_names[] = {[KIND_STATIC] = "static",
                                         [KIND_SHARED] = "shared",
                                         [KIND_OVERRIDE] = "override",
                                         [KIND_MODULE] = "module"};

const char *artifact_kind_name(artifact_kind kind) {
  return kind_names[kind];
}

bool artifact_kind_parse(const char *name, artifact_kind *out) {
  for (size_t i = 0; i < COUNT(kind_names); i++)
    if (strcmp(name, kind_names[i]) == 0) {
      *out = (artifact_kind)i;
      return true;
    }
  return false;
}

/* May this artifact define `name`? */
static bool may_define(const char *name, const shape_policy *policy) {
  switch (policy->kind) {
  case KIND_MODULE:
    return in_list(name, policy->entries, policy->entry_count);
  case KIND_OVERRIDE:
    return has_prefix(name, policy->prefix) || in_list(name, override_names, COUNT(override_names));
  default:
    return has_prefix(name, policy->prefix);
  }
}

static void check_symbols(const shape_facts *facts, const shape_policy *policy, violations *out) {
  for (size_t i = 0; i < facts->defined_count; i++) {
    const shape_symbol *symbol = &facts->defined[i];
    /* A static library's hidden globals still land in whatever links it, so
     * every global it defines counts; elsewhere what the loader sees counts. */
    if (!symbol->is_exported && policy->kind != KIND_STATIC) continue;
    if (!may_define(symbol->name, policy))
      violation_add(out, "exported-symbol", "%s is defined and not allowed for a %s artifact",
                    symbol->name, artifact_kind_name(policy->kind));
    if (symbol->is_tls && symbol->is_exported)
      violation_add(out, "exported-tls", "TLS variable %s can be interposed and shared",
                    symbol->name);
    if (policy->kind != KIND_OVERRIDE && is_allocator_name(symbol->name))
      violation_add(out, "allocator-name", "unprefixed allocator name %s", symbol->name);
  }
}

static void check_tls(const shape_facts *facts, const shape_policy *policy, violations *out) {
  bool static_tls = facts->static_tls_flag ||
                    (facts->tls_models & (TLS_MODEL_INITIAL_EXEC | TLS_MODEL_LOCAL_EXEC));
  if (static_tls && !policy->allow_static_tls)
    violation_add(out, "static-tls",
                  "static TLS (%s) in an artifact that may be dlopen'ed, without opt-in",
                  facts->static_tls_flag ? "DF_STATIC_TLS" : "thread-pointer offset relocations");
  for (size_t i = 0; i < facts->fixed_tp_count; i++)
    violation_add(out, "fixed-tp-offset", "code accesses the fixed thread-pointer slot %%fs:%#llx",
                  (long long)facts->fixed_tp_offsets[i]);
}

/* The relocation kinds a record's model allows. TLS descriptors (gnu2) are a
 * dialect of the global-dynamic model: a copy records the model it sets on
 * its variable, and the compiler picks the dialect. */
static unsigned tls_model_named(const char *name) {
  if (strcmp(name, "gnu2") == 0) return TLS_MODEL_GNU2;
  if (strcmp(name, "global-dynamic") == 0) return TLS_MODEL_GLOBAL_DYNAMIC | TLS_MODEL_GNU2;
  if (strcmp(name, "initial-exec") == 0) return TLS_MODEL_INITIAL_EXEC;
  return 0;
}

static void check_id_records(const shape_facts *facts, const shape_policy *policy,
                             violations *out) {
  if (facts->id_count == 0) violation_add(out, "id-missing", "no NSALLOC-ID record");
  /* Only the shared and override libraries are built to export the API. */
  bool exports = policy->kind == KIND_SHARED || policy->kind == KIND_OVERRIDE;
  const char *visibility = exports ? "default" : "hidden";
  for (size_t i = 0; i < facts->id_count; i++) {
    id_record id;
    if (!id_record_parse(facts->id_records[i], &id)) {
      violation_add(out, "id-malformed", "'%s'", facts->id_records[i]);
      continue;
    }
    if (strcmp(id.prefix, policy->prefix) != 0)
      violation_add(out, "id-prefix", "record prefix %s, expected %s", id.prefix, policy->prefix);
    if (strcmp(id.visibility, visibility) != 0)
      violation_add(out, "id-visibility", "record visibility=%s, expected %s", id.visibility,
                    visibility);
    unsigned model = tls_model_named(id.tls);
    if (!model || (facts->tls_models && !(facts->tls_models & model)))
      violation_add(out, "tls-mismatch", "record tls=%s but the code uses another model", id.tls);
  }
}

void shape_check(const shape_facts *facts, const shape_policy *policy, violations *out) {
  check_symbols(facts, policy, out);
  check_tls(facts, policy, out);
  check_id_records(facts, policy, out);
}

/* Does the symbol take part in linking or loading against other artifacts? */
static bool is_visible(const shape_facts *facts, const shape_symbol *symbol) {
  return !facts->is_shared_object || symbol->is_exported;
}

void shape_check_disjoint(const shape_facts *a, const shape_facts *b, const char *const *entries,
                          size_t entry_count, violations *out) {
  for (size_t i = 0; i < a->defined_count; i++) {
    const shape_symbol *symbol = &a->defined[i];
    if (!is_visible(a, symbol) || in_list(symbol->name, entries, entry_count)) continue;
    for (size_t j = 0; j < b->defined_count; j++)
      if (is_visible(b, &b->defined[j]) && strcmp(symbol->name, b->defined[j].name) == 0)
        violation_add(out, "shared-symbol", "both define %s", symbol->name);
  }
}
