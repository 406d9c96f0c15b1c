/*
 * A NULL where the API forbids one is a bug in the caller: debug builds assert (CIO__NULL_ARG in
 * src/core/internal.h), release builds (NDEBUG) return CIO_E_INVALID_ARGUMENT. The test programs
 * are built like the library, so
 *
 *     assert_null_arg(cio_dir_open_file(io, dir, NULL, NULL, &f));
 *
 * checks whichever applies: under NDEBUG the error; otherwise that the call aborts (a death test in
 * a forked child, its stderr silenced). Where there is no fork (WASI, Windows) a debug build skips
 * the call with a note: the assertion would end the test program.
 */
#ifndef CIO_TESTS_NULL_ARG_H
#define CIO_TESTS_NULL_ARG_H

#include "cio.h"

#if !defined(NDEBUG) && !defined(CIO_OS_WASI) && !defined(CIO_OS_WINDOWS)
#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CIO_NULL_ARG_DEATH 1
#endif

#if defined(NDEBUG)
#define assert_null_arg(call) assert_int_equal((call), CIO_E_INVALID_ARGUMENT)
#elif defined(CIO_NULL_ARG_DEATH)
/* `call` runs in a child whose stderr is /dev/null; it must die of SIGABRT (the assertion). */
#define assert_null_arg(call)                                                                  \
    do {                                                                                       \
        pid_t pid_ = fork();                                                                   \
        if (pid_ == 0) {                                                                       \
            signal(SIGABRT, SIG_DFL);                                                          \
            int null_ = open("/dev/null", O_WRONLY);                                           \
            if (null_ >= 0)                                                                    \
                dup2(null_, 2);                                                                \
            (void)(call);                                                                      \
            _exit(0);                                                                          \
        }                                                                                      \
        int st_ = 0;                                                                           \
        if (pid_ < 0 || waitpid(pid_, &st_, 0) != pid_ || !WIFSIGNALED(st_) || WTERMSIG(st_) != SIGABRT) \
            fail_msg("%s: expected the NULL-argument assertion of a debug build", #call);      \
    } while (0)
#else
#define assert_null_arg(call)                                                                  \
    do {                                                                                       \
        (void)sizeof(call); /* compiled, not run */                                            \
        print_message("      note: not run in a debug build here (no fork): %s\n", #call);      \
    } while (0)
#endif

#endif
