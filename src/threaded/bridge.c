/* src/threaded/bridge.h: the Threaded pieces the Evented backend's helper pool uses. */
#include "bridge.h"
#include "task.h"
#include "threaded.h"

bool cio__t_task_request_cancel(void *task)
{
    return cio__t_request_cancel((struct cio_any_future *)task);
}

bool cio__t_task_resignal(void *task)
{
    return cio__t_resignal((struct cio_any_future *)task);
}

bool cio__t_task_done(void *task)
{
    return atomic_load_explicit(&((struct cio_any_future *)task)->done, memory_order_acquire) == CIO__T_FINISHED;
}

cio_err cio__t_task_spawn(void *threaded, cio_task_fn fn, const void *ctx, size_t ctx_size, void **task)
{
    struct cio_any_future *f = NULL;
    cio_err err = cio__t_concurrent(threaded, fn, ctx, ctx_size, &f);
    *task = f;
    return err;
}

cio_err cio__t_task_await(void *threaded, void *task)
{
    return cio__t_await(threaded, (struct cio_any_future *)task);
}
