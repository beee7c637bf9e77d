/* container.c - ELF and container members of archives, through libarchive. */
#include "container.h"

#include "elf_scan.h"
#include "macho_scan.h"
#include "pe_scan.h"
#include "utf8.h"
#include "util.h"

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
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
/* Data is asked for in pieces no larger than this, so the budget is charged
 * as a member inflates: libarchive fills the whole request before it checks
 * anything (a bad CRC shows only at the end). */
#define READ_PIECE ((size_t)1 << 20)

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

/* One container being walked: its budget (shared with the containers around
 * it) and what it may still inflate to. */
typedef struct walk {
  struct archive *archive;
  container_budget_t *budget;
  uint64_t inflated;      /* charged to this container */
  uint64_t ratio_allowed; /* max_ratio times its size, plus the slack */
  bool charge_skipped;    /* compressed: passing a member over inflates it */
} walk_t;

/* Charges bytes to the walk; on exceeding a limit returns the error (caller
 * frees) and marks the budget exhausted. */
static char *charge(walk_t *walk, uint64_t bytes) {
  container_budget_t *budget = walk->budget;
  budget->inflated += bytes;
  walk->inflated += bytes;
  char *error = NULL;
  if (budget->inflated > budget->max_inflated)
    error =
        xasprintf("the input inflates past %" PRIu64 " bytes (--max-inflated): not audited further",
                  budget->max_inflated);
  else if (walk->inflated > walk->ratio_allowed)
    error = xasprintf("its container inflates past %" PRIu64
                      " times its size (--max-ratio), a compression bomb: not audited further",
                      budget->max_ratio);
  if (error) budget->exhausted = true;
  return error;
}

/* Reads the current entry into a buffer. Its first DECIDE_AFTER bytes decide
 * whether it is wanted; only then is the rest read, the buffer growing as
 * data arrives (a declared size is only a hint: zip entries may not declare
 * one), up to CONTAINER_MEMBER_MAX (a larger member that is not wanted is
 * passed over, not refused). Returns NULL with *error set on failure;
 * an unwanted member returns a buffer that is not wanted(). */
static char *read_entry(walk_t *walk, struct archive_entry *entry, size_t *size, char **error) {
  int64_t declared = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : -1;
  /* A compressed tarball inflates every byte of a member to pass it over:
   * charged before any is, so a bomb is refused without inflating it. */
  bool charged = walk->charge_skipped && declared >= 0;
  if (charged && (*error = charge(walk, (uint64_t)declared))) return NULL;
  size_t cap = DECIDE_AFTER;
  char *buffer = xmalloc(cap);
  size_t used = 0;
  for (;;) {
    if (used == cap) {
      if (used == DECIDE_AFTER && !wanted(buffer, used)) break;
      if (cap >= CONTAINER_MEMBER_MAX || declared > (int64_t)CONTAINER_MEMBER_MAX) {
        free(buffer);
        *error = xasprintf("member larger than %zu bytes", CONTAINER_MEMBER_MAX);
        return NULL;
      }
      size_t grown = declared > (int64_t)cap ? (size_t)declared : cap * 2;
      cap = grown > CONTAINER_MEMBER_MAX ? CONTAINER_MEMBER_MAX : grown;
      buffer = xrealloc(buffer, cap);
    }
    size_t want = cap - used < READ_PIECE ? cap - used : READ_PIECE;
    la_ssize_t n = archive_read_data(walk->archive, buffer + used, want);
    if (n < 0) {
      free(buffer);
      *error = archive_message(walk->archive, "unreadable member");
      return NULL;
    }
    if (n == 0) break;
    used += (size_t)n;
    if (!charged && (*error = charge(walk, (uint64_t)n))) {
      free(buffer);
      return NULL;
    }
  }
  *size = used;
  return buffer;
}

/* s with every byte that is not part of a well-formed UTF-8 sequence
 * written as "\xNN". Caller frees. */
static char *utf8_or_escaped(const char *s) {
  size_t len = strlen(s);
  char *out = xmalloc(4 * len + 1), *o = out;
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  while (p < end) {
    uint32_t code_point;
    size_t n = utf8_decode(p, end, &code_point);
    if (n) {
      memcpy(o, p, n);
      o += n;
      p += n;
    } else {
      o += sprintf(o, "\\x%02x", *p++);
    }
  }
  *o = '\0';
  return out;
}

/* The member's name as stored, in UTF-8 (container.h), or NULL when
 * libarchive cannot give it. Caller frees. */
static char *member_name(struct archive_entry *entry) {
  const char *name = archive_entry_pathname_utf8(entry);
  if (!name) name = archive_entry_pathname(entry);
  return name ? utf8_or_escaped(name) : NULL;
}

/* Configures archive for the format image starts with. */
static void support_formats(struct archive *archive, container_format_t format) {
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
    /* Zip names not flagged UTF-8 are CP437 (APPNOTE.TXT, appendix D). */
    archive_read_set_options(archive, "zip:hdrcharset=CP437");
  }
}

static char *walk_members(walk_t *walk, const void *image, size_t size, container_format_t format,
                          container_member_fn on_member, container_error_fn on_error, void *ctx) {
  struct archive *archive = walk->archive;
  if (archive_read_open_memory(archive, image, size) != ARCHIVE_OK) {
    /* An empty compressed stream (Debian gzips empty man pages) holds no
     * member, though libarchive finds no format in it. */
    if (format == CONTAINER_COMPRESSED && archive_filter_count(archive) > 1 &&
        archive_filter_bytes(archive, 0) == 0)
      return NULL;
    return archive_message(archive, "unreadable container");
  }
  bool is_ar = format == CONTAINER_AR;
  int64_t ar_end = 8; /* where the members read so far end: after "!<arch>\n" */
  while (!walk->budget->exhausted) {
    struct archive_entry *entry;
    int status = archive_read_next_header(archive, &entry);
    if (status == ARCHIVE_EOF) {
      /* libarchive ends an ar archive quietly when fewer bytes than a member
       * header remain; anything there but padding is a truncated member. */
      if (is_ar && (uint64_t)ar_end + 1 < size)
        return xasprintf("truncated or corrupt: %zu bytes after the last member",
                         size - (size_t)ar_end);
      return NULL;
    }
    if (status == ARCHIVE_FATAL) return archive_message(archive, "corrupt container");
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
    char *name = member_name(entry);
    if (!name) {
      on_error(ctx, "?", "a member name libarchive cannot decode: not audited");
      continue;
    }
    size_t member_size;
    char *member_error = NULL;
    char *member = read_entry(walk, entry, &member_size, &member_error);
    if (!member) {
      on_error(ctx, name, member_error);
      free(member_error);
    } else if (member_size > 0 && wanted(member, member_size)) {
      on_member(ctx, name, member, member_size);
    }
    free(member);
    free(name);
    /* A compressed file that holds no tar is one stream: passing it over
     * would inflate the rest of it for nothing. */
    if (archive_format(archive) == ARCHIVE_FORMAT_RAW) return NULL;
  }
  return NULL;
}

char *container_each_member(const void *image, size_t size, container_budget_t *budget,
                            container_member_fn on_member, container_error_fn on_error, void *ctx) {
  if (!budget->max_inflated) budget->max_inflated = CONTAINER_MAX_INFLATED_DEFAULT;
  if (!budget->max_ratio) budget->max_ratio = CONTAINER_MAX_RATIO_DEFAULT;
  /* libarchive converts names to the current locale's character set, from
   * the moment a name option is set: UTF-8 for the walk, whatever the
   * process's locale (C, usually). */
  locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  locale_t previous = utf8 ? uselocale(utf8) : (locale_t)0;
  struct archive *archive = archive_read_new();
  char *error;
  if (archive) {
    container_format_t format = container_format_of(image, size);
    support_formats(archive, format);
    walk_t walk = {.archive = archive,
                   .budget = budget,
                   .ratio_allowed = (uint64_t)size > UINT64_MAX / budget->max_ratio
                                        ? UINT64_MAX
                                        : budget->max_ratio * size + CONTAINER_RATIO_SLACK,
                   .charge_skipped = format == CONTAINER_COMPRESSED};
    error = walk_members(&walk, image, size, format, on_member, on_error, ctx);
    archive_read_free(archive);
  } else {
    error = xstrdup("libarchive unusable");
  }
  if (utf8) {
    uselocale(previous);
    freelocale(utf8);
  }
  return error;
}
