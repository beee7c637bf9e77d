/*
 * windows.c - the platform seam (prim.h) for Windows x86-64: VirtualAlloc,
 * SRW locks, one-time initialisation and fiber-local storage. Built with
 * mingw-w64 (GCC) and tested under wine (docs/windows.md).
 *
 * Memory. Every mapping is one reservation, committed at once (MEM_RESERVE |
 * MEM_COMMIT): committed pages count against the commit limit but become
 * resident only when touched, like a MAP_NORESERVE mapping on Linux.
 * VirtualFree(MEM_RELEASE) returns a whole reservation only, so an aligned
 * mapping cannot be trimmed as on Linux: it is found by reserving size +
 * alignment, releasing that and reserving again at the aligned address inside
 * it (another thread may take the range in between: then retry).
 *
 * Purge is MEM_DECOMMIT followed by MEM_COMMIT of the same range: the physical
 * pages go back, the range stays accessible and reads as zero, the contract of
 * madvise(MADV_DONTNEED) (a freshly claimed slice is used without a commit
 * step). MEM_RESET would be one call, but leaves the contents undefined.
 *
 * Thread exit. The key is an FLS index with a callback, which Windows runs for
 * every thread that exits with a non-NULL value, whoever created the thread.
 * FlsFree runs it too, on the calling thread, for every thread still holding
 * a value: prim_key_delete raises `key_deleting` first so those calls return
 * at once, leaving the other threads' heaps as pthread_key_delete does. (FLS
 * values belong to fibers: a thread that runs several fibers has its heap
 * released when the fiber that first allocated is deleted.)
 *
 * The thread id is the TEB's self pointer (%gs:0x30): unique among live
 * threads, reused only after its thread exited. No fork: prim_atfork does
 * nothing.
 */
#include <io.h>
#include <stdlib.h>

#define PRIM_PURGE_ZEROES 1

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
    uint8_t *aligned = (uint8_t *)(((uintptr_t)raw + alignment - 1) & ~(uintptr_t)(alignment - 1));
    VirtualFree(raw, 0, MEM_RELEASE);
    p = VirtualAlloc(aligned, size, kind, PAGE_READWRITE);
    if (p) return p;
  }
  return NULL;
}

static void prim_unmap(void *p, size_t size) {
  (void)size; /* MEM_RELEASE frees the whole reservation, which starts at p */
  VirtualFree(p, 0, MEM_RELEASE);
}

static bool prim_purge(void *p, size_t size) {
  if (!VirtualFree(p, size, MEM_DECOMMIT)) return false;
  /* Recommitting cannot fail for lack of address space (the range is still
   * reserved), only when the commit limit is reached: then the range would
   * fault when used, which is not recoverable here. */
  if (!VirtualAlloc(p, size, MEM_COMMIT, PAGE_READWRITE)) abort();
  return true;
}

/* Large pages on Windows need the SeLockMemoryPrivilege and must be
 * committed up front (MEM_LARGE_PAGES): not a hint, so none is given. */
static bool prim_hint_huge_pages(void *p, size_t size) {
  (void)p, (void)size;
  return false;
}

/* VirtualAlloc memory cannot be moved to another address without copying. */
#define PRIM_MOVES_PAGES 0
static enum prim_move_result prim_move(void *dst, void *src, size_t size) {
  (void)dst, (void)src, (void)size;
  return PRIM_MOVE_FAILED;
}

static size_t prim_page_size(void) {
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return info.dwPageSize;
}

/* ---- threads -------------------------------------------------------------- */

static inline uintptr_t prim_thread_id(void) {
  uintptr_t teb;
  __asm__("mov %%gs:0x30, %0" : "=r"(teb));
  return teb;
}

/* Windows has no notion the core could use cheaply (and nothing here waits
 * for a second thread: prim_hint_huge_pages is a no-op), so: true. */
static bool prim_in_initial_thread(void) {
  return true;
}

static inline void prim_lock(prim_lock_t *lock) {
  AcquireSRWLockExclusive(lock);
}
static inline void prim_unlock(prim_lock_t *lock) {
  ReleaseSRWLockExclusive(lock);
}

typedef struct prim_once_call {
  void (*init)(void);
} prim_once_call;

static BOOL CALLBACK prim_once_trampoline(PINIT_ONCE once, PVOID param, PVOID *context) {
  (void)once;
  (void)context;
  ((const prim_once_call *)param)->init();
  return TRUE;
}
static void prim_once(prim_once_t *once, void (*init)(void)) {
  prim_once_call call = {init};
  InitOnceExecuteOnce(once, prim_once_trampoline, &call, NULL);
}

/* The copy has one thread-exit key at a time (init.c creates it under the
 * copy's lock, after deleting the previous one). */
static void (*key_destructor)(void *);
static _Atomic(bool) key_deleting;

static void WINAPI prim_key_trampoline(PVOID value) {
  if (value && !atomic_load(&key_deleting)) key_destructor(value);
}
static bool prim_key_create(prim_key_t *key, void (*destructor)(void *)) {
  key_destructor = destructor;
  atomic_store(&key_deleting, false);
  *key = FlsAlloc(prim_key_trampoline);
  return *key != FLS_OUT_OF_INDEXES;
}
static void prim_key_delete(prim_key_t key) {
  atomic_store(&key_deleting, true);
  FlsFree(key);
}
static void prim_key_set(prim_key_t key, void *value) {
  FlsSetValue(key, value);
}
static void prim_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  (void)prepare;
  (void)parent;
  (void)child;
}
static void prim_yield(void) {
  SwitchToThread();
}
static void prim_at_exit(void (*handler)(void)) {
  atexit(handler); /* mingw: a DLL's handlers run when it is unloaded, or at exit */
}

/* No background thread on Windows: a DLL's copy would have to join it at
 * DLL_PROCESS_DETACH, under the loader lock, which the exiting thread needs
 * for its own DLL_THREAD_DETACH: a deadlock. The purger never starts
 * (docs/windows.md); the condition variable is still real. */
static bool prim_thread_start(prim_thread_t *thread, const char *name, void (*main)(void *),
                              void *arg) {
  (void)thread, (void)name, (void)main, (void)arg;
  return false;
}
static void prim_thread_join(prim_thread_t *thread) {
  (void)thread;
}
static void prim_cond_wait_ms(prim_cond_t *cond, prim_lock_t *lock, uint64_t ms) {
  SleepConditionVariableSRW(cond, lock, ms >= INFINITE ? INFINITE : (DWORD)ms, 0);
}
static void prim_cond_wake(prim_cond_t *cond) {
  WakeConditionVariable(cond);
}

/* ---- looking at other modules ----------------------------------------------- */

/* ReadProcessMemory on the process itself fails (ERROR_PARTIAL_COPY,
 * ERROR_NOACCESS) instead of faulting on an unreadable address. */
static bool prim_read_safely(const void *address, void *out, size_t size) {
  int saved = errno;
  DWORD last_error = GetLastError();
  SIZE_T done = 0;
  bool ok = ReadProcessMemory(GetCurrentProcess(), address, out, size, &done) && done == size;
  SetLastError(last_error);
  errno = saved;
  return ok;
}

static bool prim_module_name(const void *address, char *out, size_t size) {
  HMODULE module;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                              GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          (LPCSTR)address, &module))
    return false;
  DWORD length = GetModuleFileNameA(module, out, (DWORD)size);
  return length > 0 && length < size;
}

/* ---- misc ------------------------------------------------------------------- */

static uint64_t prim_clock_ms(void) {
  return GetTickCount64();
}

/* The C runtime's descriptor 2, so a host (or test) that redirects stderr
 * with _dup2 gets the diagnostics. */
static void prim_write_error(const char *text, size_t length) {
  if (_write(2, text, (unsigned)length) < 0) { /* nowhere left to report to */
  }
}
