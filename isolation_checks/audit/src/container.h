/*
 * container.h - walking the ELF files inside static archives and zips.
 *
 * libarchive reads both formats: ar(1) archives in their GNU and BSD variants
 * (.a) and zip files (Python wheels, Lua .rock files, eggs). Members that are
 * not ELF (Python sources, the archive symbol table, metadata) are skipped.
 */
#ifndef AUDIT_CONTAINER_H
#define AUDIT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum container_format { CONTAINER_NONE, CONTAINER_AR, CONTAINER_ZIP } container_format_t;

/* Recognises a container by its magic bytes. */
container_format_t container_format_of(const void *image, size_t size);

/* Members larger than this are reported as errors rather than read. */
#define CONTAINER_MEMBER_MAX ((size_t)1 << 30)

/* Called once per ELF member with a private, writable copy of its bytes
 * (valid during the call only). */
typedef void (*container_member_fn)(void *ctx, const char *member, char *image, size_t size);
/* Called for a member that could not be read; the walk goes on. */
typedef void (*container_error_fn)(void *ctx, const char *member, const char *message);

/* Walks image[0..size). Returns NULL, or an error message (caller frees)
 * when the container itself is unreadable; members reached before that have
 * been visited. */
char *container_each_elf_member(const void *image, size_t size, container_member_fn on_member,
                                container_error_fn on_error, void *ctx);

#endif
