/*
 * The article's example: saveFile writes one file; saveData saves two with cio_async, so on a
 * backend with concurrency both are written at once, and on one without they are written in turn.
 * The same code either way: asynchrony is the caller's choice of cio_io.
 *
 *     ./save_data            # Threaded backend
 *     ./save_data --inline   # Threaded with async limit 0: every async runs inline
 */
#include <stdio.h>
#include <string.h>

#include <cio.h>

static cio_err save_file(cio_io io, const char *data, size_t len, const char *name)
{
    cio_file file;
    cio_err err = cio_dir_create_file(io, cio_dir_cwd(), name, NULL, &file);
    if (err != CIO_OK)
        return err;
    err = cio_file_write_all(io, file, data, len);
    cio_file_close(io, file);
    return err;
}

typedef struct save_args {
    cio_io io;
    const char *data;
    size_t len;
    const char *name;
} save_args;

static cio_err save_file_task(void *context)
{
    save_args *a = (save_args *)context;
    return save_file(a->io, a->data, a->len, a->name);
}

static cio_err save_data(cio_io io, const char *data, size_t len)
{
    save_args a = {io, data, len, "saveA.txt"};
    save_args b = {io, data, len, "saveB.txt"};
    cio_future fa = cio_async(io, save_file_task, &a, sizeof a);
    cio_future fb = cio_async(io, save_file_task, &b, sizeof b);

    cio_err ra = cio_await(io, &fa);
    cio_err rb = cio_await(io, &fb);
    if (ra != CIO_OK)
        return ra;
    if (rb != CIO_OK)
        return rb;

    static const char done[] = "save complete\n";
    return cio_file_write_all(io, cio_file_stdout(), done, sizeof done - 1);
}

int main(int argc, char **argv)
{
    cio_threaded *threaded;
    cio_err err = cio_threaded_create(NULL, &threaded);
    if (err != CIO_OK) {
        fprintf(stderr, "cio_threaded_create: %s\n", cio_err_name(err));
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--inline") == 0)
        cio_threaded_set_async_limit(threaded, 0);
    cio_io io = cio_threaded_io(threaded);
    static const char data[] = "hello from cio\n";
    err = save_data(io, data, sizeof data - 1);
    cio_threaded_destroy(threaded);
    if (err != CIO_OK) {
        fprintf(stderr, "save_data: %s (%s)\n", cio_err_name(err), cio_err_description(err));
        return 1;
    }
    return 0;
}
