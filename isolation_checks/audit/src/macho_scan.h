/*
 * macho_scan.h - reading Mach-O images (macOS dylibs, bundles, objects,
 * executables), universal binaries included, into artifacts, from Linux.
 */
#ifndef AUDIT_MACHO_SCAN_H
#define AUDIT_MACHO_SCAN_H

#include "artifact.h"

#include <stddef.h>

typedef enum macho_kind { MACHO_NONE, MACHO_SINGLE, MACHO_FAT } macho_kind_t;

/* A single-architecture Mach-O image (32- or 64-bit, either byte order), a
 * universal binary, or neither. */
macho_kind_t macho_kind_of(const void *image, size_t size);

/* Called per architecture of a universal binary with its CPU name ("arm64")
 * and its bytes (valid during the call). */
typedef void (*macho_slice_fn)(void *ctx, const char *cpu, const char *image, size_t size);
/* Walks a universal binary's slices. Returns NULL, or an error message the
 * caller frees when its header or a slice lies outside the image. */
char *macho_each_slice(const void *image, size_t size, macho_slice_fn on_slice, void *ctx);

/* Adds the evidence of a single-architecture image to artifact. Returns
 * NULL, or an error message the caller frees. */
char *macho_scan(artifact_t *artifact, const char *image, size_t size);

#endif
