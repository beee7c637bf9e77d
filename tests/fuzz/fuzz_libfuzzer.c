/* fuzz_libfuzzer.c - the libFuzzer entry point of the differential fuzzer. */
#include "engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  engine_run(data, size);
  return 0;
}
