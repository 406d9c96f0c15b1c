/*
 * The public process functions (cio/process.h): argument checks, then the backend's slot; debug
 * builds check each result against the slot's error set. No state.
 */
#include <stddef.h>

#include "cio/process.h"
#include "internal.h"

cio_err cio_process_spawn(cio_io io, const cio_spawn_options *options, cio_child *out)
{
    CIO__REQUIRE(options, out);
    return CIO__IN_SET(process_spawn, CIO__VT(io)->process_spawn(io.userdata, options, out));
}

cio_err cio_process_spawn_path(cio_io io, cio_dir dir, const cio_spawn_options *options, cio_child *out)
{
    CIO__REQUIRE(options, out);
    return CIO__IN_SET(process_spawn, CIO__VT(io)->process_spawn_path(io.userdata, dir, options, out));
}

cio_err cio_child_wait(cio_io io, cio_child *child, cio_term *term)
{
    CIO__REQUIRE(child, term);
    if (child->id <= 0) /* waited for already, or never spawned: a clear error */
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(process_wait, CIO__VT(io)->child_wait(io.userdata, child, term));
}

void cio_child_kill(cio_io io, cio_child *child)
{
    if (child == NULL || child->id <= 0)
        return;
    CIO__VT(io)->child_kill(io.userdata, child);
}

cio_err cio_process_replace(cio_io io, const cio_spawn_options *options)
{
    CIO__REQUIRE(options);
    return CIO__IN_SET(process_replace, CIO__VT(io)->process_replace(io.userdata, options));
}

cio_err cio_process_replace_path(cio_io io, cio_dir dir, const cio_spawn_options *options)
{
    CIO__REQUIRE(options);
    return CIO__IN_SET(process_replace, CIO__VT(io)->process_replace_path(io.userdata, dir, options));
}

cio_err cio_process_current_path(cio_io io, char *buf, size_t len, size_t *out_len)
{
    CIO__REQUIRE(buf);
    return CIO__IN_SET(process_current_path, CIO__VT(io)->process_current_path(io.userdata, buf, len, out_len));
}

cio_err cio_process_set_current_dir(cio_io io, cio_dir dir)
{
    return CIO__IN_SET(process_set_current_dir, CIO__VT(io)->process_set_current_dir(io.userdata, dir));
}

cio_err cio_process_set_current_path(cio_io io, const char *path)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(process_set_current_path, CIO__VT(io)->process_set_current_path(io.userdata, path));
}

cio_err cio_lock_stderr(cio_io io)
{
    return CIO__IN_SET(cancelable, CIO__VT(io)->lock_stderr(io.userdata));
}

bool cio_try_lock_stderr(cio_io io)
{
    return CIO__VT(io)->try_lock_stderr(io.userdata);
}

void cio_unlock_stderr(cio_io io)
{
    CIO__VT(io)->unlock_stderr(io.userdata);
}
