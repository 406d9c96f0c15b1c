/*
 * cio/atomic.h — CIO_ATOMIC(T): the atomic type the public structs and futex functions use, spelt so
 * that both C11 and C++ (17 and later) compile the headers.
 *
 * In C it is _Atomic(T). In C++ it is std::atomic<T>, which has the same size, alignment and
 * representation as _Atomic(T) for the integer types cio uses (uint32_t, uintptr_t) wherever they
 * are lock-free, as they are on every target cio supports; the static_asserts below check it at
 * the C++ user's compile time. A C++ program therefore shares cio_mutex, cio_group, … with the
 * library byte for byte, and passes &m.state to cio_futex_wait as a `const std::atomic<uint32_t> *`.
 */
#ifndef CIO_ATOMIC_H
#define CIO_ATOMIC_H

#include <stdint.h>

#ifdef __cplusplus
#include <atomic>

#define CIO_ATOMIC(T) std::atomic<T>

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  alignof(std::atomic<uint32_t>) == alignof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
              "cio: std::atomic<uint32_t> must be laid out as C's _Atomic(uint32_t)");
static_assert(sizeof(std::atomic<uintptr_t>) == sizeof(uintptr_t) &&
                  alignof(std::atomic<uintptr_t>) == alignof(uintptr_t) && std::atomic<uintptr_t>::is_always_lock_free,
              "cio: std::atomic<uintptr_t> must be laid out as C's _Atomic(uintptr_t)");
#else
#define CIO_ATOMIC(T) _Atomic(T)
#endif

#endif /* CIO_ATOMIC_H */
