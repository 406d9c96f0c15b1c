/*
 * cp -a with cio: copies a directory tree (contents, permission bits, times, symbolic links as
 * links), up to 16 files at once on a backend with concurrency, each file through an atomic file
 * (a failed or interrupted copy leaves no partial file), then prints what the copy holds.
 *
 *     ./copy_tree SRC DST            # Threaded backend
 *     ./copy_tree SRC DST --replace  # replace files that exist in DST
 */
#include <stdio.h>
#include <string.h>

#include <cio.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s SRC DST [--replace]\n", argv[0]);
        return 2;
    }
    cio_threaded *threaded;
    cio_err err = cio_threaded_create(NULL, &threaded);
    if (err != CIO_OK) {
        fprintf(stderr, "cio_threaded_create: %s\n", cio_err_name(err));
        return 1;
    }
    cio_io io = cio_threaded_io(threaded);
    cio_copy_tree_options options = {.concurrency = 16, .replace = argc > 3 && strcmp(argv[3], "--replace") == 0};
    cio_timestamp start = cio_now(io, CIO_CLOCK_AWAKE);
    err = cio_dir_copy_tree(io, cio_dir_cwd(), argv[1], cio_dir_cwd(), argv[2], &options);
    double seconds = (double)(cio_now(io, CIO_CLOCK_AWAKE).ns - start.ns) / 1e9;
    cio_threaded_destroy(threaded);
    if (err != CIO_OK) {
        fprintf(stderr, "copy_tree %s -> %s: %s (%s)\n", argv[1], argv[2], cio_err_name(err), cio_err_description(err));
        return 1;
    }
    printf("copied %s to %s in %.3f s\n", argv[1], argv[2], seconds);
    return 0;
}
