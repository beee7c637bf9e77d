/*
 * fixed_slot.c - NEGATIVE CONTROL (x86-64 only, never installed): per-thread
 * state at a hard-coded thread-pointer slot, the way mimalloc keeps its heap
 * at %gs:0x360 on macOS. Every copy reading this slot shares it; the shape
 * check must flag the access.
 */
#include "iso_module.h"

#include <stdint.h>

ISO_MODULE_EXPORT uintptr_t iso_fixed_slot_read(void);
uintptr_t iso_fixed_slot_read(void) {
  uintptr_t value;
  __asm__ volatile("mov %%fs:0x360, %0" : "=r"(value));
  return value;
}
