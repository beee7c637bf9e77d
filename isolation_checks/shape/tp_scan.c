/*
 * tp_scan.c - x86-64 `%fs:<disp32>` accesses.
 *
 * Such an access is encoded as the FS segment prefix 0x64, an optional REX
 * prefix, a one-byte opcode, a ModRM byte with mod=00 rm=100 (a SIB byte
 * follows) and the SIB byte 0x25 (no base, no index), then the 32-bit offset.
 * Register-based accesses (%fs:(%rax), what the initial-exec model emits) are
 * not constant slots and do not match.
 */
#include "tp_scan.h"

#include <stdbool.h>
#include <string.h>

static bool is_abi_slot(int64_t offset) {
  return offset == 0 || offset == 0x28 || offset == 0x30;
}

static void add_offset(int64_t offset, int64_t *offsets, size_t max, size_t *count) {
  for (size_t i = 0; i < *count; i++)
    if (offsets[i] == offset) return;
  if (*count < max) offsets[(*count)++] = offset;
}

void tp_scan_x86_64(const uint8_t *code, size_t size, int64_t *offsets, size_t max, size_t *count) {
  for (size_t i = 0; i + 8 <= size; i++) {
    if (code[i] != 0x64) continue;
    size_t at = i + 1;
    if ((code[at] & 0xf0) == 0x40) at++; /* REX */
    if (at + 7 > size) break;
    uint8_t modrm = code[at + 1], sib = code[at + 2];
    if ((modrm & 0xc7) != 0x04 || sib != 0x25) continue;
    int32_t displacement;
    memcpy(&displacement, code + at + 3, sizeof displacement);
    if (!is_abi_slot(displacement)) add_offset(displacement, offsets, max, count);
  }
}
