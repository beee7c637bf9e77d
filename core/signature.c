/*
 * signature.c - segment signatures: how a copy recognises a segment of ANY
 * other nsalloc copy in the process, with no state shared between copies.
 *
 * Every copy writes a signature at the base of each segment it maps (the
 * first bytes of the header) and erases it before the segment goes back.
 * Handed a pointer its own segment map does not know, a copy looks for a
 * signature where another copy's segment would start, reading through the
 * platform's fault-free read (prim_read_safely): an unmapped or unreadable
 * address answers "no" instead of faulting. So a block of another copy is
 * never taken for the C library's (the override would forward it to glibc,
 * which may silently put it in its tcache), and its owner can be named.
 *
 * A signature is hard to forge by accident: a 64-bit magic, and a check word
 * that mixes the signature's own address with its size and owner, so neither
 * ordinary data nor a copy of a real signature at another address passes.
 */
#include "internal.h"

#define SIGNATURE_MAGIC     UINT64_C(0x31434f4c4c41534e) /* "NSALLOC1" */
#define SIGNATURE_KEY       UINT64_C(0xa5c3e1f0d2b49687)
#define SIGNATURE_MIN_SHIFT 21 /* every copy's segments: NSALLOC_SEGMENT_SHIFT 21..23 */
#define SIGNATURE_MAX_SHIFT 23

static uint64_t signature_check(uint64_t base, uint64_t size, uint64_t owner) {
  return ((base ^ SIGNATURE_KEY) * UINT64_C(0x9e3779b97f4a7c15)) ^ size ^ (owner << 1);
}

static void signature_write(segment_t *seg) {
  segment_signature_t *sig = &seg->signature;
  size_t length = strlen(NSALLOC_PREFIX_STRING);
  if (length >= sizeof sig->prefix) length = sizeof sig->prefix - 1;
  memset(sig->prefix, 0, sizeof sig->prefix);
  memcpy(sig->prefix, NSALLOC_PREFIX_STRING, length);
  sig->size = seg->size;
  sig->owner = (uintptr_t)&copy;
  sig->check = signature_check((uintptr_t)seg, sig->size, sig->owner);
  sig->magic = SIGNATURE_MAGIC;
}

/* Before the memory goes back: a host memory source may hand it out again. */
static void signature_erase(segment_t *seg) {
  memset(&seg->signature, 0, sizeof seg->signature);
}

/* Is there a signed segment at `base` that contains `addr`? */
static bool signature_at(uintptr_t base, uintptr_t addr, segment_signature_t *out) {
  if (!prim_read_safely((const void *)base, out, sizeof *out)) return false;
  if (out->magic != SIGNATURE_MAGIC || out->check != signature_check(base, out->size, out->owner))
    return false;
  out->prefix[sizeof out->prefix - 1] = '\0';
  return addr - base < out->size;
}

/* The signature of another copy's segment that holds p: false when p is in
 * none that can be found. A segment's base is aligned to its copy's segment
 * size (2, 4 or 8 MiB), and every block start lies in its first such unit,
 * except a huge block aligned to 2 MiB or more, which starts one alignment
 * past its segment's base: so the candidates are p rounded down to each
 * segment size, and p minus each power of two from 2 MiB up to p's own
 * alignment. (An interior pointer further into a huge block is not found.)
 * Only foreign pointers get here, never the fast paths. */
static bool signature_find(const void *p, segment_signature_t *out) {
  uintptr_t addr = (uintptr_t)p, tried = 0;
  for (unsigned shift = SIGNATURE_MIN_SHIFT; shift <= SIGNATURE_MAX_SHIFT; shift++) {
    uintptr_t base = addr & ~(((uintptr_t)1 << shift) - 1);
    if (base != tried && signature_at(base, addr, out)) return true;
    tried = base;
  }
  for (unsigned shift = SIGNATURE_MIN_SHIFT;
       shift < sizeof(uintptr_t) * CHAR_BIT - 1 && !(addr & (((uintptr_t)1 << shift) - 1)); shift++)
    if (addr > ((uintptr_t)1 << shift) && signature_at(addr - ((uintptr_t)1 << shift), addr, out))
      return true;
  return false;
}
