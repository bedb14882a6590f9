#ifndef ANYDEFAULTS_FUZZER_DRIVER_H
#define ANYDEFAULTS_FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with the command-line arguments on `test` (LLVMFuzzerRunDriver). SwiftPM gives
/// an executable a `main` of its own, so libFuzzer's `main` cannot be used; this is called from it.
int anydefaults_fuzz_main(int argc, char **argv, int (*test)(const uint8_t *data, size_t size));

#endif
