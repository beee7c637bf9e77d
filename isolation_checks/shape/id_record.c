/*
 * id_record.c - parsing the NSALLOC-ID record's space-separated key=value fields.
 */
#include "id_record.h"

#include <string.h>

/* Copies the value of " key=" (or the leading "key=") in text into out. */
static bool field(const char *text, const char *key, char *out, size_t capacity) {
  size_t key_length = strlen(key);
  for (const char *at = text; (at = strstr(at, key)); at += key_length) {
    if ((at != text && at[-1] != ' ') || at[key_length] != '=') continue;
    const char *value = at + key_length + 1;
    size_t length = strcspn(value, " ");
    if (length == 0 || length >= capacity) return false;
    memcpy(out, value, length);
    out[length] = '\0';
    return true;
  }
  return false;
}

bool id_record_parse(const char *text, id_record *out) {
  return strncmp(text, "NSALLOC-ID:1 ", 13) == 0 &&
         field(text, "prefix", out->prefix, sizeof out->prefix) &&
         field(text, "version", out->version, sizeof out->version) &&
         field(text, "visibility", out->visibility, sizeof out->visibility) &&
         field(text, "tls", out->tls, sizeof out->tls);
}
