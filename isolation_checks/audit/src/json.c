/* json.c - JSON strings (see json.h). */
#include "json.h"

#include "utf8.h"

#include <string.h>

void json_string(FILE *out, const char *s) {
  fputc('"', out);
  const unsigned char *c = (const unsigned char *)s, *end = c + strlen(s);
  while (c < end) {
    uint32_t code_point;
    size_t n = utf8_decode(c, end, &code_point);
    if (n == 0) {
      fprintf(out, "\\\\x%02x", *c++); /* not UTF-8: the text "\\xNN" */
      continue;
    }
    c += n;
    if (code_point == '"' || code_point == '\\')
      fprintf(out, "\\%c", (char)code_point);
    else if (code_point >= 0x20 && code_point < 0x7f)
      fputc((int)code_point, out);
    else if (code_point < 0x10000)
      fprintf(out, "\\u%04x", (unsigned)code_point); /* keep output ASCII */
    else                                             /* a UTF-16 surrogate pair */
      fprintf(out, "\\u%04x\\u%04x", (unsigned)(0xd800 + ((code_point - 0x10000) >> 10)),
              (unsigned)(0xdc00 + ((code_point - 0x10000) & 0x3ff)));
  }
  fputc('"', out);
}

void json_string_or_null(FILE *out, const char *s) {
  if (s)
    json_string(out, s);
  else
    fputs("null", out);
}
