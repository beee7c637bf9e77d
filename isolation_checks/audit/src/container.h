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
 *
 * Member names are reported as stored, in UTF-8: a zip name flagged UTF-8
 * (general purpose bit 11) as is, any other zip name converted from CP437
 * (the zip format's default code page), a tar name from its pax `path`
 * record when there is one. Bytes that are not UTF-8 in a name (an old tar)
 * become "\xNN", so every report stays valid UTF-8.
 */
#ifndef AUDIT_CONTAINER_H
#define AUDIT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * refused past the last (CONTAINER_DEPTH_MAX + 1 members) are held at once. */
#define CONTAINER_DEPTH_MAX 3

/* The work one input file may cause, shared by every container nested in it.
 * Only members that can be an artifact (ELF, PE, Mach-O) or a container are
 * read whole; any other member is judged by its first bytes and passed over
 * (a compressed tarball still inflates it to reach the next member, and that
 * is charged too). Two limits end a bomb before it costs time or memory:
 *  - max_inflated: the bytes all containers of the input may inflate to;
 *  - max_ratio: the bytes one container may inflate to per byte of its own
 *    size (plus CONTAINER_RATIO_SLACK, so tiny archives never trip it).
 * Either one exceeded stops the walk of the whole input with an error naming
 * the member being read (exhausted is then set). Zero means the default. */
typedef struct container_budget {
  uint64_t max_inflated;
  uint64_t max_ratio;
  uint64_t inflated; /* charged so far */
  bool exhausted;
} container_budget_t;

#define CONTAINER_MAX_INFLATED_DEFAULT ((uint64_t)4 << 30)
#define CONTAINER_MAX_RATIO_DEFAULT    100
#define CONTAINER_RATIO_SLACK          ((uint64_t)1 << 20)

/* Called once per member that is ELF, PE, Mach-O or itself a container, with
 * its name as stored (UTF-8; see container_member_name) and a private,
 * writable copy of its bytes (valid during the call only). */
typedef void (*container_member_fn)(void *ctx, const char *member, char *image, size_t size);
/* Called for a member that could not be read; the walk goes on unless the
 * budget is exhausted. */
typedef void (*container_error_fn)(void *ctx, const char *member, const char *message);

/* Walks image[0..size) (a file, or a member read into memory). Returns NULL,
 * or an error message (caller frees) when the container itself is
 * unreadable; members reached before that have been visited. */
char *container_each_member(const void *image, size_t size, container_budget_t *budget,
                            container_member_fn on_member, container_error_fn on_error, void *ctx);

#endif
