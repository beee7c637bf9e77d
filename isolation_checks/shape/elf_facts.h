/*
 * elf_facts.h - what the build-shape rules need to know about one artifact,
 * read from its ELF structures through libelf (never by scraping tool output).
 *
 * A shared object is described by its dynamic symbol table (what the loader
 * can bind other modules to); a static archive or object file by the global
 * symbols of its members' symbol tables (what a link would put in the output).
 */
#ifndef ISO_ELF_FACTS_H
#define ISO_ELF_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TLS access models seen in an artifact's relocations (a bit each). */
enum {
  TLS_MODEL_GNU2 = 1u << 0,           /* TLS descriptors */
  TLS_MODEL_GLOBAL_DYNAMIC = 1u << 1, /* __tls_get_addr (global- or local-dynamic) */
  TLS_MODEL_INITIAL_EXEC = 1u << 2,   /* static TLS: an offset from the thread pointer */
  TLS_MODEL_LOCAL_EXEC = 1u << 3,     /* static TLS: the offset fixed at link time */
};

typedef struct shape_symbol {
  char *name;
  bool is_tls;
  bool is_exported; /* reachable from other modules: dynamic, or default visibility */
} shape_symbol;

#define SHAPE_MAX_ID_RECORDS    8
#define SHAPE_MAX_FIXED_OFFSETS 8

typedef struct shape_facts {
  bool is_shared_object; /* ET_DYN: the loader sees its dynamic symbols */
  shape_symbol *defined; /* defined global and weak symbols */
  size_t defined_count;
  bool static_tls_flag;                              /* DT_FLAGS has DF_STATIC_TLS */
  unsigned tls_models;                               /* TLS_MODEL_* bits */
  int64_t fixed_tp_offsets[SHAPE_MAX_FIXED_OFFSETS]; /* %fs:<constant> accesses in code */
  size_t fixed_tp_count;
  char *id_records[SHAPE_MAX_ID_RECORDS]; /* NSALLOC-ID strings found in data sections */
  size_t id_count;
} shape_facts;

/* Reads `path` (shared object, object file or ar archive of objects). Returns
 * NULL on success, else a static error description. */
const char *shape_facts_read(const char *path, shape_facts *out);
void shape_facts_free(shape_facts *facts);

/* Number of defined symbols other modules can bind to. */
size_t shape_exported_count(const shape_facts *facts);

#endif
