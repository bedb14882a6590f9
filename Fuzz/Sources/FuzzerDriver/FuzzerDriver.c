#include "FuzzerDriver.h"

// Provided by libFuzzer (linked by -sanitize=fuzzer).
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test)(const uint8_t *data, size_t size));

int anydefaults_fuzz_main(int argc, char **argv, int (*test)(const uint8_t *data, size_t size)) {
    return LLVMFuzzerRunDriver(&argc, &argv, test);
}
