/* utf8.c - strict UTF-8 decoding (see utf8.h). */
#include "utf8.h"

size_t utf8_decode(const unsigned char *p, const unsigned char *end, uint32_t *code_point) {
  size_t len = *p < 0x80                  ? 1
               : *p >= 0xc2 && *p <= 0xdf ? 2
               : (*p & 0xf0) == 0xe0      ? 3
               : *p >= 0xf0 && *p <= 0xf4 ? 4
                                          : 0;
  if (len == 0 || (size_t)(end - p) < len) return 0;
  uint32_t value = len == 1 ? *p : *p & (0x7f >> len);
  for (size_t k = 1; k < len; k++) {
    if ((p[k] & 0xc0) != 0x80) return 0;
    value = value << 6 | (p[k] & 0x3f);
  }
  /* The shortest form only, and no UTF-16 surrogates. */
  static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < least[len] || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 0;
  *code_point = value;
  return len;
}
