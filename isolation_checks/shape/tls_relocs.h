/*
 * tls_relocs.h - which TLS access model a relocation type implies.
 */
#ifndef ISO_TLS_RELOCS_H
#define ISO_TLS_RELOCS_H

/* A TLS_MODEL_* bit for a TLS relocation of machine `machine` (an EM_*
 * value), 0 for any other relocation. Covers object files (the code
 * sequences) and shared objects (the dynamic relocations). */
unsigned tls_model_of_relocation(unsigned machine, unsigned type);

/* "gnu2", "global-dynamic", "initial-exec", "local-exec", joined with '+';
 * "none" for 0. Returns `buffer`. */
const char *tls_models_name(unsigned models, char *buffer, unsigned size);

#endif
