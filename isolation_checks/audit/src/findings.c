/* findings.c - judging the set (see findings.h). */
#include "findings.h"

#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMES_SHOWN 3 /* symbol names quoted in one finding message */

const char *severity_name(severity_t severity) {
  switch (severity) {
  case SEVERITY_LOW:
    return "low";
  case SEVERITY_MEDIUM:
    return "medium";
  case SEVERITY_HIGH:
    break;
  }
  return "high";
}

bool severity_parse(const char *text, severity_t *out) {
  for (int s = SEVERITY_LOW; s <= SEVERITY_HIGH; s++) {
    if (strcmp(text, severity_name((severity_t)s)) == 0) {
      *out = (severity_t)s;
      return true;
    }
  }
  return false;
}

static const char *const risk_duplicate_family =
    "each copy keeps its own heap metadata: a block one copy allocates and another frees or "
    "reallocates corrupts memory silently";
static const char *const risk_duplicate_export =
    "the dynamic linker binds every caller to whichever artifact loads first, so one copy "
    "receives blocks the other allocated";
static const char *const risk_exported_tls =
    "another module defining the same name binds to this thread-local variable, so per-module "
    "state such as an allocator's current-heap slot is shared across copies";
static const char *const risk_static_tls_module =
    "dlopen of this module needs surplus static TLS and fails ('cannot allocate memory in "
    "static TLS block') once the process has used it up";
static const char *const risk_static_tls_object =
    "any shared object this is linked into gets DF_STATIC_TLS and may fail to dlopen";
static const char *const risk_static_tls_interposer =
    "fine when loaded at startup (LD_PRELOAD or DT_NEEDED), as an interposer must be; it "
    "may fail to dlopen";
static const char *const risk_vm_exports =
    "the host VM loads many extension modules into one namespace: every module that calls "
    "these names can be bound to this module's allocator";
static const char *const risk_nsalloc_visibility =
    "a copy that exports its API is no longer private: another copy with the same prefix, or "
    "a caller of these names, binds to it";

/* What to do about each finding: concrete enough to act on without docs/audit.md. */
static const char *const fix_duplicate_family =
    "bundle this allocator in at most one module per process (link the others against that "
    "module or the system allocator), or give each module a private nsalloc copy "
    "(nsalloc_add_private_copy with a distinct PREFIX)";
static const char *const fix_duplicate_export =
    "hide the allocator in every module that bundles it: link with -Wl,--exclude-libs,ALL, a "
    "version script exporting only the module's entry point, or -fvisibility=hidden; only a "
    "deliberate interposer may export the standard names";
static const char *const fix_vm_exports =
    "link the allocator hidden (-Wl,--exclude-libs,ALL, or a version script with only the "
    "entry point global) so the module exports nothing but its entry point, or use a private "
    "nsalloc copy";
static const char *const fix_nsalloc_visibility =
    "build the copy with nsalloc_add_private_copy(<target> PREFIX <prefix>), which compiles it "
    "with hidden visibility, and do not re-export its API";
static const char *const fix_static_tls =
    "compile every object of it with -ftls-model=global-dynamic or TLS descriptors "
    "(-mtls-dialect=gnu2 on x86-64, the default on AArch64); drop initial-exec attributes";
static const char *const fix_static_tls_interposer =
    "load it only at startup (LD_PRELOAD or DT_NEEDED of the executable); to make it safe to "
    "dlopen, compile with -ftls-model=global-dynamic or -mtls-dialect=gnu2";
static const char *const fix_exported_tls =
    "give the thread-local variable internal linkage (static) or hidden visibility "
    "(__attribute__((visibility(\"hidden\"))) or -fvisibility=hidden)";

/* Shared objects can share a process with one another and with one
 * executable. */
static bool could_share_a_process(size_t modules, size_t executables) {
  return modules >= 2 || (modules >= 1 && executables >= 1);
}

static bool takes_part(const artifact_t *artifact) {
  return !artifact->system_runtime && artifact->kind != KIND_OTHER_ELF;
}

/* Only executables and shared objects are loaded; objects and static
 * archives are link inputs, whose contents end up in whatever module links
 * them, so they are never paired with the modules of a process. */
static bool is_loaded(const artifact_t *artifact) {
  return takes_part(artifact) &&
         (artifact->kind == KIND_EXECUTABLE || artifact->kind == KIND_SHARED_OBJECT);
}

static finding_t *add_finding(findings_t *out, severity_t severity, const char *kind,
                              const char *risk, const char *fix, char *message) {
  xgrow((void **)&out->items, &out->cap, out->len, sizeof out->items[0]);
  finding_t *finding = &out->items[out->len++];
  *finding = (finding_t){.severity = severity,
                         .kind = kind,
                         .risk = risk,
                         .fix = fix,
                         .message = message,
                         .discovery = out->len - 1};
  return finding;
}

static void finding_add_artifact(finding_t *finding, size_t index) {
  finding->artifacts = xrealloc(finding->artifacts, (finding->nartifacts + 1) * sizeof(size_t));
  finding->artifacts[finding->nartifacts++] = index;
}

/* "a.so, b.so and c.so" from the listed artifacts. */
static char *join_artifact_paths(const audit_set_t *set, const size_t *indexes, size_t count) {
  char *text = xstrdup("");
  for (size_t i = 0; i < count; i++) {
    const char *separator = i == 0 ? "" : i + 1 == count ? " and " : ", ";
    char *longer = xasprintf("%s%s%s", text, separator, set->artifacts[indexes[i]]->path);
    free(text);
    text = longer;
  }
  return text;
}

/* Artifacts built for different object formats, machines, classes or byte
 * orders are never loaded into one process, so set-level patterns are judged per ABI. */
static uint64_t abi_of(const artifact_t *artifact) {
  return (uint64_t)artifact->format << 40 | (uint64_t)artifact->machine << 8 |
         (uint64_t)artifact->elf_class << 1 | (uint64_t)artifact->big_endian;
}

static void find_duplicate_families(const audit_set_t *set, findings_t *out) {
  size_t *holders = xcalloc(set->nartifacts, sizeof *holders);
  bool *judged = xcalloc(set->nartifacts, sizeof *judged);
  for (int f = 0; f < FAMILY_COUNT; f++) {
    /* Private nsalloc copies are built to coexist; interposers are judged by
     * the symbols they export (duplicate-export). */
    if (f == FAMILY_NSALLOC || f == FAMILY_INTERPOSER) continue;
    memset(judged, 0, set->nartifacts * sizeof *judged);
    for (size_t first = 0; first < set->nartifacts; first++) {
      const artifact_t *leader = set->artifacts[first];
      if (judged[first] || !is_loaded(leader) || !artifact_has_family(leader, (family_t)f))
        continue;
      size_t count = 0, modules = 0, executables = 0;
      for (size_t i = first; i < set->nartifacts; i++) {
        const artifact_t *artifact = set->artifacts[i];
        if (!is_loaded(artifact) || !artifact_has_family(artifact, (family_t)f) ||
            abi_of(artifact) != abi_of(leader))
          continue;
        judged[i] = true;
        holders[count++] = i;
        if (artifact->kind == KIND_EXECUTABLE)
          executables++;
        else
          modules++;
      }
      if (!could_share_a_process(modules, executables)) continue;
      char *paths = join_artifact_paths(set, holders, count);
      finding_t *finding = add_finding(
          out, SEVERITY_HIGH, "duplicate-family", risk_duplicate_family, fix_duplicate_family,
          xasprintf("%s is bundled in %zu artifacts: %s", family_name((family_t)f), count, paths));
      finding->family = family_name((family_t)f);
      free(paths);
      for (size_t i = 0; i < count; i++)
        finding_add_artifact(finding, holders[i]);
    }
  }
  free(judged);
  free(holders);
}

/* "x, y, z and 4 more": the first `shown` names of a list of `total`. */
static char *join_names(const char *const *names, size_t shown, size_t total) {
  char *text = xstrdup("");
  for (size_t k = 0; k < shown; k++) {
    char *longer = xasprintf("%s%s%s", text, k ? ", " : "", names[k]);
    free(text);
    text = longer;
  }
  if (total > shown) {
    char *longer = xasprintf("%s and %zu more", text, total - shown);
    free(text);
    text = longer;
  }
  return text;
}

static const nameset_t *allocator_exports_of(const artifact_t *artifact) {
  return &artifact->allocator_exports;
}

static const nameset_t *tls_exports_of(const artifact_t *artifact) {
  return &artifact->tls_exports;
}

/* One exported allocator name and an artifact exporting it. */
typedef struct export_entry {
  const char *name;
  uint64_t abi;
  size_t artifact;
} export_entry_t;

static int by_name_abi_artifact(const void *a, const void *b) {
  const export_entry_t *x = a, *y = b;
  int order = strcmp(x->name, y->name);
  if (order) return order;
  if (x->abi != y->abi) return (x->abi > y->abi) - (x->abi < y->abi);
  return (x->artifact > y->artifact) - (x->artifact < y->artifact);
}

/* Names exported by exactly the same artifacts are reported together. */
typedef struct export_group {
  size_t *exporters; /* ascending artifact indexes */
  size_t nexporters;
  const char **names; /* ascending */
  size_t nnames, names_cap;
} export_group_t;

static export_group_t *group_for(export_group_t **groups, size_t *ngroups, size_t *cap,
                                 const export_entry_t *run, size_t run_len) {
  for (size_t g = 0; g < *ngroups; g++) {
    export_group_t *group = &(*groups)[g];
    if (group->nexporters != run_len) continue;
    size_t k = 0;
    while (k < run_len && group->exporters[k] == run[k].artifact)
      k++;
    if (k == run_len) return group;
  }
  xgrow((void **)groups, cap, *ngroups, sizeof **groups);
  export_group_t *group = &(*groups)[(*ngroups)++];
  *group = (export_group_t){.exporters = xmalloc(run_len * sizeof(size_t)), .nexporters = run_len};
  for (size_t k = 0; k < run_len; k++)
    group->exporters[k] = run[k].artifact;
  return group;
}

/* The family an exported allocator name belongs to: its signature family,
 * "interposer" for the standard names, NULL for an nsalloc copy's entry. */
static const char *export_family(const char *name) {
  family_t family = family_of_symbol(name);
  if (family != FAMILY_COUNT) return family_name(family);
  return standard_allocator_symbol(name) ? family_name(FAMILY_INTERPOSER) : NULL;
}

/* The family every name of a group belongs to, or NULL when they differ. */
static const char *group_family(const export_group_t *group) {
  const char *family = export_family(group->names[0]);
  for (size_t k = 1; k < group->nnames && family; k++) {
    const char *other = export_family(group->names[k]);
    if (!other || strcmp(other, family) != 0) family = NULL;
  }
  return family;
}

/* Names two loaded artifacts of one ABI both export. what says which names
 * these are in the message: allocator symbols (names_of = allocator_exports,
 * with a family) or thread-local variables that are not allocator state
 * (tls_exports, no family). */
static void find_duplicate_exports(const audit_set_t *set, findings_t *out,
                                   const nameset_t *(*names_of)(const artifact_t *),
                                   const char *what, const char *risk, const char *fix) {
  export_entry_t *entries = NULL;
  size_t nentries = 0, entries_cap = 0;
  for (size_t i = 0; i < set->nartifacts; i++) {
    const artifact_t *artifact = set->artifacts[i];
    if (!is_loaded(artifact)) continue;
    const nameset_t *names = names_of(artifact);
    for (size_t k = 0; k < names->len; k++) {
      xgrow((void **)&entries, &entries_cap, nentries, sizeof entries[0]);
      entries[nentries++] = (export_entry_t){names->items[k], abi_of(artifact), i};
    }
  }
  if (nentries) qsort(entries, nentries, sizeof entries[0], by_name_abi_artifact); /* NULL if 0 */

  export_group_t *groups = NULL;
  size_t ngroups = 0, groups_cap = 0;
  for (size_t start = 0, end; start < nentries; start = end) {
    size_t modules = 0, executables = 0;
    for (end = start; end < nentries && entries[end].abi == entries[start].abi &&
                      strcmp(entries[end].name, entries[start].name) == 0;
         end++) {
      if (set->artifacts[entries[end].artifact]->kind == KIND_EXECUTABLE)
        executables++;
      else
        modules++;
    }
    if (!could_share_a_process(modules, executables)) continue;
    export_group_t *group = group_for(&groups, &ngroups, &groups_cap, &entries[start], end - start);
    xgrow((void **)&group->names, &group->names_cap, group->nnames, sizeof group->names[0]);
    group->names[group->nnames++] = entries[start].name;
  }

  for (size_t g = 0; g < ngroups; g++) {
    export_group_t *group = &groups[g];
    char *paths = join_artifact_paths(set, group->exporters, group->nexporters);
    char *names = join_names(
        group->names, group->nnames < NAMES_SHOWN ? group->nnames : NAMES_SHOWN, group->nnames);
    finding_t *finding = add_finding(out, SEVERITY_HIGH, "duplicate-export", risk, fix,
                                     xasprintf("%zu %s%s exported by %s: %s", group->nnames, what,
                                               group->nnames == 1 ? "" : "s", paths, names));
    if (names_of == allocator_exports_of) finding->family = group_family(group);
    free(paths);
    free(names);
    for (size_t k = 0; k < group->nexporters; k++)
      finding_add_artifact(finding, group->exporters[k]);
    free(group->exporters);
    free(group->names);
  }
  free(groups);
  free(entries);
}

static char *sample_text(const sample_t *sample) {
  return join_names((const char *const *)sample->names, sample->kept, sample->count);
}

static void find_exported_tls(const audit_set_t *set, findings_t *out) {
  for (size_t i = 0; i < set->nartifacts; i++) {
    const artifact_t *artifact = set->artifacts[i];
    if (!takes_part(artifact) || artifact->exported_tls.count == 0) continue;
    char *names = sample_text(&artifact->exported_tls);
    finding_t *finding =
        add_finding(out, SEVERITY_MEDIUM, "exported-tls", risk_exported_tls, fix_exported_tls,
                    xasprintf("%s exports thread-local symbol%s %s", artifact->path,
                              artifact->exported_tls.count == 1 ? "" : "s", names));
    free(names);
    finding_add_artifact(finding, i);
  }
}

static void find_static_tls(const audit_set_t *set, findings_t *out) {
  for (size_t i = 0; i < set->nartifacts; i++) {
    const artifact_t *artifact = set->artifacts[i];
    /* An executable's TLS is static by construction and always fits. */
    if (!takes_part(artifact) || !artifact->static_tls || artifact->kind == KIND_EXECUTABLE)
      continue;
    severity_t severity;
    const char *risk, *what, *fix = fix_static_tls;
    if (artifact->kind != KIND_SHARED_OBJECT) {
      severity = SEVERITY_MEDIUM, risk = risk_static_tls_object,
      what = artifact_kind_name(artifact->kind);
    } else if (artifact->host_vm) {
      severity = SEVERITY_HIGH, risk = risk_static_tls_module, what = "VM extension module";
    } else if (artifact_has_family(artifact, FAMILY_INTERPOSER)) {
      severity = SEVERITY_LOW, risk = risk_static_tls_interposer, what = "interposer";
      fix = fix_static_tls_interposer;
    } else {
      severity = SEVERITY_MEDIUM, risk = risk_static_tls_module, what = "shared object";
    }
    finding_t *finding = add_finding(
        out, severity, "static-tls", risk, fix,
        xasprintf("%s %s uses static TLS (%s)", what, artifact->path, artifact->static_tls));
    finding_add_artifact(finding, i);
  }
}

static void find_vm_module_exports(const audit_set_t *set, findings_t *out) {
  for (size_t i = 0; i < set->nartifacts; i++) {
    const artifact_t *artifact = set->artifacts[i];
    if (!takes_part(artifact) || !artifact->host_vm) continue;
    for (int f = 0; f < FAMILY_COUNT; f++) {
      /* nsalloc's API is prefixed; its exports are nsalloc-default-visibility. */
      const sample_t *exported = &artifact->families[f].exported;
      if (f == FAMILY_NSALLOC || exported->count == 0) continue;
      char *names = sample_text(exported);
      finding_t *finding = add_finding(
          out, SEVERITY_HIGH, "vm-module-exports-allocator", risk_vm_exports, fix_vm_exports,
          xasprintf("%s %s exports unprefixed %s symbols: %s", artifact->host_vm, artifact->path,
                    f == FAMILY_INTERPOSER ? "standard allocator" : family_name((family_t)f),
                    names));
      finding->family = family_name((family_t)f);
      free(names);
      finding_add_artifact(finding, i);
    }
  }
}

static void find_nsalloc_visibility(const audit_set_t *set, findings_t *out) {
  for (size_t i = 0; i < set->nartifacts; i++) {
    const artifact_t *artifact = set->artifacts[i];
    if (!takes_part(artifact)) continue;
    for (size_t c = 0; c < artifact->ncopies; c++) {
      const nsalloc_copy_t *copy = &artifact->copies[c];
      if (!copy->id.valid || copy->distribution) continue;
      if (copy->id.hidden && !copy->exports_malloc) continue;
      const char *why = !copy->id.hidden && copy->exports_malloc
                            ? "built with visibility=default and exports %smalloc"
                        : copy->exports_malloc ? "exports %smalloc"
                                               : "built with visibility=default";
      char *reason = xasprintf(why, copy->id.prefix);
      finding_t *finding = add_finding(
          out, SEVERITY_HIGH, "nsalloc-default-visibility", risk_nsalloc_visibility,
          fix_nsalloc_visibility,
          xasprintf("nsalloc copy prefix=%s in %s is %s", copy->id.prefix, artifact->path, reason));
      finding->family = family_name(FAMILY_NSALLOC);
      free(reason);
      finding_add_artifact(finding, i);
    }
  }
}

/* Most severe first; equal severities keep the order they were found in. */
static int by_severity_then_discovery(const void *a, const void *b) {
  const finding_t *x = a, *y = b;
  if (x->severity != y->severity) return (int)y->severity - (int)x->severity;
  return (x->discovery > y->discovery) - (x->discovery < y->discovery);
}

void findings_compute(const audit_set_t *set, findings_t *out) {
  memset(out, 0, sizeof *out);
  find_duplicate_families(set, out);
  find_duplicate_exports(set, out, allocator_exports_of, "allocator symbol", risk_duplicate_export,
                         fix_duplicate_export);
  find_duplicate_exports(set, out, tls_exports_of, "exported thread-local symbol",
                         risk_exported_tls, fix_exported_tls);
  find_vm_module_exports(set, out);
  find_nsalloc_visibility(set, out);
  find_static_tls(set, out);
  find_exported_tls(set, out);
  if (out->len) qsort(out->items, out->len, sizeof out->items[0], by_severity_then_discovery);
}

void findings_free(findings_t *findings) {
  for (size_t i = 0; i < findings->len; i++) {
    free(findings->items[i].message);
    free(findings->items[i].artifacts);
  }
  free(findings->items);
  memset(findings, 0, sizeof *findings);
}
