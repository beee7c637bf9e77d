/*
 * tls_relocs.c - classifying TLS relocations (x86-64 and AArch64).
 */
#include "tls_relocs.h"

#include "elf_facts.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

typedef struct reloc_model {
  unsigned type;
  unsigned model;
} reloc_model;

static const reloc_model x86_64_models[] = {
    {R_X86_64_GOTPC32_TLSDESC, TLS_MODEL_GNU2},  {R_X86_64_TLSDESC_CALL, TLS_MODEL_GNU2},
    {R_X86_64_TLSDESC, TLS_MODEL_GNU2},          {R_X86_64_TLSGD, TLS_MODEL_GLOBAL_DYNAMIC},
    {R_X86_64_TLSLD, TLS_MODEL_GLOBAL_DYNAMIC},  {R_X86_64_DTPMOD64, TLS_MODEL_GLOBAL_DYNAMIC},
    {R_X86_64_GOTTPOFF, TLS_MODEL_INITIAL_EXEC}, {R_X86_64_TPOFF64, TLS_MODEL_INITIAL_EXEC},
    {R_X86_64_TPOFF32, TLS_MODEL_LOCAL_EXEC},
};

static const reloc_model aarch64_models[] = {
    {R_AARCH64_TLSDESC_ADR_PAGE21, TLS_MODEL_GNU2},
    {R_AARCH64_TLSDESC_CALL, TLS_MODEL_GNU2},
    {R_AARCH64_TLSDESC, TLS_MODEL_GNU2},
    {R_AARCH64_TLSGD_ADR_PAGE21, TLS_MODEL_GLOBAL_DYNAMIC},
    {R_AARCH64_TLS_DTPMOD, TLS_MODEL_GLOBAL_DYNAMIC},
    {R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21, TLS_MODEL_INITIAL_EXEC},
    {R_AARCH64_TLS_TPREL, TLS_MODEL_INITIAL_EXEC},
    {R_AARCH64_TLSLE_ADD_TPREL_HI12, TLS_MODEL_LOCAL_EXEC},
    {R_AARCH64_TLSLE_ADD_TPREL_LO12_NC, TLS_MODEL_LOCAL_EXEC},
};

static unsigned lookup(const reloc_model *table, size_t count, unsigned type) {
  for (size_t i = 0; i < count; i++)
    if (table[i].type == type) return table[i].model;
  return 0;
}

unsigned tls_model_of_relocation(unsigned machine, unsigned type) {
  if (machine == EM_X86_64)
    return lookup(x86_64_models, sizeof x86_64_models / sizeof *x86_64_models, type);
  if (machine == EM_AARCH64)
    return lookup(aarch64_models, sizeof aarch64_models / sizeof *aarch64_models, type);
  return 0;
}

const char *tls_models_name(unsigned models, char *buffer, unsigned size) {
  static const char *const names[] = {"gnu2", "global-dynamic", "initial-exec", "local-exec"};
  buffer[0] = '\0';
  for (unsigned bit = 0; bit < 4; bit++) {
    if (!(models & (1u << bit))) continue;
    size_t used = strlen(buffer);
    snprintf(buffer + used, size - used, "%s%s", used ? "+" : "", names[bit]);
  }
  if (!buffer[0]) snprintf(buffer, size, "none");
  return buffer;
}
