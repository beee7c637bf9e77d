/*
 * audit.h - turning files and in-memory images into artifacts of a set.
 */
#ifndef AUDIT_AUDIT_H
#define AUDIT_AUDIT_H

#include "artifact.h"

#include <stdbool.h>
#include <stddef.h>

/* Audits one image named path: an ELF file becomes one artifact, a static
 * archive one artifact for all its ELF members, a zip one artifact per ELF
 * member. named is true when the user gave this path (anything unreadable is
 * then an error) and false when a directory walk found it (files holding no
 * ELF are then skipped and counted). */
void audit_image(audit_set_t *set, const char *path, char *image, size_t size, bool named);

#endif
