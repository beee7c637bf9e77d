/*
 * report_sarif.c - the report as SARIF 2.1.0, for code-scanning UIs.
 *
 * One run: a rule per finding kind present (its risk as the description, its
 * fix as the help), a result per finding (high is "error", medium "warning",
 * low "note") located at the file holding each artifact it names, with the
 * full artifact path (zip or archive member included) as a logical
 * location. A finding a baseline accepts carries an external suppression;
 * input errors are tool execution notifications, and make the invocation
 * unsuccessful.
 */
#include "report.h"

#include "json.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const char *sarif_level(severity_t severity) {
  switch (severity) {
  case SEVERITY_LOW:
    return "note";
  case SEVERITY_MEDIUM:
    return "warning";
  case SEVERITY_HIGH:
    break;
  }
  return "error";
}

/* The file part of an artifact path as a relative URI reference: what comes
 * before the '!' of a container member or the '(' of an archive member,
 * with every byte other than unreserved characters and '/' percent-encoded. */
static void json_file_uri(FILE *out, const char *path) {
  size_t len = strcspn(path, "!(");
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)path[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        strchr("-._~/", c))
      fputc(c, out);
    else
      fprintf(out, "%%%02X", c);
  }
  fputc('"', out);
}

static bool first_of_kind(const findings_t *findings, size_t i) {
  for (size_t k = 0; k < i; k++) {
    if (strcmp(findings->items[k].kind, findings->items[i].kind) == 0) return false;
  }
  return true;
}

/* Rules are listed in the order their kinds first appear: a finding's rule
 * index is the number of kinds that appear before its kind first does. */
static size_t rule_index(const findings_t *findings, size_t i) {
  size_t first = 0;
  while (strcmp(findings->items[first].kind, findings->items[i].kind) != 0)
    first++;
  size_t index = 0;
  for (size_t k = 0; k < first; k++)
    index += first_of_kind(findings, k);
  return index;
}

static void sarif_rules(FILE *out, const findings_t *findings) {
  fputs("\"rules\": [", out);
  const char *between = "";
  for (size_t i = 0; i < findings->len; i++) {
    if (!first_of_kind(findings, i)) continue;
    const finding_t *finding = &findings->items[i];
    fprintf(out, "%s\n        {\"id\": ", between);
    json_string(out, finding->kind);
    fputs(", \"shortDescription\": {\"text\": ", out);
    json_string(out, finding->risk);
    fputs("}, \"help\": {\"text\": ", out);
    json_string(out, finding->fix);
    fputs("}}", out);
    between = ",";
  }
  fputs("]", out);
}

static void sarif_result(FILE *out, const audit_set_t *set, const findings_t *findings, size_t i,
                         const report_outcome_t *outcome) {
  const finding_t *finding = &findings->items[i];
  fputs("\n    {\"ruleId\": ", out);
  json_string(out, finding->kind);
  fprintf(out, ", \"ruleIndex\": %zu, \"level\": \"%s\", \"message\": {\"text\": ",
          rule_index(findings, i), sarif_level(finding->severity));
  json_string(out, finding->message);
  fputs("}, \"locations\": [", out);
  for (size_t a = 0; a < finding->nartifacts; a++) {
    const char *path = set->artifacts[finding->artifacts[a]]->path;
    fputs(a ? ", " : "", out);
    fputs("{\"physicalLocation\": {\"artifactLocation\": {\"uri\": ", out);
    json_file_uri(out, path);
    fputs("}}, \"logicalLocations\": [{\"fullyQualifiedName\": ", out);
    json_string(out, path);
    fputs(", \"kind\": \"module\"}]}", out);
  }
  fputs("], \"properties\": {\"fix\": ", out);
  json_string(out, finding->fix);
  fputs(", \"family\": ", out);
  json_string_or_null(out, finding->family);
  fputs("}", out);
  if (finding->accepted_by) {
    char *justification =
        xasprintf("accepted by %s line %zu", outcome->baseline_path, finding->accepted_by);
    fputs(", \"suppressions\": [{\"kind\": \"external\", \"justification\": ", out);
    json_string(out, justification);
    fputs("}]", out);
    free(justification);
  }
  fputs("}", out);
}

void report_sarif(FILE *out, const audit_set_t *set, const findings_t *findings,
                  const report_outcome_t *outcome) {
  fputs("{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n"
        "  \"version\": \"2.1.0\",\n  \"runs\": [{\n"
        "    \"tool\": {\"driver\": {\"name\": \"nsalloc-audit\", \"version\": \"" AUDIT_VERSION
        "\",\n      ",
        out);
  sarif_rules(out, findings);
  fputs("}},\n  \"results\": [", out);
  for (size_t i = 0; i < findings->len; i++) {
    sarif_result(out, set, findings, i, outcome);
    if (i + 1 < findings->len) fputc(',', out);
  }
  fprintf(out,
          "],\n  \"invocations\": [{\"executionSuccessful\": %s, \"exitCode\": %d, "
          "\"toolExecutionNotifications\": [",
          set->nerrors ? "false" : "true", outcome->exit_status);
  for (size_t i = 0; i < set->nerrors; i++) {
    fputs(i ? ", " : "", out);
    fputs("{\"level\": \"error\", \"message\": {\"text\": ", out);
    json_string(out, set->errors[i].message);
    fputs("}, \"locations\": [{\"physicalLocation\": {\"artifactLocation\": {\"uri\": ", out);
    json_file_uri(out, set->errors[i].path);
    fputs("}}, \"logicalLocations\": [{\"fullyQualifiedName\": ", out);
    json_string(out, set->errors[i].path);
    fputs("}]}]}", out);
  }
  fputs("]}]\n  }]\n}\n", out);
}
