/*
 * fuzz_audit.c - libFuzzer entry point: one input is one file as the tool
 * would read it (ELF, ar archive, zip, tarball plain or compressed, any of
 * them nested), audited, its DT_NEEDED entries resolved, and reported in
 * all three forms, so every parser path and both report writers see hostile data.
 */
#include "audit.h"
#include "findings.h"
#include "needed.h"
#include "report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  /* A copy, as audit_image takes a char * (nothing writes to it). */
  char *image = malloc(size);
  if (!image) return 0;
  memcpy(image, data, size);
  audit_set_t set = {0};
  audit_image(&set, "input", image, size, true);
  needed_resolve(&set);
  findings_t findings;
  findings_compute(&set, &findings);
  report_outcome_t outcome = {.fail_on = SEVERITY_MEDIUM};
  FILE *sink = fopen("/dev/null", "w");
  if (sink) {
    report_text(sink, &set, &findings, &outcome);
    report_json(sink, &set, &findings, &outcome);
    report_sarif(sink, &set, &findings, &outcome);
    fclose(sink);
  }
  findings_free(&findings);
  audit_set_free(&set);
  free(image);
  return 0;
}
