/*
 * fuzz_format.c - libFuzzer entry point for one format's reader, built once
 * per format with FUZZ_FORMAT set to one of the FUZZ_* values below, so each
 * reader gets the whole time budget on inputs of its own kind (inputs of
 * another kind are returned at once; the seed corpus holds every kind).
 * The object readers are called directly; the containers (ar, zip, tar plain
 * or compressed) go through audit_image, which walks their members and reads
 * any ELF, Mach-O or PE file inside.
 */
#include "audit.h"
#include "container.h"
#include "elf_scan.h"
#include "macho_scan.h"
#include "pe_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ELF   1
#define FUZZ_MACHO 2
#define FUZZ_PE    3
#define FUZZ_AR    4
#define FUZZ_ZIP   5
#define FUZZ_TAR   6

#ifndef FUZZ_FORMAT
#error "define FUZZ_FORMAT as one of FUZZ_ELF ... FUZZ_TAR"
#endif

#if FUZZ_FORMAT <= FUZZ_PE
/* Scans one object file into a fresh artifact, as audit.c does. */
static void scan_object(char *image, size_t size) {
  artifact_t *artifact = artifact_new("input");
#if FUZZ_FORMAT == FUZZ_ELF
  char *error = elf_scan(artifact, image, size);
#elif FUZZ_FORMAT == FUZZ_MACHO
  char *error = macho_scan(artifact, image, size);
#else
  char *error = pe_scan(artifact, image, size);
#endif
  if (!error) artifact_finish(artifact);
  free(error);
  artifact_free(artifact);
}
#endif

#if FUZZ_FORMAT == FUZZ_MACHO
/* One architecture of a universal binary. The Mach-O reader never writes
 * to its image, so the const cast is safe. */
static void on_slice(void *ctx, const char *cpu, const char *image, size_t size) {
  (void)ctx, (void)cpu;
  if (macho_kind_of(image, size) == MACHO_SINGLE) scan_object((char *)image, size);
}
#endif

static bool wanted(const char *image, size_t size) {
  container_format_t container = container_format_of(image, size);
  switch (FUZZ_FORMAT) {
  case FUZZ_ELF:
    return elf_image_is_elf(image, size);
  case FUZZ_MACHO:
    return macho_kind_of(image, size) != MACHO_NONE;
  case FUZZ_PE:
    return pe_image_is_pe(image, size);
  case FUZZ_AR:
    return container == CONTAINER_AR;
  case FUZZ_ZIP:
    return container == CONTAINER_ZIP;
  default:
    return container == CONTAINER_TAR || container == CONTAINER_COMPRESSED;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A copy, as audit_image takes a char * (the readers never write to it). */
  char *image = malloc(size ? size : 1);
  if (!image) return 0;
  memcpy(image, data, size);
  if (!wanted(image, size)) {
    free(image);
    return -1; /* not this target's format: kept out of the corpus */
  }
#if FUZZ_FORMAT == FUZZ_ELF
  elf_image_is_debug_only(image, size);
  scan_object(image, size);
#elif FUZZ_FORMAT == FUZZ_MACHO
  if (macho_kind_of(image, size) == MACHO_SINGLE)
    scan_object(image, size);
  else
    free(macho_each_slice(image, size, on_slice, NULL));
#elif FUZZ_FORMAT == FUZZ_PE
  pe_image_is_debug_only(image, size);
  scan_object(image, size);
#else
  audit_set_t set = {0};
  audit_image(&set, "input", image, size, true);
  audit_set_free(&set);
#endif
  free(image);
  return 0;
}
