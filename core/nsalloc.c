/*
 * nsalloc.c - the whole core as one translation unit.
 *
 * Compiling the core as a single unit lets every internal function and
 * variable be `static`, so a build defines no names except the prefixed API
 * (see internal.h). The build also concatenates these files into the
 * amalgamation (nsalloc.c + nsalloc.h) for projects that do not use CMake.
 */
/* POSIX, BSD and GNU declarations (mmap flags, madvise, clock_gettime,
 * dladdr, process_vm_readv) even under -std=c11: this must come before the
 * first system header. */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "internal.h"

/* The platform seam (prim/prim.h): one implementation per platform family. */
#if defined(_WIN32)
#include "prim/windows.c"
#else
#include "prim/unix.c"
#endif

#include "size_class.c"
#include "os.c"
#include "segment_map.c"
#include "signature.c"
#include "policy.c"
#include "options.c"
#include "page.c"
#include "segment.c"
#include "segment_fill.c"
#include "purger.c"
#include "locate.c"
#include "heap.c"
#include "free.c"
#include "alloc.c"
#include "stats.c"
#include "init.c"
