"""The generator's own tests: every kind of bad spec gives `file:line: message`, exit status 2 and
leaves the output untouched; good specs render byte-for-byte the same every time; --check notices
hand edits and strays."""

import contextlib
import io
import os
import re
import shutil
import tempfile
import unittest

from gen import generate

HERE = os.path.dirname(os.path.abspath(__file__))

GOOD = os.path.join(HERE, "good")


def slurp(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def spit(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)


class GenCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cio-gen-test-")
        self.spec = os.path.join(self.tmp, "spec")
        shutil.copytree(GOOD, self.spec)
        self.out = os.path.join(self.tmp, "platform")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_gen(self, *extra):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = generate.main(["--spec", self.spec, "--out", self.out] + list(extra))
        return rc, err.getvalue()

    def edit(self, name, old, new, count=1):
        path = os.path.join(self.spec, name)
        text = slurp(path)
        self.assertIn(old, text, f"fixture {name} lacks {old!r}")
        spit(path, text.replace(old, new, count))

    def append(self, name, text):
        with open(os.path.join(self.spec, name), "a") as f:
            f.write(text)

    def line_of(self, name, needle):
        for i, line in enumerate(slurp(os.path.join(self.spec, name)).splitlines(), 1):
            if needle in line:
                return i
        self.fail(f"{needle!r} not in {name}")

    def snapshot(self):
        files = {}
        for root, _dirs, names in os.walk(self.out):
            for n in names:
                p = os.path.join(root, n)
                files[os.path.relpath(p, self.out)] = slurp(p, "rb")
        return files

    def assert_bad(self, name, needle, message):
        """The spec is bad at the line containing `needle` of `name`: exit 2, file:line, no output."""
        generate.main(["--spec", GOOD, "--out", self.out])  # a previous good output to protect
        before = self.snapshot()
        rc, err = self.run_gen()
        self.assertEqual(rc, 2, err)
        line = self.line_of(name, needle)
        self.assertRegex(err.strip(), rf"{name}:{line}: .*{message}")
        self.assertEqual(err.count("\n"), 1, "one line of error")
        self.assertEqual(self.snapshot(), before, "output changed after a bad spec")
        leftovers = [n for n in os.listdir(os.path.join(self.out, "include", "cio")) if n.startswith(".gen-")]
        self.assertEqual(leftovers, [])


class BadSpec(GenCase):
    def test_unknown_key(self):
        self.edit("errors.yaml", '{name: AccessDenied, desc: "access denied"}',
                  '{name: AccessDenied, desc: "access denied", severity: high}')
        self.assert_bad("errors.yaml", "severity", "unknown key 'severity'")

    def test_unknown_flavour_key(self):
        self.edit("signals.yaml", "{name: HUP, linux: 1, freebsd: 1}", "{name: HUP, linux: 1, plan9: 1}")
        self.assert_bad("signals.yaml", "plan9", "unknown key 'plan9'")

    def test_missing_field(self):
        self.edit("errors.yaml", '{name: WouldBlock, desc: "the operation would block"}', "{name: WouldBlock}")
        self.assert_bad("errors.yaml", "{name: WouldBlock}", "missing field 'desc'")

    def test_missing_field_in_target(self):
        self.edit("targets.yaml", "runner: none, level: headers, default: true, packages: [gcc-sparc64-linux-gnu]",
                  "runner: none, default: true, packages: [gcc-sparc64-linux-gnu]")
        self.assert_bad("targets.yaml", "linux-sparc64", "missing field 'level'")

    def test_missing_package_group(self):
        self.edit("targets.yaml", "  valgrind: [valgrind]\n", "")
        self.assert_bad("targets.yaml", "  base: [cmake", "missing field 'valgrind'")

    def test_bad_package_name(self):
        self.edit("targets.yaml", "fuzz: [clang, libclang-rt-14-dev]", "fuzz: [clang, 'libclang rt']")
        self.assert_bad("targets.yaml", "fuzz:", "'fuzz' has an invalid entry 'libclang rt'")

    def test_duplicate_name(self):
        self.append("errno.yaml", "")
        self.edit("errno.yaml", "  - {name: ENOTSUP, netbsd: 86}",
                  "  - {name: ENOTSUP, netbsd: 86}\n  - {name: EPERM, openbsd: 1}")
        self.assert_bad("errno.yaml", "{name: EPERM, openbsd: 1}", "duplicate name 'EPERM'")

    def test_duplicate_key_in_row(self):
        self.edit("signals.yaml", "{name: HUP, linux: 1, freebsd: 1}", "{name: HUP, linux: 1, linux: 2}")
        self.assert_bad("signals.yaml", "{name: HUP, linux: 1, linux: 2}", "duplicate key 'linux'")

    def test_two_members_one_value(self):
        self.edit("signals.yaml", "{name: HUP, linux: 1, freebsd: 1}", "{name: HUP, linux: 2, freebsd: 1}")
        self.assert_bad("signals.yaml", "{name: INT,", "same value 2 on linux; make one an alias")

    def test_two_members_one_value_in_derived_flavour(self):
        self.edit("signals.yaml", "linux-mips: 16,", "linux-mips: 2,")
        self.assert_bad("signals.yaml", "{name: USR1,", "same value 2 on linux-mips")

    def test_alias_of_unknown_name(self):
        self.edit("signals.yaml", "{name: IOT, linux: ABRT, freebsd: ABRT}", "{name: IOT, linux: ABORT}")
        self.assert_bad("signals.yaml", "{name: IOT", "unknown signal 'ABORT'")

    def test_alias_of_name_missing_on_that_flavour(self):
        self.edit("errno.yaml", "{name: EWOULDBLOCK, linux: EAGAIN, freebsd: EAGAIN}",
                  "{name: EWOULDBLOCK, netbsd: EAGAIN}")
        self.assert_bad("errno.yaml", "{name: EWOULDBLOCK", "unknown errno 'EAGAIN'")

    def test_signal_out_of_range(self):
        self.edit("signals.yaml", "{name: HUP, linux: 1, freebsd: 1}", "{name: HUP, linux: 256, freebsd: 1}")
        self.assert_bad("signals.yaml", "{name: HUP", "out of range")

    def test_signal_zero_out_of_range(self):
        self.edit("signals.yaml", "{name: HUP, linux: 1, freebsd: 1}", "{name: HUP, linux: 0, freebsd: 1}")
        self.assert_bad("signals.yaml", "{name: HUP", "out of range")

    def test_ntstatus_out_of_range(self):
        self.edit("ntstatus.yaml", "value: 0xC0000034", "value: 0x1C0000034")
        self.assert_bad("ntstatus.yaml", "0x1C0000034", "out of range")

    def test_syscall_out_of_range(self):
        self.edit("syscalls.yaml", "{name: _umtx_op, freebsd: 454}", "{name: _umtx_op, freebsd: -1}")
        self.assert_bad("syscalls.yaml", "_umtx_op", "out of range")

    def test_io_uring_opcode_out_of_range(self):
        self.edit("syscalls.yaml", "{name: IORING_OP_FTRUNCATE, value: 55}", "{name: IORING_OP_FTRUNCATE, value: 256}")
        self.assert_bad("syscalls.yaml", "IORING_OP_FTRUNCATE, value: 256", "out of range")

    def test_io_uring_opcode_twice(self):
        self.edit("syscalls.yaml", "{name: IORING_OP_FTRUNCATE, value: 55}", "{name: IORING_OP_FTRUNCATE, value: 52}")
        self.assert_bad("syscalls.yaml", "IORING_OP_FTRUNCATE, value: 52", "same number")

    def test_value_of_wrong_type(self):
        self.edit("errno.yaml", "{name: EPERM, linux: 1,", "{name: EPERM, linux: one,")
        self.assert_bad("errno.yaml", "linux: one", "must be an integer")

    def test_union_names_unknown_set(self):
        self.edit("errors.yaml", "union: [Cancelable, Unexpected], errors: [AddressInUse]",
                  "union: [Cancelable, Unexpectd], errors: [AddressInUse]")
        self.assert_bad("errors.yaml", "Unexpectd", "unknown set 'Unexpectd'")

    def test_set_names_unknown_error(self):
        self.edit("errors.yaml", "errors: [AddressInUse]", "errors: [AddressInUze]")
        self.assert_bad("errors.yaml", "AddressInUze", "unknown error 'AddressInUze'")

    def test_map_names_unknown_error(self):
        self.edit("errmaps.yaml", "ENOENT: FileNotFound", "ENOENT: FileNotFund")
        self.assert_bad("errmaps.yaml", "FileNotFund", "unknown error or action 'FileNotFund'")

    def test_map_names_error_outside_its_set(self):
        self.edit("errmaps.yaml", "ENOENT: FileNotFound", "ENOENT: WouldBlock")
        self.assert_bad("errmaps.yaml", "ENOENT: WouldBlock", "not in set File.OpenError")

    def test_map_names_unknown_native_value(self):
        self.edit("errmaps.yaml", "ENOENT: FileNotFound", "ENOEXIST: FileNotFound")
        self.assert_bad("errmaps.yaml", "ENOEXIST", "unknown errno value 'ENOEXIST'")

    def test_map_backoff_unknown_error(self):
        self.edit("errmaps.yaml", "{backoff: SharingViolation}", "{backoff: Sharing}")
        self.assert_bad("errmaps.yaml", "{backoff: Sharing}", "backoff names unknown error")

    def test_map_unknown_set(self):
        self.edit("errmaps.yaml", "set: File.Reader.Error", "set: File.Reader.Errors")
        self.assert_bad("errmaps.yaml", "File.Reader.Errors", "unknown set 'File.Reader.Errors'")

    def test_unknown_top_level_key(self):
        self.append("wsa.yaml", "extras:\n  - {name: X}\n")
        self.assert_bad("wsa.yaml", "extras:", "unknown top-level key 'extras'")

    def test_yaml_syntax_error(self):
        self.edit("wsa.yaml", "{name: EADDRINUSE, value: 10048}", "{name: EADDRINUSE, value: 10048")
        rc, err = self.run_gen()
        self.assertEqual(rc, 2)
        self.assertRegex(err, r"wsa\.yaml:\d+: YAML syntax")

    def test_target_unknown_flavour(self):
        self.edit("targets.yaml", "flavour: linux-mips,", "flavour: linux-mipsel,")
        self.assert_bad("targets.yaml", "linux-mipsel", "unknown flavour 'linux-mipsel'")

    def test_tilde_on_base_flavour(self):
        self.edit("signals.yaml", "{name: HUP, linux: 1, freebsd: 1}", "{name: HUP, linux: 1, freebsd: ~}")
        self.assert_bad("signals.yaml", "freebsd: ~", "only makes sense for a derived flavour")

    def test_libc_struct_bad_field(self):
        self.edit("libc.yaml", '"long tv_nsec"', '"long"')
        self.assert_bad("libc.yaml", "name: timespec", "is not 'type name'")

    def test_libc_struct_bad_union_member(self):
        self.edit("libc.yaml", "void (*sa_sigaction)(int, void *, void *);", "void (*)(int);")
        self.assert_bad("libc.yaml", "name: sigaction", "is not 'type name', a function pointer or a union")

    def test_libc_struct_offset_of_no_field(self):
        self.edit("libc.yaml", "offsets: {tv_nsec:", "offsets: {tv_usec:")
        self.assert_bad("libc.yaml", "name: timespec", "offsets name 'tv_usec', not a field")

    def test_libc_struct_offsets_rendered(self):
        rc, err = self.run_gen()
        self.assertEqual(rc, 0, err)
        text = slurp(os.path.join(self.out, "bsd", "include", "cio_bsd_libc.h"))
        self.assertIn("_Static_assert(offsetof(struct timespec, tv_nsec) == 8,", text)
        self.assertIn("union { void (*sa_handler)(int); void (*sa_sigaction)(int, void *, void *); };", text)
        self.assertIn("_Static_assert(offsetof(struct sigaction, sa_flags) == 8,", text)

    def test_libc_library_unknown_symbol(self):
        self.edit("libc.yaml", "versions: {FBSD_1.0: [_umtx_op]}", "versions: {FBSD_1.0: [_umtx_opp]}")
        self.assert_bad("libc.yaml", "FBSD_1.0: [_umtx_opp]", "'_umtx_opp' is not a function declared for freebsd")

    def test_libc_import_without_recorded_node(self):
        # a function FreeBSD's build imports with no version node recorded from FreeBSD's Symbol.map
        self.edit("bsd_symbols.yaml", "names: [_umtx_op]", "names: []")
        self.assert_bad("libc.yaml", "name: _umtx_op", "freebsd imports '_umtx_op' but .* has no recorded"
                        " version node")

    def test_libc_import_without_any_node(self):
        # no silent default: a FreeBSD export must be listed under a node in libc.yaml
        self.edit("libc.yaml", "versions: {FBSD_1.0: [_umtx_op]}", "versions: {}")
        self.assert_bad("libc.yaml", "soname: libc.so.7", "'_umtx_op' is bound to no version node")

    def test_bsd_symbols_record_of_undeclared_function(self):
        self.edit("bsd_symbols.yaml", "names: [_umtx_op]", "names: [_umtx_op, strnlen]")
        self.assert_bad("bsd_symbols.yaml", "names: [_umtx_op, strnlen]", "'strnlen' is recorded but")

    def test_bsd_symbols_freebsd_row_needs_version(self):
        self.edit("bsd_symbols.yaml", "version: FBSD_1.0, ", "")
        self.assert_bad("bsd_symbols.yaml", "names: [_umtx_op]", "needs the version node")

    def test_bsd_symbols_netbsd_import_by_renamed_name(self):
        # NetBSD's headers rename clock_gettime: importing it by its old name is refused
        self.edit("bsd_symbols.yaml", "renames: {clock_gettime: __clock_gettime50}}", "names: [clock_gettime]}")
        self.edit("bsd_symbols.yaml", "{time: __time50}", "{time: __time50, clock_gettime: __clock_gettime50}")
        self.assert_bad("bsd_symbols.yaml", "names: [clock_gettime]", "'clock_gettime' is imported here but"
                        " recorded as renamed to __clock_gettime50")

    def test_bsd_symbols_unknown_source(self):
        self.edit("bsd_symbols.yaml", "source: nbsd-time, renames", "source: nbsd-tim, renames")
        self.assert_bad("bsd_symbols.yaml", "source: nbsd-tim", "unknown source 'nbsd-tim'")

    def test_libc_bad_soname(self):
        self.edit("libc.yaml", "soname: libc.so.12}", "soname: libc12}")
        self.assert_bad("libc.yaml", "soname: libc12", "is not a valid soname")

    def test_ntapi_bad_field(self):
        self.edit("ntapi.yaml", "fields: [int64_t IndexNumber]", "fields: [long long IndexNumber]")
        self.assert_bad("ntapi.yaml", "name: file_internal_information", "is not '<type> <name>'")

    def test_ntapi_struct_used_before_declared(self):
        self.edit("ntapi.yaml", "cio_nt_unicode_string *ObjectName", "cio_nt_ansi_string *ObjectName")
        self.assert_bad("ntapi.yaml", "name: object_attributes", "cio_nt_ansi_string, which is not declared")

    def test_ntapi_size_not_multiple_of_align(self):
        self.edit("ntapi.yaml", "{name: file_basic_information, size: 40,", "{name: file_basic_information, size: 44,")
        self.assert_bad("ntapi.yaml", "name: file_basic_information", "must be a power of two that divides")

    def test_ntapi_function_name(self):
        self.edit("ntapi.yaml", "{name: NtClose,", "{name: CloseHandle,")
        self.assert_bad("ntapi.yaml", "name: CloseHandle", "ntdll function name")

    def test_ntapi_constant_out_of_range(self):
        self.edit("ntapi.yaml", "{name: SYNCHRONIZE, value: 0x00100000}", "{name: SYNCHRONIZE, value: 0x100000000}")
        self.assert_bad("ntapi.yaml", "name: SYNCHRONIZE", "out of range")

    def test_missing_file(self):
        os.unlink(os.path.join(self.spec, "wsa.yaml"))
        rc, err = self.run_gen()
        self.assertEqual(rc, 2)
        self.assertIn("wsa.yaml:0: cannot read", err)


class BadOsCalls(GenCase):
    """spec/oscalls.yaml: the call table's own validation."""

    def test_site_of_unknown_call(self):
        self.edit("oscalls.yaml", "{call: malloc, site: alloc,", "{call: mallocx, site: alloc,")
        self.assert_bad("oscalls.yaml", "call: mallocx", "site of unknown call 'mallocx'")

    def test_duplicate_site(self):
        self.edit("oscalls.yaml", "{call: openat, site: open_dir,", "{call: openat, site: open_file,")
        self.assert_bad("oscalls.yaml", "in: open_dir", "duplicate site 'openat@open_file'")

    def test_duplicate_call(self):
        self.append("oscalls.yaml", "")
        self.edit("oscalls.yaml", '{name: pread, os: [linux]', '{name: readv, os: [linux]')
        self.assert_bad("oscalls.yaml", '{name: readv, os: [linux], ret: ssize_t, args: ["int fd", "void *buf"',
                        "duplicate call 'readv'")

    def test_argument_without_name(self):
        self.edit("oscalls.yaml", '"size_t size"]', '"size_t"]')
        self.assert_bad("oscalls.yaml", "{name: malloc", "argument 'size_t' is not 'type name'")

    def test_argument_name_twice(self):
        self.edit("oscalls.yaml", '"size_t len", "off_t offset"', '"size_t len", "off_t len"')
        self.assert_bad("oscalls.yaml", "{name: pread", "argument name 'len' twice")

    def test_bad_return_type(self):
        self.edit("oscalls.yaml", '{name: close, os: [linux], ret: int,', '{name: close, os: [linux], ret: "int (",')
        self.assert_bad("oscalls.yaml", "{name: close", "bad return type")

    def test_fail_kind_needs_matching_return(self):
        self.edit("oscalls.yaml", 'args: ["size_t size"], fail: pointer', 'args: ["size_t size"], fail: errno')
        self.assert_bad("oscalls.yaml", "{name: malloc", "fail: errno needs an integer return type")

    def test_mapfailed_needs_pointer_return(self):
        self.edit("oscalls.yaml", '["int fd"], fail: errno', '["int fd"], fail: mapfailed')
        self.assert_bad("oscalls.yaml", "{name: close", "fail: mapfailed needs a pointer return type")

    def test_unknown_fail_kind(self):
        self.edit("oscalls.yaml", '["int fd"], fail: errno', '["int fd"], fail: sometimes')
        self.assert_bad("oscalls.yaml", "{name: close", "fail must be one of")

    def test_short_names_unknown_argument(self):
        self.edit("oscalls.yaml", "short: {len: len}", "short: {len: count}")
        self.assert_bad("oscalls.yaml", "short: {len: count}", "short names unknown argument 'count'")

    def test_site_in_unlisted_file(self):
        self.edit("oscalls.yaml", "{call: pthread_create, site: spawn, file: src/os/net_posix.c",
                  "{call: pthread_create, site: spawn, file: src/threaded/pool.c")
        self.assert_bad("oscalls.yaml", "site: spawn", "file 'src/threaded/pool.c' is not listed")

    def test_site_unknown_errno_map(self):
        self.edit("oscalls.yaml", "in: open_dir, map: openat", "in: open_dir, map: opendir")
        self.assert_bad("oscalls.yaml", "map: opendir", "unknown errno map 'opendir'")

    def test_call_on_os_without_table(self):
        self.edit("oscalls.yaml", "{name: close, os: [linux]", "{name: close, os: [linux, freebsd]")
        self.assert_bad("oscalls.yaml", "{name: close", "OS 'freebsd' has no `includes` row")

    # ---- the Windows failure conventions
    def test_unknown_fail_kind_lists_windows_kinds(self):
        self.edit("oscalls.yaml", '["HANDLE h"], fail: win32', '["HANDLE h"], fail: lasterror')
        self.assert_bad("oscalls.yaml", "{name: CloseHandle", "fail must be one of .*ntstatus, win32, handle, wsa")

    def test_ntstatus_needs_integer_return(self):
        self.edit("oscalls.yaml", '{name: NtReadFile, os: [windows], ret: int32_t,', '{name: NtReadFile, os: [windows], ret: "void *",')
        self.assert_bad("oscalls.yaml", "{name: NtReadFile", "fail: ntstatus needs an integer return type")

    def test_handle_needs_value(self):
        self.edit("oscalls.yaml", 'fail: handle, value: "NULL"}', "fail: handle}")
        self.assert_bad("oscalls.yaml", "{name: OpenThread", "fail: handle needs value: NULL or INVALID_HANDLE_VALUE")

    def test_handle_value_bare_null_is_yaml_null(self):
        self.edit("oscalls.yaml", 'fail: handle, value: "NULL"}', "fail: handle, value: NULL}")
        self.assert_bad("oscalls.yaml", "{name: OpenThread", "value must be a C constant \\(quote it")

    def test_handle_other_value(self):
        self.edit("oscalls.yaml", 'fail: handle, value: "NULL"}', 'fail: handle, value: "FALSE"}')
        self.assert_bad("oscalls.yaml", "{name: OpenThread", "fail: handle needs value: NULL or INVALID_HANDLE_VALUE")

    def test_value_on_a_posix_kind(self):
        self.edit("oscalls.yaml", '["int fd"], fail: errno, after: true}', '["int fd"], fail: errno, value: 0, after: true}')
        self.assert_bad("oscalls.yaml", "{name: close", "value is only for fail: win32, handle, wsa")

    def test_value_not_a_constant(self):
        self.edit("oscalls.yaml", "value: WAIT_FAILED}", 'value: "WAIT_FAILED; abort()"}')
        self.assert_bad("oscalls.yaml", "{name: WaitForSingleObjectEx", "is not a C constant")

    def test_wsa_pointer_return_needs_value(self):
        self.edit("oscalls.yaml", '{name: WSASocketW, os: [windows], ret: SOCKET,', '{name: WSASocketW, os: [windows], ret: "void *",')
        self.assert_bad("oscalls.yaml", "{name: WSASocketW", "fail: wsa on a pointer return needs a value")

    def test_win32_void_return(self):
        self.edit("oscalls.yaml", '{name: CloseHandle, os: [windows], ret: BOOL,', '{name: CloseHandle, os: [windows], ret: void,')
        self.assert_bad("oscalls.yaml", "{name: CloseHandle", "fail: win32 needs a return value to fail with")

    def test_wsabuf_short_without_count(self):
        self.edit("oscalls.yaml", "short: {wsabuf: bufs, cnt: count}", "short: {wsabuf: bufs}")
        self.assert_bad("oscalls.yaml", "{name: WSARecv", r"short must be .*\{wsabuf: arg, cnt: arg\}")

    def test_wsabuf_short_unknown_argument(self):
        self.edit("oscalls.yaml", "short: {wsabuf: bufs, cnt: count}", "short: {wsabuf: buffers, cnt: count}")
        self.assert_bad("oscalls.yaml", "short: {wsabuf: buffers", "short names unknown argument 'buffers'")

    def test_win32_site_has_no_map(self):
        self.edit("oscalls.yaml", "in: file_close}", "in: file_close, map: openat}")
        self.assert_bad("oscalls.yaml", "in: file_close, map: openat", "a fail: win32 call has no error map")

    def test_ntstatus_site_needs_ntstatus_map(self):
        self.edit("oscalls.yaml", "in: file_read, map: nt_create_file}", "in: file_read, map: openat}")
        self.assert_bad("oscalls.yaml", "in: file_read, map: openat", "unknown ntstatus map 'openat'")

    def test_wsa_site_needs_wsa_map(self):
        self.edit("oscalls.yaml", "in: new_socket, map: bind}", "in: new_socket, map: nt_create_file}")
        self.assert_bad("oscalls.yaml", "in: new_socket, map: nt_create_file}", "unknown wsa map 'nt_create_file'")

    def test_windows_call_on_linux_only_file(self):
        self.edit("oscalls.yaml", "{call: WSARecv, site: read, file: src/os/net_windows.c",
                  "{call: WSARecv, site: read, file: src/os/net_posix.c")
        self.assert_bad("oscalls.yaml", "{call: WSARecv, site: read", "the call and its file share no OS")

    def test_call_without_site(self):
        self.edit("oscalls.yaml", "  - {call: pthread_create, site: spawn, file: src/os/net_posix.c, in: spawn}\n",
                  "")
        self.assert_bad("oscalls.yaml", "{name: pthread_create", "call 'pthread_create' has no site")


class OsCallSources(GenCase):
    """The check of src/ against spec/oscalls.yaml (generate.py --src)."""

    GOOD_SRC = {
        "src/os/fs_posix.c": """/* openat(2) in a comment is fine */
static int open_file(const char *p)
{
    return CIO__SYS(openat, open_file)(0, p, 0, 0);
}

static int open_dir(const char *p)
{
    return CIO__SYS(openat, open_dir)(0, p, 0, 0);
}

static void close_fd(int fd)
{
    (void)CIO__SYS(close, close_fd)(fd);
}

static long file_read(int fd, const struct iovec *iov)
{
    return CIO__SYS(readv, read)(fd, iov, 1);
}

static long file_read_at(int fd, void *b)
{
    return CIO__SYS(pread, read_at)(fd, b, 1, 0);
}
""",
        "src/os/net_posix.c": """static long net_send(int fd, const struct msghdr *m)
{
    void *p = CIO__SYS(malloc, alloc)(1);
    (void)p;
    return CIO__SYS(sendmsg, send)(fd, m, 0);
}

static int spawn(void)
{
    return CIO__SYS(pthread_create, spawn)(0, 0, 0, 0);
}
""",
        "src/os/fs_windows.c": """static int file_read(void *h, void *b)
{
    void *p = CIO__SYS(malloc, win_alloc)(1);
    (void)p;
    return CIO__SYS(NtReadFile, read)(h, 0, 0, 0, 0, b, 1, 0, 0);
}

static void file_close(void *h)
{
    (void)CIO__SYS(CloseHandle, close)(h);
}
""",
        "src/os/net_windows.c": """static void kick(unsigned id)
{
    void *t = CIO__SYS(OpenThread, kick)(0, 0, id);
    (void)CIO__SYS(WaitForSingleObjectEx, wait)(t, 0, 0);
}

static unsigned long long new_socket(void)
{
    unsigned long long s = CIO__SYS(WSASocketW, new_socket)(2, 1, 6, 0, 0, 0);
    (void)CIO__SYS(wsa_bind, listen)(s, 0, 0);
    return s;
}

static int net_read(unsigned long long s, void *bufs)
{
    return CIO__SYS(WSARecv, read)(s, bufs, 1, 0, 0, 0, 0);
}
""",
    }

    def write_src(self, files):
        root = os.path.join(self.tmp, "tree")
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            spit(path, text)
        return root

    def run_src(self, files):
        return self.run_gen("--src", self.write_src(files))

    def test_good_sources(self):
        rc, err = self.run_src(self.GOOD_SRC)
        self.assertEqual(rc, 0, err)

    def test_site_missing_from_source(self):
        files = dict(self.GOOD_SRC)
        files["src/os/fs_posix.c"] = files["src/os/fs_posix.c"].replace(
            "CIO__SYS(pread, read_at)(fd, b, 1, 0)", "0")
        rc, err = self.run_src(files)
        self.assertEqual(rc, 2)
        self.assertRegex(err, r"oscalls.yaml:\d+: site pread@read_at does not appear")
        self.assertFalse(os.path.exists(self.out), "nothing written")

    def test_use_that_is_not_a_site(self):
        files = dict(self.GOOD_SRC)
        files["src/os/fs_posix.c"] += "static void extra(void)\n{\n    CIO__SYS(close, elsewhere)(1);\n}\n"
        rc, err = self.run_src(files)
        self.assertEqual(rc, 2)
        self.assertIn("src/os/fs_posix.c:28: CIO__SYS(close, elsewhere) is not a site", err)

    def test_site_in_the_wrong_function(self):
        files = dict(self.GOOD_SRC)
        files["src/os/fs_posix.c"] = files["src/os/fs_posix.c"].replace(
            "static void close_fd(int fd)", "static void shut(int fd)")
        rc, err = self.run_src(files)
        self.assertEqual(rc, 2)
        self.assertIn("src/os/fs_posix.c:14: CIO__SYS(close, close_fd) is in shut, the spec says close_fd", err)

    def test_routed_call_made_directly(self):
        files = dict(self.GOOD_SRC)
        files["src/os/net_posix.c"] += "static void leak(void)\n{\n    (void)malloc(3);\n}\n"
        rc, err = self.run_src(files)
        self.assertEqual(rc, 2)
        self.assertIn("src/os/net_posix.c:14: malloc() called directly", err)

    def test_wsa_call_made_directly_by_its_bsd_name(self):
        files = dict(self.GOOD_SRC)
        files["src/os/net_windows.c"] += "static void rebind(unsigned long long s)\n{\n    (void)bind(s, 0, 0);\n}\n"
        rc, err = self.run_src(files)
        self.assertEqual(rc, 2)
        self.assertIn("src/os/net_windows.c:20: bind() called directly; route it: CIO__SYS(wsa_bind, <site>)", err)


class GoodSpec(GenCase):
    def test_windows_fault_conventions_rendered(self):
        rc, err = self.run_gen()
        self.assertEqual(rc, 0, err)
        fault = slurp(os.path.join(self.out, "internal", "cio_oscalls_fault.c"))
        body = fault.split("cio__fi_OpenThread__kick(")[1].split("\n}\n")[0]
        self.assertIn("SetLastError((DWORD)atomic_load(&p_->err));", body)
        self.assertIn("return (HANDLE)NULL;", body)
        body = fault.split("cio__fi_WSASocketW__new_socket(")[1].split("\n}\n")[0]
        self.assertIn("WSASetLastError(atomic_load(&p_->err));", body)
        self.assertIn("return (SOCKET)INVALID_SOCKET;", body)
        body = fault.split("cio__fi_wsa_bind__listen(")[1].split("\n}\n")[0]
        self.assertIn("return (int)SOCKET_ERROR;", body)
        body = fault.split("cio__fi_WaitForSingleObjectEx__wait(")[1].split("\n}\n")[0]
        self.assertIn("return (DWORD)WAIT_FAILED;", body)
        body = fault.split("cio__fi_NtReadFile__read(")[1].split("\n}\n")[0]
        self.assertIn("return (int32_t)atomic_load(&p_->err);", body)
        self.assertIn("len = (uint32_t)max_;", body)
        body = fault.split("cio__fi_CloseHandle__close(")[1].split("\n}\n")[0]
        self.assertIn("(void)(cio__sys_default.CloseHandle)(h);", body)  # after: true
        body = fault.split("cio__fi_WSARecv__read(")[1].split("\n}\n")[0]
        self.assertIn("DWORD k_ = cio__fi_trim_wsa(bufs, (DWORD)count, max_, t_);", body)
        self.assertIn("(cio__sys_default.WSARecv)(s, t_, k_, done, flags, ov, fn)", body)
        self.assertIn("#if defined(CIO_OS_WINDOWS)\n/* The same over Winsock's WSABUF arrays. */", fault)
        self.assertIn("#if defined(CIO_OS_LINUX)\n/* Copies the first iovecs", fault)
        table = slurp(os.path.join(self.out, "internal", "cio_oscalls.h"))
        self.assertIn("#if !defined(_WIN32_WINNT) || _WIN32_WINNT != 2560", table)
        self.assertIn("#include <cio/ntapi.h>", table)
        self.assertIn("_Atomic(cio__sys_malloc_fn) malloc__win_alloc;", table)
        tsv = slurp(os.path.join(self.out, "internal", "callsites.tsv"))
        self.assertIn("NtReadFile@read\tsrc/os/fs_windows.c\tfile_read\tnt_create_file\twindows\n", tsv)

    def test_deterministic_and_host_independent(self):
        rc, err = self.run_gen()
        self.assertEqual(rc, 0, err)
        first = self.snapshot()
        shutil.rmtree(self.out)
        old = os.getcwd()
        env = dict(os.environ)
        try:
            os.chdir(self.tmp)
            os.environ["LANG"] = "C"
            os.environ["TZ"] = "Pacific/Kiritimati"
            rc, err = self.run_gen()
        finally:
            os.chdir(old)
            os.environ.clear()
            os.environ.update(env)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.snapshot(), first)
        for rel, data in first.items():
            text = data.decode()
            self.assertNotIn(self.tmp, text, f"{rel} mentions the temporary path")
            # as a word: a short host name ("vm") is part of ordinary words ("llvm")
            self.assertNotRegex(text, rf"(?<![\w.-]){re.escape(os.uname().nodename)}(?![\w-])",
                                f"{rel} mentions the host name")

    def test_stamp(self):
        self.assertEqual(self.run_gen()[0], 0)
        for rel, data in self.snapshot().items():
            lines = data.decode().splitlines()
            self.assertIn("python3 build.py gen", lines[0], rel)
            self.assertIn("DO NOT EDIT", lines[1], rel)
            self.assertIn("spec/", lines[1], rel)

    def test_check_notices_hand_edit_and_strays(self):
        self.assertEqual(self.run_gen()[0], 0)
        self.assertEqual(self.run_gen("--check")[0], 0)
        path = os.path.join(self.out, "include", "cio", "signals.h")
        with open(path, "a") as f:
            f.write("/* hand edit */\n")
        rc, err = self.run_gen("--check")
        self.assertEqual(rc, 1)
        self.assertIn("stale: include/cio/signals.h", err)
        self.assertEqual(self.run_gen()[0], 0)
        open(os.path.join(self.out, "include", "cio", "extra.h"), "w").close()
        rc, err = self.run_gen("--check")
        self.assertEqual(rc, 1)
        self.assertIn("extra.h", err)
        self.assertEqual(self.run_gen()[0], 0)
        self.assertFalse(os.path.exists(os.path.join(self.out, "include", "cio", "extra.h")))

    def test_inheritance_and_aliases(self):
        self.assertEqual(self.run_gen()[0], 0)
        sig = slurp(os.path.join(self.out, "include", "cio", "signals.h"))
        linux = sig.split("defined(CIO__FLAVOUR_LINUX)")[1].split("#elif")[0]
        mips = sig.split("defined(CIO__FLAVOUR_LINUX_MIPS)")[1].split("#elif")[0]
        self.assertIn("CIO_SIG_USR1 = 10,", linux)
        self.assertIn("CIO_SIG_USR1 = 16,", mips)
        self.assertIn("CIO_SIG_STKFLT = 16,", linux)
        self.assertNotIn("STKFLT", mips)
        self.assertIn("#define CIO_SIG_IOT CIO_SIG_ABRT", mips)
        self.assertIn("#define CIO_SIG_SETMASK 3", mips)
        err = slurp(os.path.join(self.out, "internal", "cio", "errno.h"))
        self.assertIn("#define CIO_ERRNO_NOTSUP 86", err)
        self.assertIn("#define CIO_ERRNO_NOTSUP CIO_ERRNO_OPNOTSUPP", err)

    def test_ntapi_rendering(self):
        rc, err = self.run_gen()
        self.assertEqual(rc, 0, err)
        h = slurp(os.path.join(self.out, "internal", "cio", "ntapi.h"))
        self.assertIn("_Static_assert(sizeof(cio_nt_object_attributes) == 48,", h)
        self.assertIn("__declspec(dllimport) int32_t __stdcall NtClose(void *Handle);", h)
        self.assertIn("#define CIO_NT_GENERIC_READ 0x80000000u", h)
        self.assertIn("#define CIO_NT_FILE_USE_FILE_POINTER_POSITION (-2)", h)

    def test_set_c_names(self):
        from gen import checks as model
        self.assertEqual(model.set_c_name("File.OpenError"), "file_open")
        self.assertEqual(model.set_c_name("File.Reader.Error"), "file_reader")
        self.assertEqual(model.set_c_name("net.UnixAddress.ListenError"), "net_unix_address_listen")
        self.assertEqual(model.set_c_name("Queue.Error"), "queue")
        self.assertEqual(model.set_c_name("Cancelable"), "cancelable")
        self.assertEqual(model.upper_snake("InvalidUtf8"), "INVALID_UTF8")
        self.assertEqual(model.upper_snake("IsDir"), "IS_DIR")


if __name__ == "__main__":
    unittest.main()
