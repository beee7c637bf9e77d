/*
 * prim/windows.c - the platform seam on Windows x86-64: VirtualAlloc,
 * SRW locks, one-time initialisation and fiber-local storage.
 *
 * Memory. Every mapping is one reservation, committed at once (MEM_RESERVE |
 * MEM_COMMIT): committed pages are charged to the commit limit but become
 * resident only when touched, like a MAP_NORESERVE mapping on Linux.
 * VirtualFree(MEM_RELEASE) returns a whole reservation only, so an aligned
 * mapping cannot be trimmed as on Linux: it is found by reserving size +
 * alignment, releasing that, and reserving again at the aligned address
 * inside it (another thread may take the range in between: then retry).
 * Purge is MEM_DECOMMIT followed by MEM_COMMIT of the same range: the
 * physical pages go back and the range stays accessible and reads as zero,
 * which is the madvise(MADV_DONTNEED) contract the core relies on (a freshly
 * claimed slice is used without a commit step). MEM_RESET would be one call,
 * but its contents afterwards are undefined, not zero.
 *
 * Thread exit. The key is an FLS index with a callback: Windows runs the
 * callback for every thread that exits with a non-NULL value, whoever created
 * the thread. FlsFree also runs it, for every thread still holding a value,
 * on the thread calling FlsFree; prim_key_delete raises `key_deleting` first
 * so those calls return at once, which leaves the other threads' heaps as
 * pthread_key_delete does on Linux.
 *
 * No fork: prim_atfork registers nothing.
 */
#include "../internal.h"

static void *prim_map_aligned(size_t size, size_t alignment) {
  if (size > SIZE_MAX - alignment) return NULL;
  const DWORD kind = MEM_RESERVE | MEM_COMMIT;
  /* Reservations are 64 KiB aligned; a larger alignment may happen anyway. */
  uint8_t *p = VirtualAlloc(NULL, size, kind, PAGE_READWRITE);
  if (!p || ((uintptr_t)p & (alignment - 1)) == 0) return p;
  VirtualFree(p, 0, MEM_RELEASE);
  for (int attempt = 0; attempt < 16; attempt++) {
    uint8_t *raw = VirtualAlloc(NULL, size + alignment, MEM_RESERVE, PAGE_NOACCESS);
    if (!raw) return NULL;
    uint8_t *aligned = (uint8_t *)align_up((uintptr_t)raw, alignment);
    VirtualFree(raw, 0, MEM_RELEASE);
    p = VirtualAlloc(aligned, size, kind, PAGE_READWRITE);
    if (p) return p;
  }
  return NULL;
}

static void prim_unmap(void *p, size_t size) {
  (void)size; /* MEM_RELEASE frees the whole reservation p starts */
  VirtualFree(p, 0, MEM_RELEASE);
}

static void prim_purge(void *p, size_t size) {
  VirtualFree(p, size, MEM_DECOMMIT);
  VirtualAlloc(p, size, MEM_COMMIT, PAGE_READWRITE);
}

static uint64_t prim_now_ms(void) {
  return GetTickCount64();
}

static void prim_lock(prim_lock_t *lock) {
  AcquireSRWLockExclusive(lock);
}
static void prim_unlock(prim_lock_t *lock) {
  ReleaseSRWLockExclusive(lock);
}

typedef struct once_call {
  void (*fn)(void);
} once_call;

static BOOL CALLBACK once_trampoline(PINIT_ONCE once, PVOID param, PVOID *context) {
  (void)once;
  (void)context;
  ((const once_call *)param)->fn();
  return TRUE;
}
static void prim_once(prim_once_t *once, void (*fn)(void)) {
  once_call call = {fn};
  InitOnceExecuteOnce(once, once_trampoline, &call, NULL);
}

/* One thread-exit key per copy: the core creates it once. */
static void (*key_callback)(void *);
static _Atomic(bool) key_deleting;

static void WINAPI key_trampoline(PVOID value) {
  if (value && !atomic_load(&key_deleting)) key_callback(value);
}
static bool prim_key_create(prim_key_t *key, void (*fn)(void *)) {
  key_callback = fn;
  *key = FlsAlloc(key_trampoline);
  return *key != FLS_OUT_OF_INDEXES;
}
static void prim_key_set(prim_key_t key, void *value) {
  FlsSetValue(key, value);
}
static void prim_key_delete(prim_key_t key) {
  atomic_store(&key_deleting, true);
  FlsFree(key);
}

static void prim_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  (void)prepare;
  (void)parent;
  (void)child;
}
