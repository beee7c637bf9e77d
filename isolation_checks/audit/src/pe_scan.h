/*
 * pe_scan.h - reading one PE/COFF image (Windows DLLs, Python .pyd files,
 * executables) into an artifact, from Linux.
 */
#ifndef AUDIT_PE_SCAN_H
#define AUDIT_PE_SCAN_H

#include "artifact.h"

#include <stdbool.h>
#include <stddef.h>

/* True when the image has a DOS header whose e_lfanew points at "PE\0\0". */
bool pe_image_is_pe(const void *image, size_t size);

/* True for a debug-only image (objcopy --only-keep-debug): PE headers whose
 * code is not in the file. No process loads one. */
bool pe_image_is_debug_only(const void *image, size_t size);

/* Adds the evidence of the PE image to artifact. Returns NULL, or an error
 * message the caller frees when the image is truncated or corrupt. */
char *pe_scan(artifact_t *artifact, const char *image, size_t size);

#endif
