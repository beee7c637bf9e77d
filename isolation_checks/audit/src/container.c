/* container.c - ELF and container members of archives, through libarchive. */
#include "container.h"

#include "elf_scan.h"
#include "macho_scan.h"
#include "pe_scan.h"
#include "util.h"

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *archive_message(struct archive *archive, const char *fallback) {
  const char *message = archive_error_string(archive);
  return xstrdup(message ? message : fallback);
}

/* The bytes a container format is recognised by. */
#define TAR_MAGIC_OFFSET 257
#define FORMAT_PEEK      (TAR_MAGIC_OFFSET + 5)
/* A member is judged once this much of it is read: a PE header may start
 * hundreds of bytes in (e_lfanew). */
#define DECIDE_AFTER 4096

container_format_t container_format_of(const void *image, size_t size) {
  const unsigned char *bytes = image;
  if (size >= 8 && memcmp(bytes, "!<arch>\n", 8) == 0) return CONTAINER_AR;
  /* A zip starts with a local file header, or an end-of-central-directory
   * record when empty. */
  if (size >= 4 && (memcmp(bytes, "PK\3\4", 4) == 0 || memcmp(bytes, "PK\5\6", 4) == 0))
    return CONTAINER_ZIP;
  if ((size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) || /* gzip */
      (size >= 6 && memcmp(bytes,
                           "\xfd"
                           "7zXZ\0",
                           6) == 0) || /* xz */
      (size >= 4 && memcmp(bytes, "BZh", 3) == 0 && bytes[3] >= '1' && bytes[3] <= '9') ||
      (size >= 4 && memcmp(bytes, "\x28\xb5\x2f\xfd", 4) == 0)) /* zstd */
    return CONTAINER_COMPRESSED;
  if (size >= FORMAT_PEEK && memcmp(bytes + TAR_MAGIC_OFFSET, "ustar", 5) == 0)
    return CONTAINER_TAR;
  return CONTAINER_NONE;
}

/* Worth reading whole: an ELF, PE or Mach-O file, or a container to open. */
static bool wanted(const void *bytes, size_t size) {
  return elf_image_is_elf(bytes, size) || pe_image_is_pe(bytes, size) ||
         macho_kind_of(bytes, size) != MACHO_NONE ||
         container_format_of(bytes, size) != CONTAINER_NONE;
}

/* Reads the current entry into a buffer. The entry's declared size is only a
 * hint (zip entries may not declare one), so the buffer grows as data
 * arrives, up to CONTAINER_MEMBER_MAX. Returns NULL with *error set on
 * failure; a short entry that cannot be ELF returns an empty buffer. */
static char *read_entry(struct archive *archive, struct archive_entry *entry, size_t *size,
                        char **error) {
  size_t cap = archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0
                   ? (size_t)archive_entry_size(entry)
                   : 4096;
  if (cap > CONTAINER_MEMBER_MAX) {
    *error = xasprintf("member larger than %zu bytes", CONTAINER_MEMBER_MAX);
    return NULL;
  }
  char *buffer = xmalloc(cap);
  size_t used = 0;
  for (;;) {
    if (used == cap) {
      if (cap >= CONTAINER_MEMBER_MAX) {
        free(buffer);
        *error = xasprintf("member larger than %zu bytes", CONTAINER_MEMBER_MAX);
        return NULL;
      }
      cap = cap * 2 > CONTAINER_MEMBER_MAX ? CONTAINER_MEMBER_MAX : cap * 2;
      buffer = xrealloc(buffer, cap);
    }
    la_ssize_t n = archive_read_data(archive, buffer + used, cap - used);
    if (n < 0) {
      free(buffer);
      *error = archive_message(archive, "unreadable member");
      return NULL;
    }
    if (n == 0) break;
    used += (size_t)n;
    /* Decide early that a member is neither ELF nor a container, without
     * reading all of it. */
    if (used >= DECIDE_AFTER && !wanted(buffer, used)) break;
  }
  *size = used;
  return buffer;
}

char *container_each_member(const void *image, size_t size, container_member_fn on_member,
                            container_error_fn on_error, void *ctx) {
  struct archive *archive = archive_read_new();
  if (!archive) return xstrdup("libarchive unusable");
  container_format_t format = container_format_of(image, size);
  if (format == CONTAINER_COMPRESSED) {
    /* Built-in decoders only: libarchive would run external programs for
     * other filters. raw bids last, so a tar inside wins. */
    archive_read_support_filter_gzip(archive);
    archive_read_support_filter_xz(archive);
    archive_read_support_filter_bzip2(archive);
    archive_read_support_filter_zstd(archive);
    archive_read_support_format_tar(archive);
    archive_read_support_format_raw(archive);
  } else {
    archive_read_support_format_ar(archive);
    archive_read_support_format_zip(archive);
    archive_read_support_format_tar(archive);
  }
  char *error = NULL;
  if (archive_read_open_memory(archive, image, size) != ARCHIVE_OK) {
    error = archive_message(archive, "unreadable container");
    goto out;
  }
  bool is_ar = format == CONTAINER_AR;
  int64_t ar_end = 8; /* where the members read so far end: after "!<arch>\n" */
  for (;;) {
    struct archive_entry *entry;
    int status = archive_read_next_header(archive, &entry);
    if (status == ARCHIVE_EOF) {
      /* libarchive ends an ar archive quietly when fewer bytes than a member
       * header remain; anything there but padding is a truncated member. */
      if (is_ar && (uint64_t)ar_end + 1 < size)
        error = xasprintf("truncated or corrupt: %zu bytes after the last member",
                          size - (size_t)ar_end);
      break;
    }
    if (status == ARCHIVE_FATAL) {
      error = archive_message(archive, "corrupt container");
      break;
    }
    /* ARCHIVE_WARN and ARCHIVE_RETRY still describe an entry worth reading. */
    /* Deterministic ar archives (ar D) store mode 644 with no file type bits,
     * so only entries that are certainly not files are passed over. */
    unsigned filetype = archive_entry_filetype(entry);
    if (filetype != 0 && filetype != AE_IFREG) continue;
    if (is_ar) {
      /* A 60-byte header, then the data padded to an even length. */
      int64_t data = archive_entry_size(entry);
      ar_end = archive_read_header_position(archive) + 60 + data + (data & 1);
    }
    const char *name = archive_entry_pathname(entry);
    if (!name) name = "?";
    size_t member_size;
    char *member_error = NULL;
    char *member = read_entry(archive, entry, &member_size, &member_error);
    if (!member) {
      on_error(ctx, name, member_error);
      free(member_error);
      continue;
    }
    if (member_size > 0 && wanted(member, member_size)) on_member(ctx, name, member, member_size);
    free(member);
  }
out:
  archive_read_free(archive);
  return error;
}
