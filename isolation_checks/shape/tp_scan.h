/*
 * tp_scan.h - finding hard-coded thread-pointer slots in machine code.
 *
 * An allocator that keeps its per-thread state at a FIXED offset from the
 * thread pointer (mimalloc's macOS slot %gs:0x360 is the incident's cause)
 * shares that slot with every other copy in the process. No relocation marks
 * such an access, so the code itself is searched.
 */
#ifndef ISO_TP_SCAN_H
#define ISO_TP_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Appends to offsets[*count] (up to `max`) each distinct constant offset of an
 * x86-64 `%fs:<disp32>` memory access in `code`, except the ABI-defined slots
 * every thread has (0: the TCB self pointer, 0x28: the stack-protector
 * canary, 0x30: the pointer guard). */
void tp_scan_x86_64(const uint8_t *code, size_t size, int64_t *offsets, size_t max, size_t *count);

#endif
