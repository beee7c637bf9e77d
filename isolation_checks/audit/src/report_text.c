/* report_text.c - the human-readable report. */
#include "report.h"

#include "utf8.h"
#include "util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *report_tls_model(const artifact_t *artifact) {
  if (artifact->static_tls) return "static";
  return artifact->uses_tls ? "dynamic" : "none";
}

void report_text_put(FILE *out, const char *text) {
  const unsigned char *c = (const unsigned char *)text, *end = c + strlen(text);
  while (c < end) {
    uint32_t code_point;
    size_t n = utf8_decode(c, end, &code_point);
    /* C0 controls, DEL and the C1 controls, which some terminals obey too,
     * and bytes that are not UTF-8. */
    bool escape = n == 0 || code_point < 0x20 || (code_point >= 0x7f && code_point <= 0x9f);
    for (size_t k = 0; k < (n ? n : 1); k++) {
      if (escape)
        fprintf(out, "\\x%02x", c[k]);
      else
        fputc(c[k], out);
    }
    c += n ? n : 1;
  }
}

static const char *plural(size_t n) {
  return n == 1 ? "" : "s";
}

/* The names a sample kept, and how many more it counted. */
static void print_names(FILE *out, const sample_t *sample) {
  for (size_t k = 0; k < sample->kept; k++) {
    if (k) fputs(", ", out);
    report_text_put(out, sample->names[k]);
  }
  if (sample->count > sample->kept) fprintf(out, " and %zu more", sample->count - sample->kept);
}

static void print_sample(FILE *out, const char *verb, const sample_t *sample) {
  fprintf(out, "%s %zu symbol%s: ", verb, sample->count, plural(sample->count));
  print_names(out, sample);
}

static void print_family_evidence(FILE *out, const artifact_t *artifact, family_t family) {
  const family_evidence_t *evidence = &artifact->families[family];
  fprintf(out, "    %s: ", family_name(family));
  const char *separator = "";
  if (evidence->strings) {
    fputs("strings", out);
    const char *between = " ";
    for (size_t i = 0; i < family_string_count(family); i++) {
      if (!(evidence->strings & (UINT32_C(1) << i))) continue;
      fprintf(out, "%s\"%s\"", between, family_string(family, i));
      between = ", ";
    }
    separator = "; ";
  }
  if (evidence->defined.count) {
    fputs(separator, out);
    print_sample(out, "defines", &evidence->defined);
    separator = "; ";
  }
  if (evidence->exported.count) {
    fputs(separator, out);
    print_sample(out, "exports", &evidence->exported);
  }
  fputc('\n', out);
}

static void print_nsalloc_copy(FILE *out, const nsalloc_copy_t *copy) {
  if (!copy->id.valid) {
    fputs("    nsalloc: malformed identification record \"", out);
    report_text_put(out, copy->id.text);
    fputs("\"\n", out);
    return;
  }
  fputs("    nsalloc: prefix=", out);
  report_text_put(out, copy->id.prefix);
  fputs(" version=", out);
  report_text_put(out, copy->id.version);
  fprintf(out, " visibility=%s tls=", copy->id.hidden ? "hidden" : "default");
  report_text_put(out, copy->id.tls);
  fputs("; ", out);
  report_text_put(out, copy->id.prefix);
  fprintf(out, "malloc %s, %s%s\n", copy->defines_malloc ? "defined" : "not in .symtab",
          copy->exports_malloc ? "exported" : "not exported",
          copy->distribution ? " (the copy's own library)" : "");
}

static void print_family_list(FILE *out, uint32_t families) {
  const char *between = "";
  for (int f = 0; f < FAMILY_COUNT; f++) {
    if (!(families & (UINT32_C(1) << f))) continue;
    fprintf(out, "%s%s", between, family_name((family_t)f));
    between = ", ";
  }
}

/* What the artifact loads through DT_NEEDED (needed.h). */
static void print_dependencies(FILE *out, const artifact_t *artifact) {
  if (artifact->ndeps) {
    uint32_t all = 0;
    for (size_t i = 0; i < artifact->ndeps; i++)
      all |= artifact->deps[i].families;
    fputs("  allocators via DT_NEEDED: ", out);
    print_family_list(out, all);
    fputc('\n', out);
  }
  for (size_t i = 0; i < artifact->ndeps; i++) {
    fputs("    ", out);
    report_text_put(out, artifact->deps[i].name);
    fputs(" => ", out);
    report_text_put(out, artifact->deps[i].path);
    fputs(": ", out);
    print_family_list(out, artifact->deps[i].families);
    fputc('\n', out);
  }
  const sample_t *unresolved = &artifact->unresolved_needed;
  if (unresolved->count) {
    fprintf(out, "  DT_NEEDED not found: %zu librar%s (neither audited nor on this machine): ",
            unresolved->count, unresolved->count == 1 ? "y" : "ies");
    print_names(out, unresolved);
    fputc('\n', out);
  }
}

static void print_artifact(FILE *out, const artifact_t *artifact) {
  char *description = artifact_describe(artifact);
  report_text_put(out, artifact->path);
  fprintf(out, "\n  type: %s\n", description);
  free(description);
  if (artifact->soname) {
    fputs("  soname: ", out);
    report_text_put(out, artifact->soname);
    fputc('\n', out);
  }
  if (artifact->needed_by) {
    fputs("  loaded through DT_NEEDED of ", out);
    report_text_put(out, artifact->needed_by);
    fputs(" (found on disk)\n", out);
  }
  if (artifact->host_vm) {
    fprintf(out, "  host VM: %s (entry point ", artifact->host_vm);
    report_text_put(out, artifact->host_vm_entry);
    fputs(")\n", out);
  }
  if (artifact->system_runtime)
    fputs("  role: system C/C++ runtime (not counted in set-level findings)\n", out);
  else if (artifact->kind == KIND_ARCHIVE || artifact->kind == KIND_RELOCATABLE)
    fputs("  role: link input (bundled into what links it; never paired with loaded modules)\n",
          out);
  fprintf(out, "  tls: %s", report_tls_model(artifact));
  if (artifact->static_tls) fprintf(out, " (%s)", artifact->static_tls);
  fputs("\n  allocators:", out);
  size_t families = 0;
  for (int f = 0; f < FAMILY_COUNT; f++) {
    if (artifact_has_family(artifact, (family_t)f))
      fprintf(out, "%s %s", families++ ? "," : "", family_name((family_t)f));
  }
  fputs(families ? "\n" : " none\n", out);
  print_dependencies(out, artifact);
  for (size_t c = 0; c < artifact->ncopies; c++)
    print_nsalloc_copy(out, &artifact->copies[c]);
  for (int f = 0; f < FAMILY_COUNT; f++) {
    if (f != FAMILY_NSALLOC && artifact_has_family(artifact, (family_t)f))
      print_family_evidence(out, artifact, (family_t)f);
  }
  if (artifact->allocator_exports.overflowed)
    fprintf(out,
            "  note: over %d allocator exports; duplicate-export compares the first %d found\n",
            NAMESET_LIMIT, NAMESET_LIMIT);
  if (artifact->exported_tls.count) {
    fputs("  exported TLS: ", out);
    print_sample(out, "exports", &artifact->exported_tls);
    fputc('\n', out);
  }
  fputc('\n', out);
}

void report_text_error(FILE *out, const input_error_t *error) {
  report_text_put(out, error->path);
  fputs(": ", out);
  report_text_put(out, error->message);
  fputc('\n', out);
}

static void print_passed_over(FILE *out, const char *what, const sample_t *sample) {
  if (!sample->count) return;
  fprintf(out, "  %zu %s%s: ", sample->count, what, plural(sample->count));
  print_names(out, sample);
  fputc('\n', out);
}

/* Entries that accepted nothing: the finding was fixed (delete the line) or
 * the line no longer matches what the audit reports. */
static void print_baseline_use(FILE *out, const report_outcome_t *outcome) {
  const baseline_t *baseline = outcome->baseline;
  size_t unused = 0;
  for (size_t e = 0; e < baseline->len; e++)
    unused += baseline->entries[e].accepted == 0;
  fputs("\nbaseline ", out);
  report_text_put(out, outcome->baseline_path);
  fprintf(out, ": %zu entr%s, %zu unused", baseline->len, baseline->len == 1 ? "y" : "ies", unused);
  const char *between = unused == 1 ? " (line " : " (lines ";
  for (size_t e = 0; e < baseline->len; e++) {
    if (baseline->entries[e].accepted) continue;
    fprintf(out, "%s%zu", between, baseline->entries[e].line);
    between = ", ";
  }
  fputs(unused ? "; fixed or no longer matching: delete them)\n" : "\n", out);
}

void report_text(FILE *out, const audit_set_t *set, const findings_t *findings,
                 const report_outcome_t *outcome) {
  fprintf(out, "nsalloc-audit: %zu artifact%s, %zu error%s, %zu finding%s", set->nartifacts,
          plural(set->nartifacts), set->nerrors, plural(set->nerrors), findings->len,
          plural(findings->len));
  if (set->skipped_non_elf || set->skipped_duplicate)
    fprintf(out, " (skipped %zu without ELF, %zu seen twice)", set->skipped_non_elf,
            set->skipped_duplicate);
  fputs("\n\n", out);
  for (size_t i = 0; i < set->nartifacts; i++)
    print_artifact(out, set->artifacts[i]);
  if (set->dangling_links.count || set->link_loops.count || set->directory_links.count ||
      set->special_files.count || set->excluded.count) {
    fputs("not audited:\n", out);
    print_passed_over(out, "path excluded", &set->excluded);
    print_passed_over(out, "dangling link", &set->dangling_links);
    print_passed_over(out, "symbolic link loop", &set->link_loops);
    print_passed_over(out, "link to a directory (not followed)", &set->directory_links);
    print_passed_over(out, "FIFO, socket or device", &set->special_files);
    fputc('\n', out);
  }
  if (set->nerrors) {
    fputs("errors:\n", out);
    for (size_t i = 0; i < set->nerrors; i++) {
      fputs("  ", out);
      report_text_error(out, &set->errors[i]);
    }
    fputc('\n', out);
  }
  fputs("findings:", out);
  fputs(findings->len ? "\n" : " none\n", out);
  for (size_t i = 0; i < findings->len; i++) {
    const finding_t *finding = &findings->items[i];
    fprintf(out, "  [%s] %s: ", severity_name(finding->severity), finding->kind);
    report_text_put(out, finding->message);
    fputs("\n    risk: ", out);
    report_text_put(out, finding->risk);
    fputs("\n    fix: ", out);
    report_text_put(out, finding->fix);
    fputc('\n', out);
    if (finding->accepted_by) {
      fputs("    accepted: ", out);
      report_text_put(out, outcome->baseline_path);
      fprintf(out, " line %zu\n", finding->accepted_by);
    }
  }
  if (outcome->baseline) print_baseline_use(out, outcome);
  fprintf(out, "\nexit status %d: %zu finding%s at or above %s", outcome->exit_status,
          outcome->failing_findings, plural(outcome->failing_findings),
          severity_name(outcome->fail_on));
  if (outcome->baseline)
    fprintf(out, " not in the baseline (%zu accepted)", outcome->accepted_findings);
  fprintf(out, ", %zu error%s\n", set->nerrors, plural(set->nerrors));
}
