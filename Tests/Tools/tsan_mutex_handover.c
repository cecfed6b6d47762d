// Lets the thread sanitizer see a Swift `Mutex` change hands on Linux (make test-tsan preloads it).
//
// `Synchronization.Mutex` takes and gives up its lock with an atomic compare-and-swap, compiled into the
// caller, where the sanitizer sees it. When the lock is contended it goes through `_lockSlow` and
// `_unlockSlow` instead: priority-inheriting futex calls inside the Swift runtime, which is built
// without the sanitizer. There the kernel hands the lock from one thread to the next with no atomic
// operation the sanitizer can observe, so it reports every access the lock protects as a race, but only
// when two threads wanted the lock at once (two threads appending to one `Mutex<[Int]>`, each holding it
// for 50 µs, are reported on every run). These wrappers keep the runtime's functions and tell the sanitizer what they did:
// after `_lockSlow` returns the caller has acquired the lock's address, and before `_unlockSlow` it
// releases it, as the fast path's compare-and-swap on that same address does.
//
// Outside a sanitized process (the tools and servers the tests start inherit the preload too) the
// sanitizer's functions are absent and the wrappers only call through.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

// Swift passes a method's `self` (here the address of the mutex's atomic word) in the context register.
typedef __attribute__((swiftcall)) void (*LockSlow)(uint32_t threadID, __attribute__((swift_context)) void *handle);
typedef __attribute__((swiftcall)) void (*UnlockSlow)(__attribute__((swift_context)) void *handle);

__attribute__((swiftcall)) void lockSlow(uint32_t threadID, __attribute__((swift_context)) void *handle) __asm__(LOCK_SLOW);
__attribute__((swiftcall)) void unlockSlow(__attribute__((swift_context)) void *handle) __asm__(UNLOCK_SLOW);

__attribute__((swiftcall)) void lockSlow(uint32_t threadID, __attribute__((swift_context)) void *handle) {
    static LockSlow runtime;
    if (!runtime) runtime = (LockSlow)dlsym(RTLD_NEXT, LOCK_SLOW);
    runtime(threadID, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

__attribute__((swiftcall)) void unlockSlow(__attribute__((swift_context)) void *handle) {
    static UnlockSlow runtime;
    if (!runtime) runtime = (UnlockSlow)dlsym(RTLD_NEXT, UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(handle);
    runtime(handle);
}
