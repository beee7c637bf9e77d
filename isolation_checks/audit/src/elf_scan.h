/*
 * elf_scan.h - reading one ELF file into an artifact (elf_loader.h reads the
 * loader's view; elf_read.h the structures, by hand, bounds-checked).
 */
#ifndef AUDIT_ELF_SCAN_H
#define AUDIT_ELF_SCAN_H

#include "artifact.h"

#include <stddef.h>

/* True when the image starts with the ELF magic. */
bool elf_image_is_elf(const void *image, size_t size);

/* True for a separate debug file (objcopy --only-keep-debug): ELF headers
 * whose code and data are not in the file. No process loads one. */
bool elf_image_is_debug_only(const void *image, size_t size);

/* Adds the evidence in the ELF file image[0..size) to artifact; an archive's
 * members are scanned into one artifact one after the other. Returns NULL,
 * or an error message the caller frees when the file cannot be read as ELF.
 * Evidence read before such an error stays in the artifact: it is still
 * true of the bytes that were read. */
char *elf_scan(artifact_t *artifact, const char *image, size_t size);

#endif
