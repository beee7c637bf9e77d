/*
 * pyalloc.c - the PyMemAllocatorEx hooks of one nsalloc copy.
 *
 * Foreign blocks. A domain's blocks allocated before the copy was installed
 * (by pymalloc, libc, tracemalloc's or another copy's hooks...) keep arriving
 * at free and realloc. Each hook asks the copy's O(1) registry
 * (nsalloc_owns, which never reads the block) and hands a block it does not
 * own to THAT domain's saved allocator with its saved ctx, exactly where the
 * block would have gone had the copy never been installed. The routing lives
 * here, not in the core's forward policy, because the core holds one forward
 * target per copy while each domain has its own previous allocator (RAW:
 * libc; MEM and OBJ: pymalloc; under PYTHONMALLOC=debug each domain's own
 * debug hooks, which check the domain's API id). The copy's own foreign policy
 * stays "abort": a foreign pointer reaching the core means this routing is
 * broken, and the process stops with a diagnostic instead of corrupting the
 * heap.
 *
 * Strategies. RAW is called without the GIL, so it always uses each thread's
 * own heap. Up to CPython 3.11 MEM and OBJ are only called with the GIL held,
 * so they share one first-class heap reached through ctx (no TLS lookup); the
 * GIL hands it from thread to thread. Its blocks may still be freed by any
 * thread through RAW (nsalloc_free is valid everywhere). From 3.12 every
 * domain must be thread-safe (per-interpreter GIL), and a free-threaded build
 * keeps MEM and OBJ on CPython's own mimalloc, whose heaps its GC walks.
 */
#include "pyalloc.h"

#include <stdatomic.h>

#if defined(Py_GIL_DISABLED)
#define OBJECT_DOMAINS_HOOKABLE 0
#define OBJECT_STRATEGY         PYALLOC_THREAD_HEAPS
#elif PY_VERSION_HEX >= 0x030C0000
#define OBJECT_DOMAINS_HOOKABLE 1
#define OBJECT_STRATEGY         PYALLOC_THREAD_HEAPS
#else
#define OBJECT_DOMAINS_HOOKABLE 1
#define OBJECT_STRATEGY         PYALLOC_GIL_HEAP
#endif

#define OBJECT_DOMAINS (PYALLOC_DOMAIN_BIT(PYMEM_DOMAIN_MEM) | PYALLOC_DOMAIN_BIT(PYMEM_DOMAIN_OBJ))

/* One domain's state; a hook's ctx points to it. */
typedef struct domain_s {
  PyMemAllocatorEx previous; /* the allocator wrapped at install, with its own ctx */
  nsalloc_heap_t *heap;      /* PYALLOC_GIL_HEAP: the shared heap; else NULL */
  _Atomic(uint64_t) forwarded_frees, forwarded_reallocs;
} domain_t;

static domain_t domains[PYALLOC_DOMAIN_COUNT];
static unsigned installed_domains;
static nsalloc_heap_t *gil_heap;

static const char *const domain_names[PYALLOC_DOMAIN_COUNT] = {
    [PYMEM_DOMAIN_RAW] = "raw", [PYMEM_DOMAIN_MEM] = "mem", [PYMEM_DOMAIN_OBJ] = "obj"};

const char *pyalloc_domain_name(PyMemAllocatorDomain domain) {
  return (unsigned)domain < PYALLOC_DOMAIN_COUNT ? domain_names[domain] : NULL;
}

static pyalloc_strategy_t strategy_of(int domain) {
  return domain == PYMEM_DOMAIN_RAW ? PYALLOC_THREAD_HEAPS : OBJECT_STRATEGY;
}

#define likely(x) __builtin_expect(!!(x), 1)

/* ---- foreign blocks: to the domain's previous allocator ------------------ */
static void forward_free(domain_t *domain, void *p) {
  atomic_fetch_add_explicit(&domain->forwarded_frees, 1, memory_order_relaxed);
  domain->previous.free(domain->previous.ctx, p);
}

static void *forward_realloc(domain_t *domain, void *p, size_t size) {
  atomic_fetch_add_explicit(&domain->forwarded_reallocs, 1, memory_order_relaxed);
  return domain->previous.realloc(domain->previous.ctx, p, size);
}

/* ---- PYALLOC_THREAD_HEAPS: the calling thread's heap ---------------------- */
static void *thread_malloc(void *ctx, size_t size) {
  (void)ctx;
  return nsalloc_malloc(size);
}

static void *thread_calloc(void *ctx, size_t count, size_t size) {
  (void)ctx;
  return nsalloc_calloc(count, size);
}

static void *thread_realloc(void *ctx, void *p, size_t size) {
  if (likely(!p || nsalloc_owns(p))) return nsalloc_realloc(p, size);
  return forward_realloc(ctx, p, size);
}

static void thread_free(void *ctx, void *p) {
  if (likely(nsalloc_owns(p))) nsalloc_free(p);
  else if (p) forward_free(ctx, p);
}

/* ---- PYALLOC_GIL_HEAP: the shared heap, GIL held ------------------------- */
static void *gil_malloc(void *ctx, size_t size) {
  return nsalloc_heap_malloc(((domain_t *)ctx)->heap, size);
}

static void *gil_calloc(void *ctx, size_t count, size_t size) {
  return nsalloc_heap_calloc(((domain_t *)ctx)->heap, count, size);
}

static void *gil_realloc(void *ctx, void *p, size_t size) {
  if (likely(!p || nsalloc_owns(p))) return nsalloc_heap_realloc(((domain_t *)ctx)->heap, p, size);
  return forward_realloc(ctx, p, size);
}

/* nsalloc_heap_free is right for any block of the copy: it frees locally what
 * belongs to the heap and remotely what belongs to another thread's heap. */
static void gil_free(void *ctx, void *p) {
  if (likely(nsalloc_owns(p))) nsalloc_heap_free(((domain_t *)ctx)->heap, p);
  else if (p) forward_free(ctx, p);
}

/* ---- route_foreign == false: everything to the copy ---------------------- */
static void *unrouted_realloc(void *ctx, void *p, size_t size) {
  (void)ctx;
  return nsalloc_realloc(p, size);
}

static void unrouted_free(void *ctx, void *p) {
  (void)ctx;
  nsalloc_free(p);
}

/* ---- install -------------------------------------------------------------- */
const char *pyalloc_install(unsigned domain_mask, bool route_foreign) {
  if (domain_mask & ~PYALLOC_ALL_DOMAINS) return "unknown allocator domain";
  if (!OBJECT_DOMAINS_HOOKABLE && (domain_mask & OBJECT_DOMAINS))
    return "free-threaded CPython keeps the 'mem' and 'obj' domains on its own mimalloc "
           "(its garbage collector walks those heaps); only 'raw' can be installed";
  if (domain_mask & installed_domains) return "a requested domain is already installed";
  if (OBJECT_STRATEGY == PYALLOC_GIL_HEAP && (domain_mask & OBJECT_DOMAINS) && !gil_heap) {
    gil_heap = nsalloc_heap_new();
    if (!gil_heap) return "out of memory creating the GIL heap";
  }
  for (int id = 0; id < PYALLOC_DOMAIN_COUNT; id++) {
    if (!(domain_mask & PYALLOC_DOMAIN_BIT(id))) continue;
    domain_t *domain = &domains[id];
    bool gil = strategy_of(id) == PYALLOC_GIL_HEAP;
    domain->heap = gil ? gil_heap : NULL;
    PyMem_GetAllocator((PyMemAllocatorDomain)id, &domain->previous);
    PyMemAllocatorEx hooks = {
        .ctx = domain,
        .malloc = gil ? gil_malloc : thread_malloc,
        .calloc = gil ? gil_calloc : thread_calloc,
        .realloc = !route_foreign ? unrouted_realloc : gil ? gil_realloc : thread_realloc,
        .free = !route_foreign ? unrouted_free : gil ? gil_free : thread_free,
    };
    PyMem_SetAllocator((PyMemAllocatorDomain)id, &hooks);
    installed_domains |= PYALLOC_DOMAIN_BIT(id);
  }
  return NULL;
}

unsigned pyalloc_installed(void) { return installed_domains; }

void pyalloc_domain_stats(PyMemAllocatorDomain id, pyalloc_domain_stats_t *out) {
  const domain_t *domain = &domains[id];
  out->installed = installed_domains & PYALLOC_DOMAIN_BIT(id);
  out->strategy = strategy_of(id);
  out->forwarded_frees = atomic_load_explicit(&domain->forwarded_frees, memory_order_relaxed);
  out->forwarded_reallocs = atomic_load_explicit(&domain->forwarded_reallocs, memory_order_relaxed);
}

bool pyalloc_gil_heap_stats(nsalloc_stats_t *out) {
  if (!gil_heap) return false;
  nsalloc_heap_stats(gil_heap, out);
  return true;
}
