/*
 * container.h - walking the ELF files inside archives.
 *
 * libarchive reads every format: ar(1) archives in their GNU and BSD variants
 * (.a), zip files (Python wheels and eggs, LuaRocks .rock and .src.rock),
 * tar files, plain or compressed with gzip, xz, bzip2 or zstd (Erlang/Elixir
 * releases, Python sdists; only libarchive's built-in decoders are enabled,
 * never an external program). A compressed file that holds no tar is read as
 * its one decompressed stream. Members that are neither ELF nor a container
 * (Python sources, the archive symbol table, metadata) are skipped.
 */
#ifndef AUDIT_CONTAINER_H
#define AUDIT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum container_format {
  CONTAINER_NONE,
  CONTAINER_AR,
  CONTAINER_ZIP,
  CONTAINER_TAR,       /* "ustar" at offset 257 */
  CONTAINER_COMPRESSED /* gzip, xz, bzip2 or zstd: a tar inside, or one stream */
} container_format_t;

/* Recognises a container by its magic bytes. */
container_format_t container_format_of(const void *image, size_t size);

/* Members larger than this are reported as errors rather than read. */
#define CONTAINER_MEMBER_MAX ((size_t)1 << 30)
/* Containers inside containers (a zip in a wheel, a tarball in a tarball)
 * are opened this many levels deep; a deeper one is an error. A member being
 * walked is held in memory, so at most one member per level and the one
 * refused past the last (CONTAINER_DEPTH_MAX + 1 members of at most
 * CONTAINER_MEMBER_MAX bytes) are held at once. */
#define CONTAINER_DEPTH_MAX 3

/* Called once per member that is ELF or itself a container, with a private,
 * writable copy of its bytes (valid during the call only). */
typedef void (*container_member_fn)(void *ctx, const char *member, char *image, size_t size);
/* Called for a member that could not be read; the walk goes on. */
typedef void (*container_error_fn)(void *ctx, const char *member, const char *message);

/* Walks image[0..size). Returns NULL, or an error message (caller frees)
 * when the container itself is unreadable; members reached before that have
 * been visited. */
char *container_each_member(const void *image, size_t size, container_member_fn on_member,
                            container_error_fn on_error, void *ctx);

#endif
