// Tells ThreadSanitizer about the synchronization inside Swift's Synchronization.Mutex on Linux.
//
// Mutex's fast paths are inlined into the caller (compiled with -sanitize=thread), so TSan sees
// their atomic acquire and release. Its slow paths (_lockSlow, _tryLockSlow, _unlockSlow) live in
// libswiftSynchronization.so, which is not instrumented: a lock handed over through them (a spin
// in the library, or a futex wait) leaves TSan without the happens-before edge, and it reports
// races on data that the mutex does protect. This library, preloaded into the test process,
// interposes those three functions, calls the real ones, and adds the missing edge with TSan's
// own annotations on the mutex's address: release before a slow unlock, acquire after a slow
// lock. Nothing else changes; a real race still shows. Used by scripts/tsan (x86_64 Linux).
#define _GNU_SOURCE
#include <dlfcn.h>

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

static void no_annotation(void *address) { (void)address; }

// Hidden, so that the trampolines below reach them relative to the instruction pointer.
#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN void *anydefaults_real_lock_slow;
HIDDEN void *anydefaults_real_try_lock_slow;
HIDDEN void *anydefaults_real_unlock_slow;
HIDDEN void (*anydefaults_tsan_acquire)(void *) = no_annotation;
HIDDEN void (*anydefaults_tsan_release)(void *) = no_annotation;

__attribute__((constructor)) static void resolve(void) {
    anydefaults_real_lock_slow = dlsym(RTLD_NEXT, LOCK_SLOW);
    anydefaults_real_try_lock_slow = dlsym(RTLD_NEXT, TRY_LOCK_SLOW);
    anydefaults_real_unlock_slow = dlsym(RTLD_NEXT, UNLOCK_SLOW);
    // Processes without Swift's Synchronization (llvm-symbolizer, started by TSan, inherits
    // LD_PRELOAD) never call the trampolines; there is nothing to do in them.
    void *acquire = dlsym(RTLD_DEFAULT, "__tsan_acquire");
    void *release = dlsym(RTLD_DEFAULT, "__tsan_release");
    if (acquire && release) {
        anydefaults_tsan_acquire = (void (*)(void *))acquire;
        anydefaults_tsan_release = (void (*)(void *))release;
    }
}

// The Swift calling convention passes the borrowed _MutexHandle (the address of its lock word)
// in r13 (swiftself) and selfId in edi; r13 is callee-saved. The trampolines keep every argument
// register intact for the real function.
__asm__(
    ".text\n"
    ".globl \"" LOCK_SLOW "\"\n"
    ".type \"" LOCK_SLOW "\", @function\n"
    "\"" LOCK_SLOW "\":\n"
    "    pushq %r13\n"                               // keep the lock's address; aligns the stack
    "    callq *anydefaults_real_lock_slow(%rip)\n"
    "    popq %rdi\n"
    "    jmpq *anydefaults_tsan_acquire(%rip)\n"      // acquired: acquire(lock)

    ".globl \"" TRY_LOCK_SLOW "\"\n"
    ".type \"" TRY_LOCK_SLOW "\", @function\n"
    "\"" TRY_LOCK_SLOW "\":\n"
    "    pushq %r13\n"
    "    callq *anydefaults_real_try_lock_slow(%rip)\n"
    "    popq %rdi\n"
    "    testb %al, %al\n"
    "    jz 1f\n"
    "    pushq %rax\n"
    "    callq *anydefaults_tsan_acquire(%rip)\n"
    "    popq %rax\n"
    "1:  retq\n"

    ".globl \"" UNLOCK_SLOW "\"\n"
    ".type \"" UNLOCK_SLOW "\", @function\n"
    "\"" UNLOCK_SLOW "\":\n"
    "    pushq %r13\n"
    "    movq %r13, %rdi\n"
    "    callq *anydefaults_tsan_release(%rip)\n"    // about to release: release(lock)
    "    popq %r13\n"
    "    jmpq *anydefaults_real_unlock_slow(%rip)\n"
);
