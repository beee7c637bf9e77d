/* report_json.c - the machine-readable report (one JSON object). */
#include "report.h"

#include "json.h"
#include "util.h"

#include <stdlib.h>

static void json_sample(FILE *out, const sample_t *sample) {
  fprintf(out, "{\"count\": %zu, \"sample\": [", sample->count);
  for (size_t k = 0; k < sample->kept; k++) {
    if (k) fputs(", ", out);
    json_string(out, sample->names[k]);
  }
  fputs("]}", out);
}

static void json_family(FILE *out, const artifact_t *artifact, family_t family) {
  const family_evidence_t *evidence = &artifact->families[family];
  fputs("{\"name\": ", out);
  json_string(out, family_name(family));
  fputs(", \"strings\": [", out);
  const char *between = "";
  for (size_t i = 0; i < family_string_count(family); i++) {
    if (!(evidence->strings & (UINT32_C(1) << i))) continue;
    fputs(between, out);
    json_string(out, family_string(family, i));
    between = ", ";
  }
  fputs("], \"defined\": ", out);
  json_sample(out, &evidence->defined);
  fputs(", \"exported\": ", out);
  json_sample(out, &evidence->exported);
  fputc('}', out);
}

static void json_nsalloc_copy(FILE *out, const nsalloc_copy_t *copy) {
  fprintf(out, "{\"valid\": %s, \"record\": ", copy->id.valid ? "true" : "false");
  json_string(out, copy->id.text);
  fputs(", \"prefix\": ", out);
  json_string_or_null(out, copy->id.prefix);
  fputs(", \"version\": ", out);
  json_string_or_null(out, copy->id.version);
  fputs(", \"visibility\": ", out);
  json_string_or_null(out, !copy->id.valid ? NULL : copy->id.hidden ? "hidden" : "default");
  fputs(", \"tls\": ", out);
  json_string_or_null(out, copy->id.tls);
  fprintf(out, ", \"defines_malloc\": %s, \"exports_malloc\": %s, \"distribution\": %s}",
          copy->defines_malloc ? "true" : "false", copy->exports_malloc ? "true" : "false",
          copy->distribution ? "true" : "false");
}

static void json_artifact(FILE *out, const artifact_t *artifact) {
  fputs("    {\"path\": ", out);
  json_string(out, artifact->path);
  fputs(", \"format\": ", out);
  json_string(out, artifact->format == FORMAT_PE      ? "PE"
                   : artifact->format == FORMAT_MACHO ? "Mach-O"
                                                      : "ELF");
  fputs(", \"kind\": ", out);
  json_string(out, artifact_kind_name(artifact->kind));
  char *description = artifact_describe(artifact);
  fputs(", \"type\": ", out);
  json_string(out, description);
  free(description);
  fprintf(out, ", \"elf_class\": %d, \"big_endian\": %s, \"machine\": %u, \"elf_members\": %zu",
          artifact->elf_class, artifact->big_endian ? "true" : "false", artifact->machine,
          artifact->elf_members);
  fputs(", \"soname\": ", out);
  json_string_or_null(out, artifact->soname);
  fputs(", \"host_vm\": ", out);
  json_string_or_null(out, artifact->host_vm);
  fputs(", \"host_vm_entry\": ", out);
  json_string_or_null(out, artifact->host_vm_entry);
  fprintf(out, ", \"system_runtime\": %s", artifact->system_runtime ? "true" : "false");
  fputs(", \"tls\": {\"model\": ", out);
  json_string(out, report_tls_model(artifact));
  fputs(", \"static_tls\": ", out);
  json_string_or_null(out, artifact->static_tls);
  fputs("}, \"families\": [", out);
  const char *between = "";
  for (int f = 0; f < FAMILY_COUNT; f++) {
    if (f == FAMILY_NSALLOC || !artifact_has_family(artifact, (family_t)f)) continue;
    fputs(between, out);
    json_family(out, artifact, (family_t)f);
    between = ", ";
  }
  fputs("], \"nsalloc_copies\": [", out);
  for (size_t c = 0; c < artifact->ncopies; c++) {
    if (c) fputs(", ", out);
    json_nsalloc_copy(out, &artifact->copies[c]);
  }
  fputs("], \"exported_tls\": ", out);
  json_sample(out, &artifact->exported_tls);
  fprintf(out, ", \"allocator_exports_truncated\": %s",
          artifact->allocator_exports.overflowed ? "true" : "false");
  fputs(", \"needed_by\": ", out);
  json_string_or_null(out, artifact->needed_by);
  fputs(", \"dependencies\": [", out);
  for (size_t i = 0; i < artifact->ndeps; i++) {
    fputs(i ? ", {\"name\": " : "{\"name\": ", out);
    json_string(out, artifact->deps[i].name);
    fputs(", \"path\": ", out);
    json_string(out, artifact->deps[i].path);
    fputs(", \"families\": [", out);
    const char *between = "";
    for (int f = 0; f < FAMILY_COUNT; f++) {
      if (!(artifact->deps[i].families & (UINT32_C(1) << f))) continue;
      fputs(between, out);
      json_string(out, family_name((family_t)f));
      between = ", ";
    }
    fputs("]}", out);
  }
  fprintf(out, "], \"unresolved_needed\": %zu", artifact->unresolved_needed.count);
  fputc('}', out);
}

/* null, or the baseline's path, entry count and the lines that accepted nothing. */
static void json_baseline(FILE *out, const report_outcome_t *outcome) {
  if (!outcome->baseline) {
    fputs("null", out);
    return;
  }
  fputs("{\"path\": ", out);
  json_string(out, outcome->baseline_path);
  fprintf(out, ", \"entries\": %zu, \"unused_lines\": [", outcome->baseline->len);
  const char *between = "";
  for (size_t e = 0; e < outcome->baseline->len; e++) {
    if (outcome->baseline->entries[e].accepted) continue;
    fprintf(out, "%s%zu", between, outcome->baseline->entries[e].line);
    between = ", ";
  }
  fputs("]}", out);
}

void report_json(FILE *out, const audit_set_t *set, const findings_t *findings,
                 const report_outcome_t *outcome) {
  fprintf(out,
          "{\n  \"tool\": {\"name\": \"nsalloc-audit\", \"version\": \"%s\"},\n"
          "  \"schema_version\": %d,\n  \"artifacts\": [\n",
          AUDIT_VERSION, AUDIT_JSON_SCHEMA_VERSION);
  for (size_t i = 0; i < set->nartifacts; i++) {
    json_artifact(out, set->artifacts[i]);
    fputs(i + 1 < set->nartifacts ? ",\n" : "\n", out);
  }
  fputs("  ],\n  \"errors\": [\n", out);
  for (size_t i = 0; i < set->nerrors; i++) {
    fputs("    {\"path\": ", out);
    json_string(out, set->errors[i].path);
    fputs(", \"message\": ", out);
    json_string(out, set->errors[i].message);
    fputs(i + 1 < set->nerrors ? "},\n" : "}\n", out);
  }
  fputs("  ],\n  \"findings\": [\n", out);
  for (size_t i = 0; i < findings->len; i++) {
    const finding_t *finding = &findings->items[i];
    fputs("    {\"severity\": ", out);
    json_string(out, severity_name(finding->severity));
    fputs(", \"kind\": ", out);
    json_string(out, finding->kind);
    fputs(", \"message\": ", out);
    json_string(out, finding->message);
    fputs(", \"risk\": ", out);
    json_string(out, finding->risk);
    fputs(", \"fix\": ", out);
    json_string(out, finding->fix);
    fputs(", \"family\": ", out);
    json_string_or_null(out, finding->family);
    if (finding->accepted_by)
      fprintf(out, ", \"accepted_by_baseline_line\": %zu", finding->accepted_by);
    else
      fputs(", \"accepted_by_baseline_line\": null", out);
    fputs(", \"artifacts\": [", out);
    for (size_t a = 0; a < finding->nartifacts; a++) {
      if (a) fputs(", ", out);
      json_string(out, set->artifacts[finding->artifacts[a]]->path);
    }
    fputs(i + 1 < findings->len ? "]},\n" : "]}\n", out);
  }
  fprintf(out, "  ],\n  \"skipped\": {\"without_elf\": %zu, \"seen_twice\": %zu",
          set->skipped_non_elf, set->skipped_duplicate);
  fputs(", \"dangling_links\": ", out);
  json_sample(out, &set->dangling_links);
  fputs(", \"link_loops\": ", out);
  json_sample(out, &set->link_loops);
  fputs(", \"directory_links\": ", out);
  json_sample(out, &set->directory_links);
  fputs(", \"special_files\": ", out);
  json_sample(out, &set->special_files);
  fputs(", \"excluded\": ", out);
  json_sample(out, &set->excluded);
  fputs("},\n  \"baseline\": ", out);
  json_baseline(out, outcome);
  fprintf(out,
          ",\n  \"fail_on\": \"%s\",\n  \"failing_findings\": %zu,\n"
          "  \"accepted_findings\": %zu,\n  \"exit_status\": %d\n}\n",
          severity_name(outcome->fail_on), outcome->failing_findings, outcome->accepted_findings,
          outcome->exit_status);
}
