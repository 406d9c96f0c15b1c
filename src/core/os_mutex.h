/*
 * The library's internal mutexes and condition variables (the pools', the loops', the stack
 * keepers'): pthread's on POSIX, the system's slim reader/writer lock and condition variable on
 * Windows. The one place that chooses.
 *
 * Why not winpthreads' on Windows: its mutex makes an event handle the first time it is contended
 * and keeps it until the mutex is destroyed, and its condition variable is two semaphores. Those
 * handles come and go with load, not with what a program does: a leak check that counts the
 * process's handles around an operation saw one more after a case under load (CI's Windows fault
 * suites, twice), and every such lock costs kernel objects. SRWLOCK and CONDITION_VARIABLE are a
 * pointer each, need no handle, never fail to initialize and need no destroy.
 *
 * Invariants: the mutexes are not recursive and are unlocked by the thread that locked them (both
 * implementations require it); cio__cv_timedwait takes a CLOCK_REALTIME deadline, as
 * pthread_cond_timedwait does, and says whether it passed; a wait may end early (spurious
 * wake-up): callers wait in a loop on their condition.
 */
#ifndef CIO_CORE_OS_MUTEX_H
#define CIO_CORE_OS_MUTEX_H

#include <stdbool.h>
#include <time.h>

#include "cio/target.h"

#if defined(CIO_OS_WINDOWS)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

typedef SRWLOCK cio__mutex;
typedef CONDITION_VARIABLE cio__cond;
#define CIO__MUTEX_INIT SRWLOCK_INIT

static inline void cio__mu_init(cio__mutex *m)
{
    InitializeSRWLock(m);
}

static inline void cio__mu_destroy(cio__mutex *m)
{
    (void)m;
}

static inline void cio__mu_lock(cio__mutex *m)
{
    AcquireSRWLockExclusive(m);
}

static inline bool cio__mu_trylock(cio__mutex *m)
{
    return TryAcquireSRWLockExclusive(m) != 0;
}

static inline void cio__mu_unlock(cio__mutex *m)
{
    ReleaseSRWLockExclusive(m);
}

static inline void cio__cv_init(cio__cond *c)
{
    InitializeConditionVariable(c);
}

static inline void cio__cv_destroy(cio__cond *c)
{
    (void)c;
}

static inline void cio__cv_wait(cio__cond *c, cio__mutex *m)
{
    (void)SleepConditionVariableSRW(c, m, INFINITE, 0);
}

/* true: the deadline (CLOCK_REALTIME) has passed. The wait is in whole milliseconds, rounded up. */
static inline bool cio__cv_timedwait(cio__cond *c, cio__mutex *m, const struct timespec *deadline)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0)
        return true;
    long long ns = (long long)(deadline->tv_sec - now.tv_sec) * 1000000000LL + (deadline->tv_nsec - now.tv_nsec);
    if (ns <= 0)
        return true;
    long long ms = (ns + 999999) / 1000000;
    DWORD wait = ms >= (long long)INFINITE ? INFINITE - 1 : (DWORD)ms;
    if (SleepConditionVariableSRW(c, m, wait, 0))
        return false;
    return GetLastError() == ERROR_TIMEOUT;
}

static inline void cio__cv_signal(cio__cond *c)
{
    WakeConditionVariable(c);
}

static inline void cio__cv_broadcast(cio__cond *c)
{
    WakeAllConditionVariable(c);
}
#else
#include <errno.h>
#include <pthread.h>

typedef pthread_mutex_t cio__mutex;
typedef pthread_cond_t cio__cond;
#define CIO__MUTEX_INIT PTHREAD_MUTEX_INITIALIZER

static inline void cio__mu_init(cio__mutex *m)
{
    (void)pthread_mutex_init(m, NULL); /* default attributes: fails only where EINVAL could, never here */
}

static inline void cio__mu_destroy(cio__mutex *m)
{
    (void)pthread_mutex_destroy(m);
}

static inline void cio__mu_lock(cio__mutex *m)
{
    (void)pthread_mutex_lock(m);
}

static inline bool cio__mu_trylock(cio__mutex *m)
{
    return pthread_mutex_trylock(m) == 0;
}

static inline void cio__mu_unlock(cio__mutex *m)
{
    (void)pthread_mutex_unlock(m);
}

static inline void cio__cv_init(cio__cond *c)
{
    (void)pthread_cond_init(c, NULL);
}

static inline void cio__cv_destroy(cio__cond *c)
{
    (void)pthread_cond_destroy(c);
}

static inline void cio__cv_wait(cio__cond *c, cio__mutex *m)
{
    (void)pthread_cond_wait(c, m);
}

/* true: the deadline (CLOCK_REALTIME) has passed. */
static inline bool cio__cv_timedwait(cio__cond *c, cio__mutex *m, const struct timespec *deadline)
{
    return pthread_cond_timedwait(c, m, deadline) == ETIMEDOUT;
}

static inline void cio__cv_signal(cio__cond *c)
{
    (void)pthread_cond_signal(c);
}

static inline void cio__cv_broadcast(cio__cond *c)
{
    (void)pthread_cond_broadcast(c);
}
#endif

#endif /* CIO_CORE_OS_MUTEX_H */
