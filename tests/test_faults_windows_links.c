/*
 * Fault injection at the Windows symbolic-link sites (src/os/fs_windows_links.c): the reparse data
 * buffer cio writes (FSCTL_SET_REPARSE_POINT) and reads (FSCTL_GET_REPARSE_POINT), the errors each
 * control answers, no memory for the buffers, and no half-made link left behind.
 *
 * Wine 8 makes no symbolic link (FSCTL_SET_REPARSE_POINT is STATUS_NOT_SUPPORTED, and no file is a
 * reparse point), so the data round trip is checked through the call table: a hook at the set site
 * keeps the bytes cio passes and answers success, and a hook at the get site hands bytes back (the
 * kept ones, or a mount point, or a tag cio does not know). Both hooks check the control code and
 * the buffer sizes. On Windows itself the same hooks run in front of NTFS.
 */
#include "faults.h"
#include "faults_windows.h"
#include "faults_fs.h"

#include "cio/ntapi.h"
#include "cio/ntstatus.h"

#define ST(x) ((int)(CIO_NTSTATUS_##x))

static unsigned char kept[CIO_NT_MAXIMUM_REPARSE_DATA_BUFFER_SIZE];
static uint32_t kept_len;

static int32_t keep_set(void *h, void *event, void *apc, void *ctx, cio_nt_io_status_block *iosb, uint32_t code,
                        void *in, uint32_t in_len, void *out, uint32_t out_len)
{
    (void)h, (void)event, (void)apc, (void)ctx, (void)out;
    if (code != CIO_NT_FSCTL_SET_REPARSE_POINT || in_len > sizeof kept || out_len != 0)
        return (int32_t)CIO_NTSTATUS_INVALID_PARAMETER;
    memcpy(kept, in, in_len);
    kept_len = in_len;
    iosb->Status = 0;
    iosb->Information = 0;
    return 0;
}

static int32_t give_kept(void *h, void *event, void *apc, void *ctx, cio_nt_io_status_block *iosb, uint32_t code,
                         void *in, uint32_t in_len, void *out, uint32_t out_len)
{
    (void)h, (void)event, (void)apc, (void)ctx, (void)in;
    if (code != CIO_NT_FSCTL_GET_REPARSE_POINT || in_len != 0 || out_len < CIO_NT_MAXIMUM_REPARSE_DATA_BUFFER_SIZE)
        return (int32_t)CIO_NTSTATUS_INVALID_PARAMETER;
    memcpy(out, kept, kept_len);
    iosb->Status = 0;
    iosb->Information = kept_len;
    return 0;
}

static uint16_t u16_at(size_t off)
{
    uint16_t v;
    memcpy(&v, kept + off, 2);
    return v;
}

/* The name at byte `off` (`len` bytes) of the kept PathBuffer (20: a symbolic link's), as ASCII. */
static void name_at(size_t at, uint16_t off, uint16_t len, char *out)
{
    size_t n = len / 2u;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)u16_at(at + off + 2 * i);
    out[n] = '\0';
}

/* Makes link `name` -> target through the set hook (an empty entry stays: the hook made no
 * reparse point), checks the kept data, reads it back through the get hook. */
static void round_trip(fx *f, const char *target, unsigned flags, const char *subst, const char *print,
                       uint32_t link_flags, const char *back)
{
    cio__sys_set(NtFsControlFile__win_set_reparse, keep_set);
    cio_err err = cio_dir_sym_link(f->io, f->dir, target, "new", flags);
    cio__sys_reset();
    assert_ok(err);
    uint32_t tag;
    memcpy(&tag, kept, 4);
    assert_int_equal(tag, CIO_NT_IO_REPARSE_TAG_SYMLINK);
    assert_int_equal(kept_len, 8u + u16_at(4));
    char s[256], p[256];
    name_at(20, u16_at(8), u16_at(10), s);
    name_at(20, u16_at(12), u16_at(14), p);
    assert_string_equal(s, subst);
    assert_string_equal(p, print);
    uint32_t lf;
    memcpy(&lf, kept + 16, 4);
    assert_int_equal(lf, link_flags);

    cio__sys_set(NtFsControlFile__win_get_reparse, give_kept);
    char buf[256];
    size_t n = 0;
    err = cio_dir_read_link(f->io, f->dir, "new", buf, sizeof buf, &n);
    assert_ok(err);
    assert_string_equal(buf, back);
    assert_int_equal(n, strlen(back));
    /* one byte short of the NUL: NameTooLong, nothing cut */
    assert_err(cio_dir_read_link(f->io, f->dir, "new", buf, strlen(back), &n), CIO_E_NAME_TOO_LONG);
    assert_int_equal(n, 0);
    assert_string_equal(buf, "");
    cio__sys_reset();
    if (flags & CIO_SYM_LINK_DIRECTORY)
        assert_ok(cio_dir_delete_dir(f->io, f->dir, "new"));
    else
        assert_ok(cio_dir_delete_file(f->io, f->dir, "new"));
}

/* The data cio writes and reads: relative targets (as written, '/' turned to '\'), absolute ones in
 * NT form with the prefix dropped again on reading, a directory link, UNC and \\?\ targets. */
static void test_win_sym_link_data(void **state)
{
    fx f;
    fx_open(state, &f);
    int handles = fd_count();
    round_trip(&f, "f", 0, "f", "f", 1, "f");
    round_trip(&f, "../x/y", 0, "..\\x\\y", "..\\x\\y", 1, "..\\x\\y");
    round_trip(&f, "C:/abs/t", 0, "\\??\\C:\\abs\\t", "C:\\abs\\t", 0, "C:\\abs\\t");
    round_trip(&f, "d", CIO_SYM_LINK_DIRECTORY, "d", "d", 1, "d");
    round_trip(&f, "\\\\server\\share\\x", 0, "\\??\\UNC\\server\\share\\x", "\\\\server\\share\\x", 0,
               "\\\\server\\share\\x");
    round_trip(&f, "\\\\?\\C:\\long", 0, "\\??\\C:\\long", "\\\\?\\C:\\long", 0, "C:\\long");
    print_message("fault-covered: NtFsControlFile@win_set_reparse STATUS_SUCCESS-kept\n");
    print_message("fault-covered: NtFsControlFile@win_get_reparse STATUS_SUCCESS-symlink\n");
    assert_handles(handles);
    fx_close(&f);
}

/* A mount point's data (its PathBuffer at 16, no Flags) and a tag cio does not read. */
static void put_mount_point(uint32_t tag, const char *subst)
{
    memset(kept, 0, sizeof kept);
    size_t n = strlen(subst);
    uint16_t v[4] = {0, (uint16_t)(2 * n), (uint16_t)(2 * n + 2), 0};
    memcpy(kept, &tag, 4);
    uint16_t data_len = (uint16_t)(8 + 2 * n + 2 + 2);
    memcpy(kept + 4, &data_len, 2);
    memcpy(kept + 8, v, sizeof v);
    for (size_t i = 0; i < n; i++) {
        uint16_t c = (uint16_t)subst[i];
        memcpy(kept + 16 + 2 * i, &c, 2);
    }
    kept_len = 8u + data_len;
}

static void test_win_read_link_kinds(void **state)
{
    fx f;
    fx_open(state, &f);
    int handles = fd_count();
    char buf[128];
    size_t n = 9;
    cio__sys_set(NtFsControlFile__win_get_reparse, give_kept);
    put_mount_point(CIO_NT_IO_REPARSE_TAG_MOUNT_POINT, "\\??\\C:\\mnt");
    assert_ok(cio_dir_read_link(f.io, f.dir, "d", buf, sizeof buf, &n));
    assert_string_equal(buf, "C:\\mnt");
    assert_int_equal(n, 6);
    put_mount_point(CIO_NT_IO_REPARSE_TAG_MOUNT_POINT, "\\??\\Volume{1234}\\");
    assert_ok(cio_dir_read_link(f.io, f.dir, "d", buf, sizeof buf, &n));
    assert_string_equal(buf, "Volume{1234}\\");
    put_mount_point(0x80000017u /* IO_REPARSE_TAG_WOF */, "x");
    assert_err(cio_dir_read_link(f.io, f.dir, "f", buf, sizeof buf, &n), CIO_E_UNSUPPORTED_REPARSE_POINT_TYPE);
    assert_int_equal(n, 0);
    assert_string_equal(buf, "");
    cio__sys_reset();
    print_message("fault-covered: NtFsControlFile@win_get_reparse STATUS_SUCCESS-mount-point\n");
    print_message("fault-covered: NtFsControlFile@win_get_reparse STATUS_SUCCESS-unknown-tag\n");
    assert_handles(handles);
    fx_close(&f);
}

static cio_err run_sym_link(fx *f)
{
    return cio_dir_sym_link(f->io, f->dir, "f", "new", 0);
}

static cio_err run_sym_link_dir(fx *f)
{
    return cio_dir_sym_link(f->io, f->dir, "d", "e", CIO_SYM_LINK_DIRECTORY);
}

static cio_err run_read_link(fx *f)
{
    char buf[64];
    size_t n = 7;
    cio_err err = cio_dir_read_link(f->io, f->dir, "f", buf, sizeof buf, &n);
    if (err != CIO_OK && (n != 0 || buf[0] != '\0'))
        fail_msg("read_link: an error left '%s' (%lu)", buf, (unsigned long)n);
    return err;
}

/* Nothing named `name` is left (a link whose data could not be set is deleted). */
static void assert_gone(fx *f, const char *name)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, name, CIO_STAT_NO_FOLLOW, &st), CIO_E_FILE_NOT_FOUND);
}

typedef struct link_fault {
    const char *site;
    cio_err (*run)(fx *f);
    const char *gone; /* a name that must not exist afterwards, or NULL */
    int code;
    int count;
    const char *name;
    cio_err want; /* CIO_E_UNEXPECTED: what the OS answers after the faults (see below) */
} link_fault;

#define LF(site, run, gone, code, count, want)                  \
    {                                                           \
        site, run, gone, ST(code), count, "STATUS_" #code, want \
    }

/* The errors each site gives, and a storm of STATUS_CANCELLED (retried). After a storm the real
 * control runs: at the set site Wine 8 answers NOT_SUPPORTED (OperationUnsupported), Windows
 * makes the link or lacks the privilege (PermissionDenied); at the get site "f" is no link. */
static const link_fault link_faults[] = {
    LF("NtFsControlFile@win_set_reparse", run_sym_link, "new", PRIVILEGE_NOT_HELD, 1, CIO_E_PERMISSION_DENIED),
    LF("NtFsControlFile@win_set_reparse", run_sym_link_dir, "e", PRIVILEGE_NOT_HELD, 1, CIO_E_PERMISSION_DENIED),
    LF("NtFsControlFile@win_set_reparse", run_sym_link, "new", NOT_SUPPORTED, 1, CIO_E_OPERATION_UNSUPPORTED),
    LF("NtFsControlFile@win_set_reparse", run_sym_link, "new", DISK_FULL, 1, CIO_E_NO_SPACE_LEFT),
    LF("NtFsControlFile@win_set_reparse", run_sym_link, "new", ACCESS_DENIED, 1, CIO_E_ACCESS_DENIED),
    LF("NtFsControlFile@win_set_reparse", run_sym_link, NULL, CANCELLED, 50, CIO_E_UNEXPECTED),
    LF("NtFsControlFile@win_get_reparse", run_read_link, NULL, ACCESS_DENIED, 1, CIO_E_ACCESS_DENIED),
    LF("NtFsControlFile@win_get_reparse", run_read_link, NULL, NOT_A_REPARSE_POINT, 1, CIO_E_NOT_LINK),
    LF("NtFsControlFile@win_get_reparse", run_read_link, NULL, INSUFFICIENT_RESOURCES, 1, CIO_E_SYSTEM_RESOURCES),
    LF("NtFsControlFile@win_get_reparse", run_read_link, NULL, CANCELLED, 50, CIO_E_NOT_LINK),
    LF("NtCreateFile@win_open", run_sym_link, "new", DISK_FULL, 1, CIO_E_NO_SPACE_LEFT),
    LF("NtCreateFile@win_open", run_sym_link, NULL, OBJECT_NAME_COLLISION, 1, CIO_E_PATH_ALREADY_EXISTS),
};

static void test_win_link_faults(void **state)
{
    for (size_t i = 0; i < sizeof link_faults / sizeof link_faults[0]; i++) {
        const link_fault *c = &link_faults[i];
        fx f;
        fx_open(state, &f);
        int handles = fd_count();
        assert_int_equal(cio__fault_errno(c->site, c->code, 0, c->count), 1);
        cio_err got = c->run(&f);
        unsigned injected = cio__fault_injected(c->site);
        cio__sys_reset();
        assert_int_equal(injected, (unsigned)c->count);
        bool storm_end = c->count > 1 && c->want == CIO_E_UNEXPECTED; /* the real set control's answer */
        if (storm_end ? !(got == CIO_OK || got == CIO_E_OPERATION_UNSUPPORTED || got == CIO_E_PERMISSION_DENIED)
                      : got != c->want)
            fail_msg("%s (%s): got %s, want %s", c->site, c->name, cio_err_name(got),
                     storm_end ? "the OS's answer" : cio_err_name(c->want));
        if (c->gone != NULL)
            assert_gone(&f, c->gone);
        if (storm_end && got != CIO_OK)
            assert_gone(&f, "new");
        case_done(&f, handles, c->site, "sym_link/read_link", c->name);
    }
}

/* No memory for the reparse buffers: SystemResources, nothing made, nothing leaked. And the real
 * answers where no fault is armed: a file is no link (Wine: NOT_A_REPARSE_POINT), an existing name
 * is PathAlreadyExists, and the link Wine cannot make leaves nothing behind. */
static void test_win_link_memory_and_real(void **state)
{
    fx f;
    fx_open(state, &f);
    int handles = fd_count();
    assert_int_equal(cio__fault_errno("calloc@win_sym_link_data", ENOMEM, 0, 1), 1);
    assert_err(run_sym_link(&f), CIO_E_SYSTEM_RESOURCES);
    assert_gone(&f, "new");
    covered("calloc@win_sym_link_data", "ENOMEM");
    cio__fault_reset();
    assert_int_equal(cio__fault_errno("malloc@win_read_link_data", ENOMEM, 0, 1), 1);
    assert_err(run_read_link(&f), CIO_E_SYSTEM_RESOURCES);
    covered("malloc@win_read_link_data", "ENOMEM");
    cio__fault_reset();

    assert_err(run_read_link(&f), CIO_E_NOT_LINK);
    assert_err(cio_dir_sym_link(f.io, f.dir, "x", "f", 0), CIO_E_PATH_ALREADY_EXISTS);
    assert_err(cio_dir_sym_link(f.io, f.dir, "x", "missing/new", 0), CIO_E_FILE_NOT_FOUND);
    cio_err err = run_sym_link(&f);
    if (err != CIO_OK) {
        assert_true(err == CIO_E_OPERATION_UNSUPPORTED || err == CIO_E_PERMISSION_DENIED);
        assert_gone(&f, "new");
    }
    assert_handles(handles);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_win_sym_link_data),
        CIO_TESTS(test_win_read_link_kinds),
        CIO_TESTS(test_win_link_faults),
        CIO_TESTS(test_win_link_memory_and_real),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
