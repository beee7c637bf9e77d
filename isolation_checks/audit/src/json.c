/* json.c - JSON strings (see json.h). */
#include "json.h"

void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(out, "\\%c", *c);
    else if (*c < 0x20 || *c >= 0x7f)
      fprintf(out, "\\u%04x", *c); /* keep output ASCII */
    else
      fputc(*c, out);
  }
  fputc('"', out);
}

void json_string_or_null(FILE *out, const char *s) {
  if (s)
    json_string(out, s);
  else
    fputs("null", out);
}
