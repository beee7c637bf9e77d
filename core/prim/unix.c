/*
 * unix.c - the platform seam (prim.h) for Linux (glibc and musl), macOS and
 * FreeBSD. Only Linux is built and tested by CI; the macOS and FreeBSD paths
 * are compile-checked (clang -target) and written to their documented
 * behaviour, noted at each difference.
 *
 * Included by core/nsalloc.c right after internal.h; nsalloc.c defines
 * _GNU_SOURCE first, so mmap flags, madvise and clock_gettime are declared
 * even under -std=c11.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#if defined(__linux__)
#include <link.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif
#if defined(__FreeBSD__)
#include <pthread_np.h>
#endif
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#if !defined(MAP_ANONYMOUS) /* older macOS and BSD headers */
#define MAP_ANONYMOUS MAP_ANON
#endif
/* No MAP_NORESERVE (Linux only; FreeBSD has no such flag): like glibc's own
 * mmap'd chunks, a request the kernel's overcommit policy deems impossible
 * (malloc(1 TiB) on a 24 GiB machine under Linux's default heuristic) fails
 * with ENOMEM instead of succeeding and meeting the OOM killer later. */
#define PRIM_MAP_FLAGS (MAP_PRIVATE | MAP_ANONYMOUS)

/* Purged memory reads back as zero on every platform here: Linux drops the
 * pages of a private anonymous mapping (MADV_DONTNEED); elsewhere the range is
 * replaced by a fresh anonymous mapping (see prim_purge). */
#define PRIM_PURGE_ZEROES 1

static void *prim_map(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, PRIM_MAP_FLAGS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void prim_unmap(void *p, size_t size) {
  munmap(p, size);
}

static void *prim_map_aligned(size_t size, size_t alignment) {
  if (size > SIZE_MAX - alignment) return NULL;
  /* Over-allocate, then trim the misaligned head and the unused tail (both
   * whole OS pages: size and alignment are multiples of the page size). */
  uint8_t *raw = prim_map(size + alignment);
  if (!raw) return NULL;
  uint8_t *aligned = (uint8_t *)(((uintptr_t)raw + alignment - 1) & ~(uintptr_t)(alignment - 1));
  size_t head = (size_t)(aligned - raw), tail = alignment - head;
  if (head) munmap(raw, head);
  if (tail) munmap(aligned + size, tail);
  return aligned;
}

static bool prim_purge(void *p, size_t size) {
#if defined(__linux__)
  /* Linux: MADV_DONTNEED on private anonymous memory frees the pages at once
   * and later reads see zero-filled pages. */
  return madvise(p, size, MADV_DONTNEED) == 0;
#else
  /* macOS and FreeBSD: MADV_DONTNEED keeps the contents (and MADV_FREE frees
   * lazily, contents undefined), so map fresh zero pages over the range
   * instead. MAP_FIXED replaces the old pages atomically: the range is never
   * unmapped, so no other mapping can slip in. */
  return mmap(p, size, PROT_READ | PROT_WRITE, PRIM_MAP_FLAGS | MAP_FIXED, -1, 0) != MAP_FAILED;
#endif
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
/* Whether transparent huge pages can back advised memory at all: not in the
 * system's "never" mode, nor in a process that switched them off
 * (PR_SET_THP_DISABLE, inherited across fork and exec). Read once; a file
 * that cannot be read leaves the answer to madvise. */
static bool prim_huge_pages_enabled(void) {
  static _Atomic(int) known; /* 0: not read yet; 1: enabled; 2: not */
  int state = atomic_load_explicit(&known, memory_order_relaxed);
  if (state == 0) {
    char text[128];
    ssize_t n = -1;
    int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      n = read(fd, text, sizeof text - 1);
      close(fd);
    }
    bool never = n > 0 && (text[n] = '\0', strstr(text, "[never]") != NULL);
#if defined(PR_GET_THP_DISABLE)
    never = never || prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1;
#endif
    state = never ? 2 : 1;
    atomic_store_explicit(&known, state, memory_order_relaxed);
  }
  return state == 1;
}
#endif

static bool prim_hint_huge_pages(void *p, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  /* Needed in THP's "madvise" mode (Debian's default), harmless in "always"
   * mode. In "never" mode the kernel accepts the advice and ignores it. */
  return madvise(p, size, MADV_HUGEPAGE) == 0 && prim_huge_pages_enabled();
#else
  (void)p, (void)size;
  return false;
#endif
}

#if defined(__linux__) && defined(MREMAP_FIXED)
#define PRIM_MOVES_PAGES 1
/* mremap moves the page tables, not the bytes. With MREMAP_FIXED the kernel
 * unmaps `dst` first, so a failure after that point (a range across two
 * mappings on kernels before 6.17, the kernel out of memory) leaves a hole
 * there: map zero pages back in. MAP_FIXED_NOREPLACE never takes another
 * mapping's place. When it finds one there (EEXIST), that is `dst` itself
 * only if the kernel failed before unmapping it, which is certain for
 * EINVAL alone (arguments); after any other failure another thread's mmap
 * may have taken the hole: PRIM_MOVE_LOST. */
static enum prim_move_result prim_move(void *dst, void *src, size_t size) {
  int saved = errno;
  if (mremap(src, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, dst) == dst) return PRIM_MOVE_DONE;
  enum prim_move_result result = PRIM_MOVE_FAILED;
  int failure = errno;
#if defined(MAP_FIXED_NOREPLACE)
  void *back = mmap(dst, size, PROT_READ | PROT_WRITE, PRIM_MAP_FLAGS | MAP_FIXED_NOREPLACE, -1, 0);
  if (back == MAP_FAILED)
    result = errno == EEXIST && failure == EINVAL ? PRIM_MOVE_FAILED : PRIM_MOVE_LOST;
  else if (back != dst) /* a kernel before 4.17 took the flag for a hint */
    munmap(back, size), result = PRIM_MOVE_LOST;
#else
  if (failure != EINVAL) result = PRIM_MOVE_LOST;
#endif
  errno = saved;
  return result;
}
#else
/* macOS and FreeBSD have no call that moves pages to a chosen address. */
#define PRIM_MOVES_PAGES 0
static enum prim_move_result prim_move(void *dst, void *src, size_t size) {
  (void)dst, (void)src, (void)size;
  return PRIM_MOVE_FAILED;
}
#endif

static size_t prim_page_size(void) {
  long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? (size_t)size : 4096;
}

/* ---- threads -------------------------------------------------------------- */

#if !(defined(__x86_64__) && (defined(__linux__) || defined(__APPLE__))) &&                        \
    !(defined(__aarch64__) && (defined(__linux__) || defined(__APPLE__)))
/* Elsewhere: the address of a thread-local byte, unique among live threads. */
static _Thread_local char prim_thread_marker PRIM_TLS_ATTR;
#endif

/* The thread pointer where its meaning is verified (it points to the thread's
 * own control block, so it is unique among live threads), else the address of
 * a thread-local byte. */
static inline uintptr_t prim_thread_id(void) {
  uintptr_t tp;
#if defined(__x86_64__) && defined(__linux__)
  __asm__("mov %%fs:0, %0" : "=r"(tp)); /* glibc and musl: the TCB's self pointer */
#elif defined(__x86_64__) && defined(__APPLE__)
  __asm__("mov %%gs:0, %0" : "=r"(tp)); /* TSD slot 0: the thread's pthread_self */
#elif defined(__aarch64__) && defined(__linux__)
  tp = (uintptr_t)__builtin_thread_pointer(); /* TPIDR_EL0: the thread's TCB */
#elif defined(__aarch64__) && defined(__APPLE__)
  /* TPIDRRO_EL0 holds the TSD base; its low 3 bits once held the CPU number. */
  __asm__("mrs %0, tpidrro_el0" : "=r"(tp));
  tp &= ~(uintptr_t)7;
#else
  tp = (uintptr_t)&prim_thread_marker;
#endif
  return tp;
}

/* Linux: the initial thread's id is the process id (also in a fork() child,
 * whose only thread is its initial one). macOS and FreeBSD ask the thread
 * library. Elsewhere unknown: true, so nothing that waits for a second
 * thread is switched on. */
static bool prim_in_initial_thread(void) {
#if defined(__linux__)
  return syscall(SYS_gettid) == getpid();
#elif defined(__APPLE__) || defined(__FreeBSD__)
  return pthread_main_np() != 0;
#else
  return true;
#endif
}

static inline void prim_lock(prim_lock_t *lock) {
  pthread_mutex_lock(lock);
}
static inline void prim_unlock(prim_lock_t *lock) {
  pthread_mutex_unlock(lock);
}
static void prim_once(prim_once_t *once, void (*init)(void)) {
  pthread_once(once, init);
}
static bool prim_key_create(prim_key_t *key, void (*destructor)(void *)) {
  return pthread_key_create(key, destructor) == 0;
}
static void prim_key_delete(prim_key_t key) {
  pthread_key_delete(key);
}
static void prim_key_set(prim_key_t key, void *value) {
  pthread_setspecific(key, value);
}
static void prim_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  pthread_atfork(prepare, parent, child);
}
static void prim_yield(void) {
  sched_yield();
}

static void *prim_thread_trampoline(void *started) {
  prim_thread_t *thread = started;
#if defined(__linux__)
  /* The thread names itself: pthread_setname_np on another thread opens a
   * /proc file (a descriptor a concurrent fork+exec may inherit, errno set
   * where /proc is missing) inside the caller's malloc or free. */
  char comm[16] = {0}; /* the kernel keeps 15 bytes */
  memcpy(comm, thread->name, strnlen(thread->name, sizeof comm - 1));
  prctl(PR_SET_NAME, comm);
#endif
  thread->main(thread->arg);
  return NULL;
}
/* The new thread inherits the signal mask in force at pthread_create: all
 * blocked, so a host's signal (SIGINT to Python, SIGCHLD to a Lua program)
 * is delivered to one of its own threads. */
static bool prim_thread_start(prim_thread_t *thread, const char *name, void (*main)(void *),
                              void *arg) {
  thread->name = name;
  thread->main = main;
  thread->arg = arg;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  bool started = pthread_create(&thread->handle, NULL, prim_thread_trampoline, thread) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return started;
}
static void prim_thread_join(prim_thread_t *thread) {
  pthread_join(thread->handle, NULL);
}

/* PTHREAD_COND_INITIALIZER waits on the realtime clock (a monotonic one
 * needs a run-time attribute): a clock step only lengthens or shortens one
 * wait, and every caller re-checks its own deadline on the monotonic clock. */
static void prim_cond_wait_ms(prim_cond_t *cond, prim_lock_t *lock, uint64_t ms) {
  if (ms == PRIM_WAIT_FOREVER) {
    pthread_cond_wait(cond, lock);
    return;
  }
  struct timespec at;
  clock_gettime(CLOCK_REALTIME, &at);
  uint64_t ns = (uint64_t)at.tv_nsec + (ms % 1000u) * 1000000u;
  at.tv_sec += (time_t)(ms / 1000u + ns / 1000000000u);
  at.tv_nsec = (long)(ns % 1000000000u);
  pthread_cond_timedwait(cond, lock, &at);
}
static void prim_cond_wake(prim_cond_t *cond) {
  pthread_cond_signal(cond);
}

#if defined(__ELF__)
/* The module's own handle (crtstuff defines it in every ELF module): a
 * handler registered with it belongs to this module, so it runs when the
 * module is unloaded, or at exit if it never is. Plain atexit() is the same
 * call in glibc, but a sanitizer runtime intercepts atexit() and drops the
 * module, then calls the handler after dlclose: into unmapped code. */
extern void *__dso_handle;
int __cxa_atexit(void (*handler)(void *), void *arg, void *dso);
static void prim_at_exit_call(void *handler) {
  ((void (*)(void))(uintptr_t)handler)();
}
static void prim_at_exit(void (*handler)(void)) {
  __cxa_atexit(prim_at_exit_call, (void *)(uintptr_t)handler, &__dso_handle);
}
#else
static void prim_at_exit(void (*handler)(void)) {
  atexit(handler);
}
#endif

/* ---- looking at other modules ----------------------------------------------- */

/* write() into a pipe copies from the address in the kernel, which answers
 * EFAULT instead of faulting; the bytes are read back (size is far below
 * the pipe's capacity, so neither call blocks). Four more system calls than
 * process_vm_readv, and portable. */
static bool prim_read_through_pipe(const void *address, void *out, size_t size) {
  int fds[2];
#if defined(__linux__) || defined(__FreeBSD__)
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
#else
  if (pipe(fds) != 0) return false;
#endif
  bool ok =
      write(fds[1], address, size) == (ssize_t)size && read(fds[0], out, size) == (ssize_t)size;
  close(fds[0]);
  close(fds[1]);
  return ok;
}

/* Linux: process_vm_readv, one system call: the kernel copies from this
 * process's memory and answers EFAULT for an unreadable address. A process
 * may always read itself (no ptrace permission is involved); where the call
 * is missing or refused (qemu-user answers ENOSYS, a seccomp filter EPERM)
 * the pipe does the same. macOS and FreeBSD: the pipe. */
static bool prim_read_safely(const void *address, void *out, size_t size) {
  int saved = errno;
#if defined(__linux__)
  struct iovec local = {out, size}, remote = {(void *)(uintptr_t)address, size};
  ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  bool ok = n == (ssize_t)size ||
            (n < 0 && errno != EFAULT && prim_read_through_pipe(address, out, size));
#else
  bool ok = prim_read_through_pipe(address, out, size);
#endif
  errno = saved;
  return ok;
}

#if defined(__linux__)
/* The module whose loaded segments hold an address, from the loader's list
 * of loaded objects (dl_iterate_phdr, which static executables have too,
 * unlike dladdr): its name is copied while the loader's lock is held. The
 * first object listed is the main program, whose name the loader does not
 * keep (empty in glibc, a placeholder in static musl). */
typedef struct module_search_s {
  uintptr_t address;
  char *out;
  size_t size;
  size_t visited;
  bool found, main_program, main_has_interpreter;
} module_search_t;

static int prim_module_search(struct dl_phdr_info *info, size_t info_size, void *data) {
  (void)info_size;
  module_search_t *search = data;
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)segment->p_vaddr;
    if (segment->p_type == PT_LOAD && search->address - start < segment->p_memsz) {
      snprintf(search->out, search->size, "%s", info->dlpi_name ? info->dlpi_name : "");
      search->found = true;
      search->main_program = search->visited == 0;
      for (size_t k = 0; k < info->dlpi_phnum; k++)
        if (info->dlpi_phdr[k].p_type == PT_INTERP) search->main_has_interpreter = true;
      return 1;
    }
  }
  search->visited++;
  return 0;
}

/* The module's path as loaded; for the main program, whose name the loader
 * does not keep, the file the kernel ran. */
static bool prim_module_name(const void *address, char *out, size_t size) {
  module_search_t search = {(uintptr_t)address, out, size, 0, false, false, false};
  dl_iterate_phdr(prim_module_search, &search);
  if (!search.found) return false;
  if (!search.main_program) return out[0] != '\0';
  /* The main program. A program with an interpreter that the kernel loaded
   * none for (AT_BASE 0) was run as `ld.so program`: /proc/self/exe names
   * ld.so, and the program is the path ld.so was given, its argv[0]. */
  if (search.main_has_interpreter && getauxval(AT_BASE) == 0) {
    snprintf(out, size, "%s", program_invocation_name);
    return true;
  }
  ssize_t length = readlink("/proc/self/exe", out, size - 1);
  if (length <= 0) return false;
  out[length] = '\0';
  return true;
}
#else
/* The loader's name of the module: its path as loaded. */
static bool prim_module_name(const void *address, char *out, size_t size) {
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fname || !info.dli_fname[0]) return false;
  snprintf(out, size, "%s", info.dli_fname);
  return true;
}
#endif

/* ---- misc ------------------------------------------------------------------- */

static uint64_t prim_clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void prim_write_error(const char *text, size_t length) {
  if (write(STDERR_FILENO, text, length) < 0) { /* nowhere left to report to */
  }
}
