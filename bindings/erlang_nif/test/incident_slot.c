/*
 * incident_slot.c - ONE thread-local slot shared by every library linked
 * against this one: the stand-in for the fixed TLS slot (offset 0x360 on
 * macOS) through which two bundled mimalloc copies named "the current thread's
 * heap". Part of the negative control only.
 */
__attribute__((visibility("default"))) __thread void *incident_slot_heap;
