/* evidence.c - what symbols and bytes say about an artifact (see evidence.h). */
#include "evidence.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t len = strlen(s), suffix_len = strlen(suffix);
  return len >= suffix_len && strcmp(s + len - suffix_len, suffix) == 0;
}

/* Entry points by which a language runtime loads an extension module. */
static const char *host_vm_of_entry(const char *name) {
  static const struct {
    const char *prefix, *vm;
  } entries[] = {
      {"nif_init", "Erlang NIF"},
      {"PyInit_", "Python extension"},
      {"luaopen_", "Lua module"},
      {"Init_", "Ruby extension"},
      {"JNI_OnLoad", "JVM native library"},
      {"napi_register_module_v", "Node.js addon"},
      {"node_register_module_v", "Node.js addon"},
  };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    if (starts_with(name, entries[i].prefix)) return entries[i].vm;
  }
  return NULL;
}

static void note_host_vm_entry(artifact_t *artifact, const char *name) {
  const char *vm = host_vm_of_entry(name);
  if (!vm) return;
  /* Keep the smallest name so the report does not depend on table order. */
  if (artifact->host_vm_entry && strcmp(name, artifact->host_vm_entry) >= 0) return;
  free(artifact->host_vm_entry);
  artifact->host_vm_entry = xstrdup(name);
  artifact->host_vm = vm;
}

void evidence_symbol(artifact_t *artifact, const char *name, bool defined, bool exported, bool tls,
                     bool entry_point) {
  family_t family = family_of_symbol(name);
  if (family != FAMILY_COUNT) {
    if (defined) sample_add(&artifact->families[family].defined, name);
    if (exported) {
      sample_add(&artifact->families[family].exported, name);
      nameset_add(&artifact->allocator_exports, name);
    }
  }
  if (exported && standard_allocator_symbol(name)) {
    sample_add(&artifact->families[FAMILY_INTERPOSER].exported, name);
    nameset_add(&artifact->allocator_exports, name);
  }
  if (exported && tls) {
    sample_add(&artifact->exported_tls, name);
    /* A family's own thread-locals are allocator symbols (added above). */
    if (family == FAMILY_COUNT) nameset_add(&artifact->tls_exports, name);
  }
  if (ends_with(name, "malloc")) {
    if (defined) nameset_add(&artifact->malloc_defined, name);
    if (exported) nameset_add(&artifact->malloc_exported, name);
  }
  if (entry_point) note_host_vm_entry(artifact, name);
}

static void add_nsalloc_copy(artifact_t *artifact, const char *text, size_t available) {
  nsalloc_id_t id;
  nsalloc_id_parse(text, available, &id);
  for (size_t i = 0; i < artifact->ncopies; i++) {
    if (strcmp(artifact->copies[i].id.text, id.text) == 0) {
      nsalloc_id_free(&id); /* the same copy seen again, e.g. in two members */
      return;
    }
  }
  if (artifact->ncopies == NSALLOC_COPIES_MAX) {
    nsalloc_id_free(&id);
    return;
  }
  artifact->copies[artifact->ncopies++].id = id;
}

/* Looks for every family's byte strings and for nsalloc identification
 * records in the bytes of one section (or of a whole section-less file). */
void evidence_bytes(artifact_t *artifact, const char *bytes, size_t size) {
  for (int f = 0; f < FAMILY_COUNT; f++) {
    size_t count = family_string_count((family_t)f);
    for (size_t i = 0; i < count; i++) {
      uint32_t bit = UINT32_C(1) << i;
      const char *needle = family_string((family_t)f, i);
      if (!(artifact->families[f].strings & bit) && memmem(bytes, size, needle, strlen(needle)))
        artifact->families[f].strings |= bit;
    }
  }
  size_t magic_len = strlen(NSALLOC_ID_MAGIC);
  const char *cursor = bytes, *end = bytes + size;
  const char *hit;
  while ((hit = memmem(cursor, (size_t)(end - cursor), NSALLOC_ID_MAGIC, magic_len))) {
    add_nsalloc_copy(artifact, hit, (size_t)(end - hit));
    cursor = hit + magic_len;
  }
}
