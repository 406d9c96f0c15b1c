/*
 * concurrent + cancel on a blocking read: a task blocks reading a pipe nobody writes to; the main
 * thread waits a little, then cancels it. The read is a real blocking syscall, interrupted by the
 * Threaded backend's cancel signal (on Windows: CancelSynchronousIo), and the task sees
 * CIO_E_CANCELED.
 *
 *     ./cancel_read
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

#include <cio.h>

typedef struct reader_args {
    cio_io io;
    cio_file file;
} reader_args;

static cio_err reader(void *context)
{
    reader_args *a = (reader_args *)context;
    char byte;
    size_t n = 0;
    return cio_file_read_streaming(a->io, a->file, &byte, 1, &n); /* blocks: nothing is written */
}

int main(void)
{
#if defined(_WIN32)
    HANDLE fds[2];
    if (!CreatePipe(&fds[0], &fds[1], NULL, 0)) {
        fprintf(stderr, "CreatePipe failed\n");
        return 1;
    }
#else
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        perror("pipe2");
        return 1;
    }
#endif
    cio_threaded *threaded;
    if (cio_threaded_create(NULL, &threaded) != CIO_OK)
        return 1;
    cio_io io = cio_threaded_io(threaded);

    reader_args args = {io, {fds[0]}};
    cio_future future;
    cio_err err = cio_concurrent(io, reader, &args, sizeof args, &future);
    if (err != CIO_OK) {
        fprintf(stderr, "cio_concurrent: %s\n", cio_err_name(err));
        return 1;
    }
    (void)cio_sleep(io, cio_timeout_ms(50));
    cio_timestamp before = cio_now(io, CIO_CLOCK_AWAKE);
    err = cio_cancel(io, &future);
    double ms = (double)(cio_now(io, CIO_CLOCK_AWAKE).ns - before.ns) / 1e6;
    printf("the blocked read returned %s, %.3f ms after cio_cancel\n", cio_err_name(err), ms);

    cio_threaded_destroy(threaded);
#if defined(_WIN32)
    CloseHandle(fds[0]);
    CloseHandle(fds[1]);
#else
    close(fds[0]);
    close(fds[1]);
#endif
    return err == CIO_E_CANCELED ? 0 : 1;
}
