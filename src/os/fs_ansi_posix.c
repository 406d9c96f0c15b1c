/*
 * ANSI escape codes on POSIX and WASI: a terminal takes them as it is (there is no mode to turn on),
 * so both questions are isatty's. The call cannot block and runs outside the cancellation bracket;
 * its "no" (ENOTTY, EINVAL) is an answer, EBADF (a handle that is not open) the caller's mistake.
 * cio__env_set (cio_tty_config_detect's NO_COLOR and CLICOLOR_FORCE) reads `environ` itself.
 */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include "cio/fs.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

extern char **environ;

bool cio__env_set(const char *name)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        size_t i = 0;
        while (name[i] != '\0' && (*e)[i] == name[i])
            i++;
        if (name[i] == '\0' && (*e)[i] == '=')
            return (*e)[i + 1] != '\0';
    }
    return false;
}

/* Whether fd is a terminal; InvalidArgument for a handle that is not open. */
static cio_err ansi_tty(int fd, bool *out)
{
    errno = 0;
    *out = CIO__SYS(isatty, ansi_tty)(fd) == 1;
    return !*out && errno == EBADF ? CIO_E_INVALID_ARGUMENT : CIO_OK;
}

cio_err cio__os_file_supports_ansi_escape_codes(void *ud, cio_file file, bool *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return ansi_tty(file.handle, out);
}

cio_err cio__os_file_enable_ansi_escape_codes(void *ud, cio_file file)
{
    (void)ud;
    bool tty;
    cio_err err = ansi_tty(file.handle, &tty);
    if (err == CIO_OK && !tty)
        err = CIO_E_NOT_TERMINAL_DEVICE;
    return CIO__IN_SET(file_enable_ansi_escape_codes, err);
}
