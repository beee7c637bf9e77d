/*
 * iso-shape - checks the shape of built artifacts against nsalloc's isolation
 * rules (see rules.h) and prints one summary line per artifact.
 *
 *   iso-shape [--expect-violation RULE] ARTIFACT...
 *   iso-shape --disjoint [--expect-violation RULE] [--entry NAME]... FILE FILE...
 *
 * ARTIFACT is [--kind static|shared|override|module] [--prefix P] [--entry NAME]...
 * [--allow-static-tls] FILE; options apply to the next FILE only (kind
 * defaults to module, prefix to nsalloc_). --disjoint checks every pair of
 * FILEs for common exported names instead.
 *
 * Exit status 0 when no rule is violated; with --expect-violation (a negative
 * control), 0 exactly when RULE was violated.
 */
#include "elf_facts.h"
#include "report.h"
#include "rules.h"
#include "violations.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRIES 16
#define MAX_FILES   64

typedef struct options {
  const char *expected_rule;
  bool disjoint;
  shape_policy policy; /* for the next file */
  const char *entries[MAX_ENTRIES];
  const char *files[MAX_FILES];
  size_t file_count;
} options;

static void usage(void) {
  fprintf(stderr, "usage: iso-shape [--disjoint] [--expect-violation RULE] [--kind K] "
                  "[--prefix P] [--entry NAME]... [--allow-static-tls] FILE...\n");
  exit(2);
}

static void reset_policy(options *o) {
  o->policy = (shape_policy){.kind = KIND_MODULE, .prefix = "nsalloc_", .entries = o->entries};
}

static void read_facts(const char *path, shape_facts *facts) {
  const char *error = shape_facts_read(path, facts);
  if (error) {
    fprintf(stderr, "iso-shape: %s: %s\n", path, error);
    exit(2);
  }
}

static void check_artifact(const char *path, const shape_policy *policy, violations *v) {
  shape_facts facts;
  read_facts(path, &facts);
  size_t before = v->count;
  shape_check(&facts, policy, v);
  report_artifact(path, &facts, policy, v->count - before);
  violations_print(v);
  shape_facts_free(&facts);
}

static void check_disjoint(const options *o, violations *v) {
  shape_facts facts[MAX_FILES];
  for (size_t i = 0; i < o->file_count; i++)
    read_facts(o->files[i], &facts[i]);
  for (size_t i = 0; i < o->file_count; i++)
    for (size_t j = i + 1; j < o->file_count; j++) {
      size_t before = v->count;
      shape_check_disjoint(&facts[i], &facts[j], o->entries, o->policy.entry_count, v);
      printf("%s vs %s: %s\n", o->files[i], o->files[j],
             v->count == before ? "disjoint" : "COMMON EXPORTED NAMES");
      violations_print(v);
    }
  for (size_t i = 0; i < o->file_count; i++)
    shape_facts_free(&facts[i]);
}

static const char *next_argument(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) usage();
  return argv[++*i];
}

int main(int argc, char **argv) {
  options o = {0};
  violations v = {0};
  reset_policy(&o);
  bool headed = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--expect-violation") == 0) {
      o.expected_rule = next_argument(argc, argv, &i);
    } else if (strcmp(arg, "--disjoint") == 0) {
      o.disjoint = true;
    } else if (strcmp(arg, "--kind") == 0) {
      if (!artifact_kind_parse(next_argument(argc, argv, &i), &o.policy.kind)) usage();
    } else if (strcmp(arg, "--prefix") == 0) {
      o.policy.prefix = next_argument(argc, argv, &i);
    } else if (strcmp(arg, "--entry") == 0) {
      if (o.policy.entry_count == MAX_ENTRIES) usage();
      o.entries[o.policy.entry_count++] = next_argument(argc, argv, &i);
    } else if (strcmp(arg, "--allow-static-tls") == 0) {
      o.policy.allow_static_tls = true;
    } else if (arg[0] == '-') {
      usage();
    } else if (o.disjoint) {
      if (o.file_count == MAX_FILES) usage();
      o.files[o.file_count++] = arg;
    } else {
      if (!headed) report_header();
      headed = true;
      check_artifact(arg, &o.policy, &v);
      reset_policy(&o);
    }
  }
  if (o.disjoint) {
    if (o.file_count < 2) usage();
    check_disjoint(&o, &v);
  } else if (!headed) {
    usage();
  }
  printf("isolation shape: %zu violation(s)\n", v.count);
  if (!o.expected_rule) return v.count == 0 ? 0 : 1;
  bool detected = violation_seen(&v, o.expected_rule);
  printf("negative control: [%s] %s\n", o.expected_rule,
         detected ? "detected, as expected" : "NOT detected: the check has stopped working");
  return detected ? 0 : 1;
}
