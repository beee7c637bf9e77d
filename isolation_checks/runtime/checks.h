/*
 * checks.h - the runtime isolation checks. Each records what it finds with
 * ISO_EXPECT (verdict.h) and prints a short summary.
 */
#ifndef ISO_CHECKS_H
#define ISO_CHECKS_H

#include "copies.h"

#include <stdint.h>

typedef struct iso_options {
  size_t threads;
  uint64_t operations; /* stress and incident: total operations */
  const char *preload; /* override: the override library to LD_PRELOAD */
} iso_options;

/* Each copy's functions live in its own module, and its blocks are its own. */
void check_identity(iso_copies *copies);
/* Threads hammer every copy at once; every byte verified; stats balance. */
void check_stress(iso_copies *copies, const iso_options *options);
/* Blocks of one copy given to another are caught by its policy, each mode. */
void check_handoff(iso_copies *copies);
/* The incident: a 3-key vector grown 48 -> 96 bytes by the other copy. */
void check_incident(iso_copies *copies, const iso_options *options);
/* dlclose one copy (the first path) while threads use the others. */
void check_unload(char **paths, size_t count, const iso_options *options);
/* The override library preloaded in a child, copies loaded beside it. */
void check_override(char **paths, size_t count, const iso_options *options, char **argv);

#endif
