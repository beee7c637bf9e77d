/*
 * report.c - printing artifact summaries.
 */
#include "report.h"

#include "id_record.h"
#include "tls_relocs.h"

#include <stdio.h>
#include <string.h>

void report_header(void) {
  printf("%-34s %-8s %-12s %-6s %-8s %-16s %s\n", "artifact", "kind", "prefix", "copies",
         "exported", "tls", "verdict");
}

void report_artifact(const char *path, const shape_facts *facts, const shape_policy *policy,
                     size_t violation_count) {
  const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  id_record id;
  const char *prefix =
      facts->id_count && id_record_parse(facts->id_records[0], &id) ? id.prefix : "-";
  char tls[64];
  char verdict[32];
  snprintf(verdict, sizeof verdict, violation_count ? "VIOLATIONS(%zu)" : "isolated",
           violation_count);
  printf("%-34s %-8s %-12s %-6zu %-8zu %-16s %s%s\n", name, artifact_kind_name(policy->kind),
         prefix, facts->id_count, shape_exported_count(facts),
         tls_models_name(facts->tls_models, tls, sizeof tls), verdict,
         policy->allow_static_tls ? " (static TLS opted in)" : "");
  fflush(stdout);
}
