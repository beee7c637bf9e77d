/* nsalloc_id.c - parsing the nsalloc identification record (see nsalloc_id.h). */
#include "nsalloc_id.h"

#include "util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX_MAX_CHARS 64

/* If *cursor starts with key, returns the value up to the next space or end of
 * record (its length in *len) and moves *cursor past it and one space. */
static const char *take_field(const char **cursor, const char *end, const char *key, size_t *len) {
  size_t key_len = strlen(key);
  if ((size_t)(end - *cursor) < key_len || memcmp(*cursor, key, key_len) != 0) return NULL;
  const char *value = *cursor + key_len;
  const char *stop = memchr(value, ' ', (size_t)(end - value));
  if (!stop) stop = end;
  *len = (size_t)(stop - value);
  *cursor = stop < end ? stop + 1 : end;
  return value;
}

static bool is_prefix(const char *s, size_t len) {
  if (len == 0 || len > PREFIX_MAX_CHARS || isdigit((unsigned char)s[0])) return false;
  for (size_t i = 0; i < len; i++) {
    if (!isalnum((unsigned char)s[i]) && s[i] != '_') return false;
  }
  return true;
}

/* x.y.z, each part one or more digits. */
static bool is_version(const char *s, size_t len) {
  int parts = 0;
  size_t digits = 0;
  for (size_t i = 0; i < len; i++) {
    if (isdigit((unsigned char)s[i])) {
      digits++;
    } else if (s[i] == '.' && digits > 0) {
      parts++;
      digits = 0;
    } else {
      return false;
    }
  }
  return digits > 0 && parts == 2;
}

static bool equals(const char *s, size_t len, const char *word) {
  return strlen(word) == len && memcmp(s, word, len) == 0;
}

void nsalloc_id_parse(const char *text, size_t available, nsalloc_id_t *out) {
  memset(out, 0, sizeof *out);
  size_t len =
      strnlen(text, available < NSALLOC_ID_MAX_CHARS + 1 ? available : NSALLOC_ID_MAX_CHARS + 1);
  bool too_long = len > NSALLOC_ID_MAX_CHARS;
  if (too_long) len = NSALLOC_ID_MAX_CHARS;
  out->text = xstrndup(text, len);
  for (char *c = out->text; *c; c++) {
    if (!isprint((unsigned char)*c)) *c = '?'; /* reports print it verbatim */
  }
  if (too_long) return;

  const char *cursor = text + strlen(NSALLOC_ID_MAGIC), *end = text + len;
  size_t prefix_len, version_len, visibility_len, tls_len;
  const char *prefix = take_field(&cursor, end, "prefix=", &prefix_len);
  const char *version = prefix ? take_field(&cursor, end, "version=", &version_len) : NULL;
  const char *visibility =
      version ? take_field(&cursor, end, "visibility=", &visibility_len) : NULL;
  const char *tls = visibility ? take_field(&cursor, end, "tls=", &tls_len) : NULL;
  if (!tls || cursor != end) return;
  if (!is_prefix(prefix, prefix_len) || !is_version(version, version_len)) return;
  bool hidden = equals(visibility, visibility_len, "hidden");
  if (!hidden && !equals(visibility, visibility_len, "default")) return;
  if (!equals(tls, tls_len, "gnu2") && !equals(tls, tls_len, "initial-exec") &&
      !equals(tls, tls_len, "global-dynamic"))
    return;

  out->valid = true;
  out->prefix = xstrndup(prefix, prefix_len);
  out->version = xstrndup(version, version_len);
  out->hidden = hidden;
  out->tls = xstrndup(tls, tls_len);
}

void nsalloc_id_free(nsalloc_id_t *id) {
  free(id->text);
  free(id->prefix);
  free(id->version);
  free(id->tls);
  memset(id, 0, sizeof *id);
}
