/*
 * Owner changes as an unprivileged user: the suite (run as root in CI) runs itself again under
 * util-linux's setpriv as nobody (--reuid/--regid 65534, no supplementary groups, no capabilities
 * kept) with "--unprivileged <file>", and that child asks every backend to give a file owned by root
 * to root, by path and by handle: POSIX says EPERM (not the file's owner, no CAP_CHOWN), which is
 * PermissionDenied (Dir.SetFileOwnerError / File.SetOwnerError). The parent test checks the child's
 * exit status. Linux only, built natively (setpriv execs the suite again); skips, saying why, when not root or setpriv
 * is missing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "os_helpers.h"

#include "asserts.h"

#if defined(CIO_OS_LINUX)
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SETPRIV "/usr/bin/setpriv"

static char self_path[512];

/* The child's checks on one Io: 0 when both calls say PermissionDenied. */
static int unprivileged_checks(cio_io io, const char *file)
{
    int bad = 0;
    cio_err e = cio_dir_set_file_owner(io, cio_dir_cwd(), file, 0, 0, 0);
    if (e != CIO_E_PERMISSION_DENIED) {
        fprintf(stderr, "set_file_owner as nobody: %s, want PermissionDenied\n", cio_err_name(e));
        bad = 1;
    }
    static const cio_open_file_options rw = {CIO_OPEN_READ_WRITE, false, false};
    cio_file f;
    e = cio_dir_open_file(io, cio_dir_cwd(), file, &rw, &f);
    if (e != CIO_OK) {
        fprintf(stderr, "open as nobody: %s\n", cio_err_name(e));
        return 1;
    }
    e = cio_file_set_owner(io, f, 0, 0);
    if (e != CIO_E_PERMISSION_DENIED) {
        fprintf(stderr, "file_set_owner as nobody: %s, want PermissionDenied\n", cio_err_name(e));
        bad = 1;
    }
    cio_file_close(io, f);
    return bad;
}

static int unprivileged_child(const char *file)
{
    if (geteuid() == 0)
        return 3; /* setpriv did not drop root */
    int bad = 0;
    cio_threaded *t = NULL;
    if (cio_threaded_create(NULL, &t) != CIO_OK)
        return 2;
    bad |= unprivileged_checks(cio_threaded_io(t), file);
    cio_threaded_destroy(t);
#if CIO_HAVE_EVENTED
    cio_evented *ev = NULL;
    if (cio_evented_create(NULL, &ev) != CIO_OK)
        return 2;
    bad |= unprivileged_checks(cio_evented_io(ev), file) << 1;
    cio_evented_destroy(ev);
#endif
    return bad;
}

static void test_owner_unprivileged(void **state)
{
    (void)cio_test_io(state); /* the child makes its own instances of both backends */
    if (geteuid() != 0)
        CIO_SKIP("not root: the unprivileged run needs root to drop to nobody with setpriv");
    CIO_NEED_TOOL(access(SETPRIV, X_OK) == 0, "no " SETPRIV " (util-linux) to run the unprivileged child");
    char dir[300];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-test-owner"));
    assert_int_equal(chmod(dir, 0755), 0);
    char file[400];
    snprintf(file, sizeof file, "%s/root-file", dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(chmod(file, 0666), 0); /* nobody may open it read-write, not chown it */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(SETPRIV, SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", self_path,
              "--unprivileged", file, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    unlink(file);
    rmdir(dir);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("the unprivileged child exited %d (1: Threaded, 2: Evented wrong; 3: still root; 127: no exec)",
                 WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--unprivileged") == 0)
        return unprivileged_child(argv[2]);
    if (realpath(argv[0], self_path) == NULL)
        snprintf(self_path, sizeof self_path, "%s", argv[0]);
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_owner_unprivileged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
