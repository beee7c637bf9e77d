/*
 * pyalloc.c - the PyMemAllocatorEx hooks of one nsalloc copy.
 *
 * Allocation. Every domain allocates from the calling thread's heap of the
 * copy (nsalloc_malloc): thread-safe, so right for RAW (called without the
 * GIL), for MEM and OBJ on every CPython version (from 3.12 they must be
 * thread-safe too), and the fastest path of the core: its free fast path
 * serves a block freed by the thread that owns its page. (Up to 3.11 MEM and
 * OBJ could share one first-class heap under the GIL, reached through ctx
 * without TLS; with this core nsalloc_heap_free always takes the checked
 * path, and that design measured slower on the benchmarks: docs/python.md.)
 * A free-threaded build keeps MEM and OBJ on CPython's own mimalloc, whose
 * heaps its garbage collector walks.
 *
 * Foreign blocks. A domain's blocks allocated before the copy was installed
 * (by pymalloc, libc, the debug hooks, tracemalloc, another copy...) keep
 * arriving at free and realloc. They go through the core's foreign-pointer
 * policy: the core recognises them in O(1) from its segment map (never
 * reading them) and calls the forward hooks below, which hand each one to the
 * saved allocator - with its saved ctx - of the domain it was freed through,
 * exactly where it would have gone had the copy never been installed. The
 * copy has one set of forward hooks while each domain has its own previous
 * allocator, so the free and realloc hooks pass their domain with the call
 * (nsalloc_forwarding_free/realloc) and the forward hooks receive it as ctx.
 */
#include "pyalloc.h"

#include <stdatomic.h>

#if defined(Py_GIL_DISABLED)
#define OBJECT_DOMAINS_HOOKABLE 0
#else
#define OBJECT_DOMAINS_HOOKABLE 1
#endif
#define OBJECT_DOMAINS (PYALLOC_DOMAIN_BIT(PYMEM_DOMAIN_MEM) | PYALLOC_DOMAIN_BIT(PYMEM_DOMAIN_OBJ))

/* One domain's state; its hooks' ctx points to it. */
typedef struct domain_s {
  PyMemAllocatorEx previous; /* the allocator wrapped at install, with its own ctx */
  _Atomic(uint64_t) forwarded_frees, forwarded_reallocs;
} domain_t;

static domain_t domains[PYALLOC_DOMAIN_COUNT];
static unsigned installed_domains;
static bool routing_foreign; /* foreign blocks go to the forward hooks (else: the copy's policy) */

static const char *const domain_names[PYALLOC_DOMAIN_COUNT] = {
    [PYMEM_DOMAIN_RAW] = "raw", [PYMEM_DOMAIN_MEM] = "mem", [PYMEM_DOMAIN_OBJ] = "obj"};

const char *pyalloc_domain_name(PyMemAllocatorDomain domain) {
  return (unsigned)domain < PYALLOC_DOMAIN_COUNT ? domain_names[domain] : NULL;
}

/* ---- foreign blocks: the copy's forward hooks ---------------------------- */
/* ctx: the domain whose free or realloc hook made the call. */
static void forward_free(void *ctx, void *p) {
  domain_t *domain = ctx;
  atomic_fetch_add_explicit(&domain->forwarded_frees, 1, memory_order_relaxed);
  domain->previous.free(domain->previous.ctx, p);
}

static void *forward_realloc(void *ctx, void *p, size_t size) {
  domain_t *domain = ctx;
  atomic_fetch_add_explicit(&domain->forwarded_reallocs, 1, memory_order_relaxed);
  return domain->previous.realloc(domain->previous.ctx, p, size);
}

/* ---- the hooks ------------------------------------------------------------ */
static void *hook_malloc(void *ctx, size_t size) {
  (void)ctx;
  return nsalloc_malloc(size);
}

static void *hook_calloc(void *ctx, size_t count, size_t size) {
  (void)ctx;
  return nsalloc_calloc(count, size);
}

static void *hook_realloc(void *ctx, void *p, size_t size) {
  return nsalloc_forwarding_realloc(p, size, ctx);
}

static void hook_free(void *ctx, void *p) {
  nsalloc_forwarding_free(p, ctx);
}

/* ---- install -------------------------------------------------------------- */
/* Does domain `id` serve new blocks from this copy? Its hooks may be on top,
 * or under a wrapper that calls them (tracemalloc, debug hooks, failure
 * injection that is not failing): a fresh block tells, whatever is on top. */
static bool serves(int id) {
  static void *(*const api_malloc[PYALLOC_DOMAIN_COUNT])(size_t) = {
      [PYMEM_DOMAIN_RAW] = PyMem_RawMalloc,
      [PYMEM_DOMAIN_MEM] = PyMem_Malloc,
      [PYMEM_DOMAIN_OBJ] = PyObject_Malloc};
  static void (*const api_free[PYALLOC_DOMAIN_COUNT])(void *) = {[PYMEM_DOMAIN_RAW] = PyMem_RawFree,
                                                                 [PYMEM_DOMAIN_MEM] = PyMem_Free,
                                                                 [PYMEM_DOMAIN_OBJ] =
                                                                     PyObject_Free};
  void *p = api_malloc[id](1);
  bool ours = p && nsalloc_owns(p); /* also true for a block under a debug header */
  api_free[id](p);
  return ours;
}

const char *pyalloc_plan(unsigned *domain_mask, bool route_foreign) {
  unsigned mask = *domain_mask;
  if (mask & ~PYALLOC_ALL_DOMAINS) return "unknown allocator domain";
  if (!OBJECT_DOMAINS_HOOKABLE && (mask & OBJECT_DOMAINS))
    return "free-threaded CPython keeps the 'mem' and 'obj' domains on its own mimalloc "
           "(its garbage collector walks those heaps); only 'raw' can be installed";
  if (installed_domains && route_foreign != routing_foreign)
    return "forward= must be the same for every install of a copy";
  /* A domain is installed once (a second set of hooks would wrap the first
   * and forward to itself); asking again is a no-op while the copy still
   * serves it, e.g. a sitecustomize running in every subinterpreter. */
  for (int id = 0; id < PYALLOC_DOMAIN_COUNT; id++)
    if ((mask & installed_domains & PYALLOC_DOMAIN_BIT(id)) && !serves(id))
      return "a requested domain was installed before and another allocator now serves it (it "
             "wrapped the copy, e.g. another copy installed after this one, or replaced it); a "
             "copy installs into a domain only once";
  *domain_mask = mask & ~installed_domains;
  return NULL;
}

const char *pyalloc_install(unsigned domain_mask, bool route_foreign) {
  const char *error = pyalloc_plan(&domain_mask, route_foreign);
  if (error) return error;
  if (route_foreign && !routing_foreign) {
    /* Every free and realloc through the copy comes from a hook, which names
     * its domain; the registered ctx is only a valid fallback. */
    const nsalloc_forward_t forward = {&domains[PYMEM_DOMAIN_RAW], forward_free, forward_realloc,
                                       NULL};
    if (nsalloc_set_foreign_policy(NSALLOC_POLICY_FORWARD, &forward) != 0)
      return "the copy refused its forward hooks";
  }
  routing_foreign = route_foreign;
  for (int id = 0; id < PYALLOC_DOMAIN_COUNT; id++) {
    if (!(domain_mask & PYALLOC_DOMAIN_BIT(id))) continue;
    domain_t *domain = &domains[id];
    /* Saved before the hooks go live: a hook may forward at once. */
    PyMem_GetAllocator((PyMemAllocatorDomain)id, &domain->previous);
    PyMemAllocatorEx hooks = {domain, hook_malloc, hook_calloc, hook_realloc, hook_free};
    PyMem_SetAllocator((PyMemAllocatorDomain)id, &hooks);
    installed_domains |= PYALLOC_DOMAIN_BIT(id);
  }
  return NULL;
}

/* CPython's debug hooks (obmalloc.c) are one static struct of three
 * debug_alloc_api_t {char api_id; PyMemAllocatorEx alloc;}, 'r', 'm', 'o',
 * each domain's ctx pointing to its entry; MEM and OBJ share functions, RAW
 * has its own. No other allocator has that shape (the copy's hooks share
 * one function set across all three domains). Only the spacing of the ctx
 * pointers is checked before they are read. */
static bool debug_hooks(const PyMemAllocatorEx level[PYALLOC_DOMAIN_COUNT]) {
  typedef struct {
    char api_id;
    PyMemAllocatorEx alloc;
  } debug_api_t;
  const PyMemAllocatorEx *raw = &level[PYMEM_DOMAIN_RAW], *mem = &level[PYMEM_DOMAIN_MEM],
                         *obj = &level[PYMEM_DOMAIN_OBJ];
  const debug_api_t *apis = raw->ctx;
  return apis && mem->ctx == apis + 1 && obj->ctx == apis + 2 && mem->malloc == obj->malloc &&
         raw->malloc != mem->malloc && apis[0].api_id == 'r' && apis[1].api_id == 'm' &&
         apis[2].api_id == 'o';
}

/* tracemalloc (Modules/_tracemalloc.c up to 3.11, Python/tracemalloc.c
 * since) saves the allocators it wraps in one struct {mem, raw, obj} of
 * PyMemAllocatorEx and gives each domain's hooks a ctx pointing to that
 * domain's saved entry; MEM and OBJ share functions, RAW has its own. Only
 * tracemalloc has ctx pointers one PyMemAllocatorEx apart in that order. */
static bool tracemalloc_hooks(const PyMemAllocatorEx level[PYALLOC_DOMAIN_COUNT]) {
  const PyMemAllocatorEx *saved = level[PYMEM_DOMAIN_MEM].ctx;
  return saved && level[PYMEM_DOMAIN_RAW].ctx == saved + 1 &&
         level[PYMEM_DOMAIN_OBJ].ctx == saved + 2 &&
         level[PYMEM_DOMAIN_MEM].malloc == level[PYMEM_DOMAIN_OBJ].malloc &&
         level[PYMEM_DOMAIN_RAW].malloc != level[PYMEM_DOMAIN_MEM].malloc;
}

bool pyalloc_debug_hooks_in_chain(bool tracemalloc_tracing) {
  PyMemAllocatorEx level[PYALLOC_DOMAIN_COUNT];
  for (int id = 0; id < PYALLOC_DOMAIN_COUNT; id++)
    PyMem_GetAllocator((PyMemAllocatorDomain)id, &level[id]);
  if (tracemalloc_tracing && tracemalloc_hooks(level)) {
    /* Look beneath tracemalloc: the allocators it saved. */
    const PyMemAllocatorEx *saved = level[PYMEM_DOMAIN_MEM].ctx;
    level[PYMEM_DOMAIN_MEM] = saved[0];
    level[PYMEM_DOMAIN_RAW] = saved[1];
    level[PYMEM_DOMAIN_OBJ] = saved[2];
  }
  return debug_hooks(level);
}

unsigned pyalloc_serving(void) {
  unsigned mask = 0;
  for (int id = 0; id < PYALLOC_DOMAIN_COUNT; id++)
    if ((installed_domains & PYALLOC_DOMAIN_BIT(id)) && serves(id)) mask |= PYALLOC_DOMAIN_BIT(id);
  return mask;
}

void pyalloc_domain_stats(PyMemAllocatorDomain id, pyalloc_domain_stats_t *out) {
  const domain_t *domain = &domains[id];
  out->installed = installed_domains & PYALLOC_DOMAIN_BIT(id);
  out->forwarded_frees = atomic_load_explicit(&domain->forwarded_frees, memory_order_relaxed);
  out->forwarded_reallocs = atomic_load_explicit(&domain->forwarded_reallocs, memory_order_relaxed);
}
