/**
 * @file
 * cio/spawn.h: spawn sites. Included at the end of cio/io.h (kept apart for size); part of <cio.h>.
 *
 * cio_async, cio_concurrent, cio_group_async and cio_group_concurrent are also macros that call the
 * _at form below with the "file:line" of the call (CIO_SPAWN_SITE), so that the diagnostics that
 * name a task (a stack overflow in it, a destroy that finds it stuck) can say where it was spawned.
 * The functions themselves exist too: take their address, or write `(cio_async)(...)`, to call one
 * without a site; define CIO_NO_SPAWN_SITE before including cio.h to turn the macros off. Plain
 * C11 (__FILE__ and __LINE__, variadic macros), no extension.
 */
#ifndef CIO_SPAWN_H
#define CIO_SPAWN_H

#include <stddef.h>

#include "cio/io.h"

#ifdef __cplusplus
extern "C" {
#endif
/** "file:line" of the place it is expanded at (a string literal). */
#define CIO_SPAWN_SITE __FILE__ ":" CIO__SPAWN_STR(__LINE__)
/** @cond internal */
#define CIO__SPAWN_STR(x) CIO__SPAWN_STR2(x)
#define CIO__SPAWN_STR2(x) #x
/** @endcond */
/**
 * cio_async, recording where it was called from.
 * @param site "file:line" of the spawn (a string that outlives the task), or NULL: unknown
 * @param io the Io
 * @param fn the task
 * @param context the bytes copied for the task (may be NULL when context_size is 0)
 * @param context_size their length
 * @return the future, as cio_async.
 * @cancellation no
 */
cio_future cio_async_at(const char *site, cio_io io, cio_task_fn fn, const void *context, size_t context_size);
/**
 * cio_concurrent, recording where it was called from.
 * @param site "file:line" of the spawn (a string that outlives the task), or NULL: unknown
 * @param io the Io
 * @param fn the task
 * @param context the bytes copied for the task (may be NULL when context_size is 0)
 * @param context_size their length
 * @param[out] out the future; on error an empty future
 * @return #CIO_OK, or an error of ConcurrentError \errset_concurrent
 * @cancellation no
 */
cio_err cio_concurrent_at(const char *site, cio_io io, cio_task_fn fn, const void *context, size_t context_size,
                          cio_future *out);
/**
 * cio_group_async, recording where it was called from. Never fails.
 * @param site "file:line" of the spawn (a string that outlives the task), or NULL: unknown
 * @param io the Io
 * @param group the group
 * @param fn the task
 * @param context the bytes copied for the task
 * @param context_size their length
 * @cancellation no
 */
void cio_group_async_at(const char *site, cio_io io, cio_group *group, cio_task_fn fn, const void *context,
                        size_t context_size);
/**
 * cio_group_concurrent, recording where it was called from.
 * @param site "file:line" of the spawn (a string that outlives the task), or NULL: unknown
 * @param io the Io
 * @param group the group
 * @param fn the task
 * @param context the bytes copied for the task
 * @param context_size their length
 * @return #CIO_OK, or an error of ConcurrentError \errset_concurrent
 * @cancellation no
 */
cio_err cio_group_concurrent_at(const char *site, cio_io io, cio_group *group, cio_task_fn fn, const void *context,
                                size_t context_size);
#ifdef __cplusplus
}
#endif

#ifndef CIO_NO_SPAWN_SITE
/** @cond internal */
#define cio_async(...) cio_async_at(CIO_SPAWN_SITE, __VA_ARGS__)
#define cio_concurrent(...) cio_concurrent_at(CIO_SPAWN_SITE, __VA_ARGS__)
#define cio_group_async(...) cio_group_async_at(CIO_SPAWN_SITE, __VA_ARGS__)
#define cio_group_concurrent(...) cio_group_concurrent_at(CIO_SPAWN_SITE, __VA_ARGS__)
/** @endcond */
#endif

#endif /* CIO_SPAWN_H */
