/*
 * module.c - the `nsalloc` extension module: install a private copy into
 * CPython's allocator domains, report what it holds.
 *
 * The module name is a build parameter (NSALLOC_PY_MODULE) so the tests can
 * build a second module with its own copy and chain the two. The launcher
 * links this file as the built-in module `nsalloc`, reporting on the copy it
 * installed before initialisation.
 */
#include "pyalloc.h"

#ifndef NSALLOC_PY_MODULE
#define NSALLOC_PY_MODULE nsalloc
#endif
#define MODULE_NAME NSALLOC_STRINGIFY(NSALLOC_PY_MODULE)

/* The domain named `name` ("raw", "mem", "obj"), or -1 with ValueError set. */
static int domain_from_name(PyObject *name) {
  const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  for (int id = 0; text && id < PYALLOC_DOMAIN_COUNT; id++)
    if (strcmp(text, pyalloc_domain_name((PyMemAllocatorDomain)id)) == 0) return id;
  if (!PyErr_Occurred())
    PyErr_Format(PyExc_ValueError, "unknown allocator domain %R (expected 'raw', 'mem' or 'obj')",
                 name);
  return -1;
}

/* 1 when tracemalloc traces, 0 when not, -1 on error. */
static int tracemalloc_tracing(PyObject *tracemalloc) {
  PyObject *tracing = PyObject_CallMethod(tracemalloc, "is_tracing", NULL);
  if (!tracing) return -1;
  int is_tracing = PyObject_IsTrue(tracing);
  Py_DECREF(tracing);
  return is_tracing;
}

/* tracemalloc puts back the allocators it wrapped when it stops, even when it
 * is no longer on top of the chain: stopped from under the copy, it would
 * hand the copy's blocks to pymalloc. So while it traces, it is stopped
 * (dropping its traces, as tracemalloc.stop() does) and started again on top
 * of the copy. Returns the traceback limit to restart with, -1 on error. */
static long tracemalloc_stop(PyObject *tracemalloc) {
  PyObject *limit = PyObject_CallMethod(tracemalloc, "get_traceback_limit", NULL);
  long frames = limit ? PyLong_AsLong(limit) : -1;
  Py_XDECREF(limit);
  if (frames < 0) return -1;
  PyObject *stopped = PyObject_CallMethod(tracemalloc, "stop", NULL);
  Py_XDECREF(stopped);
  return stopped ? frames : -1;
}

/* The domain mask named by `names`: one name, or a sequence of names. */
static bool mask_from_names(PyObject *names, unsigned *mask) {
  if (PyUnicode_Check(names)) { /* install("raw"), not the letters of "raw" */
    int id = domain_from_name(names);
    *mask = id < 0 ? 0 : PYALLOC_DOMAIN_BIT(id);
    return id >= 0;
  }
  PyObject *sequence =
      PySequence_Fast(names, "domains must be a domain name or a sequence of them");
  if (!sequence) return false;
  *mask = 0;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(sequence); i++) {
    int id = domain_from_name(PySequence_Fast_GET_ITEM(sequence, i));
    if (id < 0) break;
    *mask |= PYALLOC_DOMAIN_BIT(id);
  }
  Py_DECREF(sequence);
  return !PyErr_Occurred();
}

/* Why an install of `*mask` is refused (NULL: it is not), dropping from the
 * mask the domains already served. Touches no allocator. */
static const char *refusal(unsigned *mask, bool forward, bool tracing) {
  const char *error = pyalloc_plan(mask, forward);
  if (!error && *mask && pyalloc_debug_hooks_in_chain(tracing))
    error = "CPython's debug hooks are installed (PYTHONMALLOC=debug, -X dev ..., found on top or "
            "beneath tracemalloc); a late install over them is not supported: run nsalloc-python, "
            "which keeps them on top of its copy";
  return error;
}

/* Install, with tracemalloc stopped around it when it traces. */
static PyObject *install_around_tracemalloc(PyObject *tracemalloc, bool tracing, unsigned mask,
                                            bool forward) {
  long frames = tracing ? tracemalloc_stop(tracemalloc) : 0;
  if (frames < 0) return NULL;
  const char *error = pyalloc_install(mask, forward);
  if (frames > 0) {
    PyObject *restarted = PyObject_CallMethod(tracemalloc, "start", "l", frames);
    if (!restarted) return NULL;
    Py_DECREF(restarted);
  }
  if (error) return PyErr_Format(PyExc_RuntimeError, "nsalloc.install: %s", error);
  Py_RETURN_NONE;
}

static PyObject *install(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  static char *keywords[] = {"domains", "forward", NULL};
  PyObject *names = NULL;
  int forward = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$p:install", keywords, &names, &forward))
    return NULL;
  unsigned mask = PYALLOC_ALL_DOMAINS;
  if (names && !mask_from_names(names, &mask)) return NULL;
  PyObject *tracemalloc = PyImport_ImportModule("_tracemalloc");
  if (!tracemalloc) return NULL;
  int tracing = tracemalloc_tracing(tracemalloc);
  /* Everything that can refuse is checked before tracemalloc is touched:
   * restarting it drops its traces. mask 0: installed everywhere asked. */
  const char *error = tracing < 0 ? NULL : refusal(&mask, forward, tracing);
  PyObject *result = tracing < 0 ? NULL
                     : error     ? PyErr_Format(PyExc_RuntimeError, "nsalloc.install: %s", error)
                     : mask      ? install_around_tracemalloc(tracemalloc, tracing, mask, forward)
                                 : Py_NewRef(Py_None);
  Py_DECREF(tracemalloc);
  return result;
}

static PyObject *installed(PyObject *module, PyObject *unused) {
  (void)module, (void)unused;
  unsigned serving = pyalloc_serving();
  PyObject *names = PyList_New(0);
  for (int id = 0; names && id < PYALLOC_DOMAIN_COUNT; id++) {
    if (!(serving & PYALLOC_DOMAIN_BIT(id))) continue;
    PyObject *name = PyUnicode_FromString(pyalloc_domain_name((PyMemAllocatorDomain)id));
    if (!name || PyList_Append(names, name) < 0) Py_CLEAR(names);
    Py_XDECREF(name);
  }
  PyObject *tuple = names ? PyList_AsTuple(names) : NULL;
  Py_XDECREF(names);
  return tuple;
}

/* Set dict[key] = value (a new reference, consumed); false on error. */
static bool put(PyObject *dict, const char *key, PyObject *value) {
  bool ok = value && PyDict_SetItemString(dict, key, value) == 0;
  Py_XDECREF(value);
  return ok;
}

static PyObject *copy_stats_dict(const nsalloc_stats_t *s) {
  PyObject *dict = PyDict_New();
  if (dict && put(dict, "in_use_bytes", PyLong_FromSize_t(s->in_use_bytes)) &&
      put(dict, "in_use_blocks", PyLong_FromSize_t(s->in_use_blocks)) &&
      put(dict, "page_bytes", PyLong_FromSize_t(s->page_bytes)) &&
      put(dict, "peak_page_bytes", PyLong_FromSize_t(s->peak_page_bytes)) &&
      put(dict, "committed_bytes", PyLong_FromSize_t(s->committed_bytes)) &&
      put(dict, "reserved_bytes", PyLong_FromSize_t(s->reserved_bytes)) &&
      put(dict, "segments", PyLong_FromSize_t(s->segments)) &&
      put(dict, "heaps", PyLong_FromSize_t(s->heaps)) &&
      put(dict, "foreign_pointers", PyLong_FromUnsignedLongLong(s->foreign_pointers)) &&
      put(dict, "forwarded", PyLong_FromUnsignedLongLong(s->forwarded)) &&
      put(dict, "invalid_pointers", PyLong_FromUnsignedLongLong(s->invalid_pointers)))
    return dict;
  Py_XDECREF(dict);
  return NULL;
}

static PyObject *domain_stats_dict(PyMemAllocatorDomain id) {
  pyalloc_domain_stats_t s;
  pyalloc_domain_stats(id, &s);
  PyObject *dict = PyDict_New();
  if (dict && put(dict, "installed", PyBool_FromLong(s.installed)) &&
      put(dict, "forwarded_frees", PyLong_FromUnsignedLongLong(s.forwarded_frees)) &&
      put(dict, "forwarded_reallocs", PyLong_FromUnsignedLongLong(s.forwarded_reallocs)))
    return dict;
  Py_XDECREF(dict);
  return NULL;
}

static PyObject *stats(PyObject *module, PyObject *unused) {
  (void)module, (void)unused;
  nsalloc_stats_t copy;
  nsalloc_stats(&copy);
  PyObject *dict = PyDict_New();
  bool ok = dict && put(dict, "copy", copy_stats_dict(&copy));
  for (int id = 0; ok && id < PYALLOC_DOMAIN_COUNT; id++)
    ok = put(dict, pyalloc_domain_name((PyMemAllocatorDomain)id),
             domain_stats_dict((PyMemAllocatorDomain)id));
  if (ok) return dict;
  Py_XDECREF(dict);
  return NULL;
}

static PyObject *owns(PyObject *module, PyObject *address) {
  (void)module;
  void *p = PyLong_AsVoidPtr(address);
  if (!p && PyErr_Occurred()) return NULL;
  return PyBool_FromLong(nsalloc_owns(p));
}

static PyMethodDef methods[] = {
    {"install", (PyCFunction)(void (*)(void))install, METH_VARARGS | METH_KEYWORDS,
     "install(domains=('raw', 'mem', 'obj'), *, forward=True)\n--\n\n"
     "Install this module's private nsalloc copy into the given CPython allocator domains\n"
     "(a name or a sequence of names), wrapping the current allocators: blocks allocated\n"
     "before are handed back to them. Domains already installed are left as they are.\n"
     "Refused (RuntimeError) under CPython's debug hooks.\n"
     "forward=False hands every block to the copy (a diagnostic: foreign blocks then meet\n"
     "the copy's foreign policy, abort by default). Install once, early, from one thread."},
    {"installed", installed, METH_NOARGS,
     "The domains this copy is installed in and still serves (a new block there comes from\n"
     "the copy, whatever wraps it)."},
    {"stats", stats, METH_NOARGS,
     "Statistics: 'copy' (the whole private copy: bytes and blocks in use, peak page bytes,\n"
     "foreign pointers forwarded...) and per domain ('raw', 'mem', 'obj') the foreign\n"
     "blocks forwarded to the allocator it wrapped."},
    {"owns", owns, METH_O,
     "owns(address) -> bool: does the address lie in memory of this copy? Never reads it."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = MODULE_NAME,
    .m_doc = "nsalloc, a private allocator copy, as CPython's memory allocator.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC NSALLOC_CAT(PyInit_, NSALLOC_PY_MODULE)(void) {
  PyObject *module = PyModule_Create(&module_def);
  if (module && (PyModule_AddStringConstant(module, "version", nsalloc_version()) < 0 ||
                 PyModule_AddStringConstant(module, "prefix", nsalloc_prefix()) < 0))
    Py_CLEAR(module);
  return module;
}
