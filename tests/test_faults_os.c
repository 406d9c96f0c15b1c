/*
 * Fault injection through the OS call table, Linux network half (the rest is tests/test_faults.c,
 * whose top comment explains the method, tests/test_faults_fs.c and tests/test_faults_tasks.c):
 * sockets (per site: EINTR storms, the errors the kernel gives there, EMFILE/ENFILE with no
 * descriptor leak, short transfers, EAGAIN, timed reads and writes, DeviceIoControl-style ioctls,
 * interface names resolved to indexes).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"
#include "faults_net.h"

#if !defined(CIO_OS_WINDOWS) /* POSIX sites only; Windows': tests/test_faults_windows.c */
/* ---- network (Linux) ------------------------------------------------------------------------------ */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cio/batch.h"

typedef struct net_case {
    const char *site;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*done)(fx *f); /* closes what prep opened */
} net_case;

static void unix_path(fx *f, cio_unix_address *a)
{
    char p[128];
    snprintf(p, sizeof p, "%s/sock", f->path);
    assert_ok(cio_unix_address_from_path(p, a));
}

static cio_err run_unix_listen(fx *f)
{
    cio_unix_address a;
    unix_path(f, &a);
    cio_server s;
    cio_err err = cio_unix_listen(f->io, &a, NULL, &s);
    if (err == CIO_OK)
        cio_server_close(f->io, &s);
    char p[128];
    snprintf(p, sizeof p, "%s/sock", f->path);
    unlink(p);
    return err;
}

static void prep_unix_listener(fx *f)
{
    cio_unix_address a;
    unix_path(f, &a);
    assert_ok(cio_unix_listen(f->io, &a, NULL, &f->server));
}

static void done_unix_listener(fx *f)
{
    cio_server_close(f->io, &f->server);
    char p[128];
    snprintf(p, sizeof p, "%s/sock", f->path);
    unlink(p);
}

static cio_err run_unix_connect(fx *f)
{
    cio_unix_address a;
    unix_path(f, &a);
    cio_stream s;
    cio_err err = cio_unix_connect(f->io, &a, &s);
    return accept_and_close(f, err, &s);
}

/* a -> b: 5000 bytes, read back into two buffers at a time (cio_stream_read_v: readv). */
static cio_err run_stream_read_v(fx *f)
{
    assert_ok(cio_stream_write_all(f->io, &f->a, data, 5000));
    static unsigned char buf[5000];
    return read_back_into(f, buf, 5000, true);
}

/* a -> b: DATA_LEN bytes written from two buffers at a time (cio_stream_write_v: sendmsg), read back. */
static cio_err run_stream_write_v(fx *f)
{
    size_t done = 0;
    while (done < DATA_LEN) {
        size_t left = DATA_LEN - done, first = left > 1 ? left / 2 : left;
        cio_const_iovec iov[2] = {{data + done, first}, {data + done + first, left - first}};
        size_t n = 0;
        cio_err err = cio_stream_write_v(f->io, &f->a, iov, left > 1 ? 2 : 1, &n);
        if (err != CIO_OK)
            return err;
        assert_true(n > 0);
        done += n;
    }
    stream_read_back(f);
    return CIO_OK;
}

/* b: the read end of a pipe handed to cio as a stream (a: its write end). cio's stream read takes
 * recvfrom first; ENOTSOCK sends it to read(2) (site net_read_pipe). */
static void prep_pipe(fx *f)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    memset(&f->a, 0, sizeof f->a);
    memset(&f->b, 0, sizeof f->b);
    f->a.handle = p[1];
    f->b.handle = p[0];
}

static void done_pipe(fx *f)
{
    close(f->a.handle);
    close(f->b.handle);
}

/* 100 bytes written into the pipe with write(2), read back with cio_stream_read. */
static cio_err run_pipe_read(fx *f)
{
    assert_int_equal(write(f->a.handle, data, 100), 100);
    unsigned char buf[100];
    return read_back_into(f, buf, 100, false);
}

static cio_err run_receive(fx *f)
{
    size_t n = 0;
    assert_ok(cio_socket_send_to(f->io, &f->udp1, &f->udp2.address, data, 100, &n));
    unsigned char buf[200];
    size_t got = 0;
    cio_err err = cio_socket_receive_from(f->io, &f->udp2, buf, sizeof buf, &got, NULL);
    if (err == CIO_OK) {
        assert_int_equal(got, 100);
        assert_memory_equal(buf, data, 100);
    }
    return err;
}

static const net_case net_cases[] = {
    {"socket@listen_ip", prep_none, run_listen, prep_none},
    {"setsockopt@set_int_option", prep_none, run_listen, prep_none},
    {"bind@listen_ip", prep_none, run_listen, prep_none},
    {"listen@listen_ip", prep_none, run_listen, prep_none},
    {"getsockname@local_address", prep_none, run_listen, prep_none},
    {"accept4@accept", prep_pending, run_accept, done_pending},
    {"socket@connect_ip", prep_listener, run_connect, done_listener},
    {"connect@connect_nonblocking", prep_listener, run_connect, done_listener},
    {"poll@poll_one", prep_listener, run_connect, done_listener},
    {"fcntl@set_blocking", prep_listener, run_connect, done_listener},
    {"recvfrom@net_read", prep_pair, run_stream_read, done_pair},
    {"read@net_read_pipe", prep_pipe, run_pipe_read, done_pipe},
    {"readv@net_readv", prep_pair, run_stream_read_v, done_pair},
    {"sendto@net_write", prep_pair, run_stream_write, done_pair},
    {"sendmsg@net_writev", prep_pair, run_stream_write_v, done_pair},
    {"shutdown@net_shutdown", prep_pair, run_shutdown, done_pair},
    {"socket@bind_ip", prep_none, run_bind, prep_none},
    {"bind@bind_ip", prep_none, run_bind, prep_none},
    {"sendmsg@net_send", prep_udp, run_send, done_udp},
    {"recvmmsg@net_receive", prep_udp, run_receive, done_udp},
    {"socket@listen_unix", prep_none, run_unix_listen, prep_none},
    {"bind@listen_unix", prep_none, run_unix_listen, prep_none},
    {"listen@listen_unix", prep_none, run_unix_listen, prep_none},
    {"socket@connect_unix", prep_unix_listener, run_unix_connect, done_unix_listener},
    {"connect@connect_unix", prep_unix_listener, run_unix_connect, done_unix_listener},
    {"setsockopt@sockopt_set", prep_pair, run_sockopt_set, done_pair},
    {"getsockopt@sockopt_get", prep_pair, run_sockopt_get, done_pair},
    {"setsockopt@multicast", prep_udp, run_multicast, done_udp},
    {"getsockname@socket_address", prep_pair, run_local_address, done_pair},
    {"getpeername@socket_address", prep_pair, run_peer_address, done_pair},
};

static const net_case *net_case_of(const char *site)
{
    return (const net_case *)case_named(net_cases, sizeof net_cases / sizeof net_cases[0], sizeof net_cases[0], site);
}

static void net_fault_with(void **state, const net_case *c, const char *site, char mode, int err, int count, size_t max,
                           cio_err want, const char *fault)
{
    fx f;
    fx_open(state, &f);
    c->prep(&f);
    int fds = fd_count();
    (void)run_with_fault(&f, c->run, site, c->site, mode, err, count, max, want, fault);
    assert_int_equal(fd_count(), fds);
    covered(site, fault);
    c->done(&f);
    fx_close(&f);
}

static void net_fault(void **state, const char *site, char mode, int err, int count, size_t max, cio_err want,
                      const char *fault)
{
    net_fault_with(state, net_case_of(site), site, mode, err, count, max, want, fault);
}

/* Whether the multicast options exist here at all (qemu-user does not translate them: OptionUnsupported
 * with no fault injected); where they do not, their site's EINTR storm says so instead of failing. */
static bool multicast_options_here(void **state)
{
    cio_io io = cio_test_io(state);
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_socket s;
    if (cio_net_bind(io, &lo, NULL, &s) != CIO_OK)
        return false;
    cio_err e = cio_net_multicast_interface(io, s.handle, &lo);
    cio_socket_close(io, &s);
    return e != CIO_E_OPTION_UNSUPPORTED;
}

static void test_net_eintr_storms(void **state)
{
    bool multicast = multicast_options_here(state);
    for (size_t i = 0; i < sizeof net_cases / sizeof net_cases[0]; i++) {
        if (strcmp(net_cases[i].site, "fcntl@set_blocking") == 0)
            continue; /* not a retry site: F_GETFL/F_SETFL never sleep, EINTR is not theirs */
        if (!multicast && strcmp(net_cases[i].site, "setsockopt@multicast") == 0) {
            print_message("      note: setsockopt@multicast EINTR not run: no multicast options here (qemu-user)\n");
            continue;
        }
        net_fault(state, net_cases[i].site, 'e', EINTR, 50, 0, CIO_OK, "EINTR");
    }
    /* the timed receive: poll, then recvmmsg(MSG_DONTWAIT) (Evented: its poller, then recvmmsg) */
    static const net_case timed = {"poll@poll_one", prep_udp, run_receive_timeout, done_udp};
    if (fx_backend_of(state) == FX_THREADED)
        net_fault_with(state, &timed, "poll@poll_one", 'e', EINTR, 50, 0, CIO_OK, "EINTR");
    net_fault_with(state, &timed, "recvmmsg@net_receive", 'e', EINTR, 50, 0, CIO_OK, "EINTR");
}

static const errno_case net_errors[] = {
    E("socket@listen_ip", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@listen_ip", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("socket@listen_ip", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("setsockopt@set_int_option", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("bind@listen_ip", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("listen@listen_ip", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("getsockname@local_address", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("accept4@accept", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("accept4@accept", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("accept4@accept", ECONNABORTED, CIO_E_CONNECTION_ABORTED),
    E("socket@connect_ip", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@connect_ip", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("connect@connect_nonblocking", ECONNREFUSED, CIO_E_CONNECTION_REFUSED),
    E("connect@connect_nonblocking", ENETUNREACH, CIO_E_NETWORK_UNREACHABLE),
    E("connect@connect_nonblocking", ETIMEDOUT, CIO_E_TIMEOUT),
    E("poll@poll_one", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("fcntl@set_blocking", ENOMEM, CIO_E_UNEXPECTED), /* fcntl has no mapped error but bugs */
    E("recvfrom@net_read", ECONNRESET, CIO_E_CONNECTION_RESET_BY_PEER),
    E("recvfrom@net_read", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("read@net_read_pipe", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("readv@net_readv", ECONNRESET, CIO_E_CONNECTION_RESET_BY_PEER),
    E("readv@net_readv", ETIMEDOUT, CIO_E_TIMEOUT),
    E("sendto@net_write", EPIPE, CIO_E_BROKEN_PIPE),
    E("sendto@net_write", ECONNRESET, CIO_E_CONNECTION_RESET_BY_PEER),
    E("sendmsg@net_writev", EPIPE, CIO_E_BROKEN_PIPE),
    E("sendmsg@net_writev", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("shutdown@net_shutdown", ENOTCONN, CIO_E_SOCKET_UNCONNECTED),
    E("shutdown@net_shutdown", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("socket@bind_ip", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@bind_ip", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("bind@bind_ip", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("sendmsg@net_send", EMSGSIZE, CIO_E_MESSAGE_OVERSIZE),
    E("sendmsg@net_send", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("recvmmsg@net_receive", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("socket@listen_unix", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@listen_unix", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("bind@listen_unix", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("listen@listen_unix", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("socket@connect_unix", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@connect_unix", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("connect@connect_unix", ECONNREFUSED, CIO_E_CONNECTION_REFUSED),
    E("setsockopt@sockopt_set", ENOPROTOOPT, CIO_E_OPTION_UNSUPPORTED),
    E("setsockopt@sockopt_set", EINVAL, CIO_E_INVALID_ARGUMENT),
    E("setsockopt@sockopt_set", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("getsockopt@sockopt_get", ENOPROTOOPT, CIO_E_OPTION_UNSUPPORTED),
    E("getsockopt@sockopt_get", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("setsockopt@multicast", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("setsockopt@multicast", EADDRNOTAVAIL, CIO_E_ADDRESS_UNAVAILABLE),
    E("setsockopt@multicast", ENODEV, CIO_E_INTERFACE_NOT_FOUND),
    E("getsockname@socket_address", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("getpeername@socket_address", ENOTCONN, CIO_E_SOCKET_UNCONNECTED),
};

static void test_net_errors(void **state)
{
    for (size_t i = 0; i < sizeof net_errors / sizeof net_errors[0]; i++) {
        const errno_case *c = &net_errors[i];
        net_fault(state, c->site, 'e', c->err, 1, 0, c->want, c->name);
    }
    /* EAGAIN on a timed receive: readable yet nothing to take: wait again, then the datagram */
    static const net_case timed = {"recvmmsg@net_receive", prep_udp, run_receive_timeout, done_udp};
    net_fault_with(state, &timed, "recvmmsg@net_receive", 'e', EAGAIN, 3, 0, CIO_OK, "EAGAIN");
    /* the options struct's path: a listen whose option fails closes its socket */
    static const net_case opts = {"setsockopt@sockopt_set", prep_none, run_listen_sockopts, prep_none};
    net_fault_with(state, &opts, "setsockopt@sockopt_set", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES, "ENOMEM");
}

/* A timed stream read (cio_stream_read_timeout). Threaded (operate_posix.c): recvmsg(MSG_DONTWAIT)
 * takes what is there; with nothing there, poll, then recvmsg again (poll first after a read that
 * waited). */
static cio_err run_stream_read_timeout(fx *f)
{
    assert_ok(cio_stream_write_all(f->io, &f->a, data, 100));
    unsigned char buf[100];
    size_t done = 0;
    while (done < 100) {
        size_t n = 0;
        cio_err err = cio_stream_read_timeout(f->io, &f->b, buf + done, 100 - done, &n, cio_timeout_ms(5000));
        if (err != CIO_OK)
            return err;
        assert_true(n > 0);
        done += n;
    }
    assert_memory_equal(buf, data, 100);
    return CIO_OK;
}

/* The same, after a timed read that finds nothing and times out (so the wait really runs). */
static cio_err run_stream_read_timeout_empty(fx *f)
{
    unsigned char buf[16];
    size_t n = 7;
    cio_err err = cio_stream_read_timeout(f->io, &f->b, buf, sizeof buf, &n, cio_timeout_ms(20));
    if (err != CIO_E_TIMEOUT)
        return err == CIO_OK ? CIO_E_UNEXPECTED : err;
    assert_int_equal(n, 0);
    return run_stream_read_timeout(f);
}

/* A timed read of a stream whose bytes recvmsg never finds although poll says they are there (as
 * when another reader takes them each time): Timeout at the deadline, nothing read. */
static cio_err run_stream_read_timeout_taken(fx *f)
{
    assert_ok(cio_stream_write_all(f->io, &f->a, data, 100));
    unsigned char buf[100];
    size_t n = 7;
    cio_err err = cio_stream_read_timeout(f->io, &f->b, buf, sizeof buf, &n, cio_timeout_ms(30));
    assert_int_equal(n, 0);
    return err;
}

/* A timed stream write (cio_stream_write_all_timeout), then the bytes read back. Threaded:
 * sendmsg(MSG_DONTWAIT), and poll for room when nothing fits. */
static cio_err run_stream_write_timeout(fx *f)
{
    size_t n = 0;
    cio_err err = cio_stream_write_all_timeout(f->io, &f->a, data, DATA_LEN, &n, cio_timeout_ms(5000));
    if (err != CIO_OK)
        return err;
    assert_int_equal(n, DATA_LEN);
    stream_read_back(f);
    return CIO_OK;
}

/* A timed write to a stream whose room sendmsg never finds although poll says it is there (another
 * writer takes it each time): Timeout at the deadline, nothing written. */
static cio_err run_stream_write_timeout_taken(fx *f)
{
    size_t n = 7;
    cio_err err = cio_stream_write_all_timeout(f->io, &f->a, data, DATA_LEN, &n, cio_timeout_ms(30));
    assert_int_equal(n, 0);
    return err;
}

static void test_timed_read_faults(void **state)
{
    static const net_case timed_poll = {"poll@poll_one", prep_pair, run_stream_read_timeout_empty, done_pair};
    static const net_case timed_read = {"recvfrom@net_read", prep_pair, run_stream_read_timeout, done_pair};
    static const net_case nowait = {"recvmsg@net_read_nowait", prep_pair, run_stream_read_timeout, done_pair};
    static const net_case nowait_taken = {"recvmsg@net_read_nowait", prep_pair, run_stream_read_timeout_taken,
                                          done_pair};
    static const net_case nowait_waited = {"recvmsg@net_read_nowait", prep_pair, run_stream_read_timeout_empty,
                                           done_pair};
    static const net_case nowait_w = {"sendmsg@net_write_nowait", prep_pair, run_stream_write_timeout, done_pair};
    static const net_case nowait_w_taken = {"sendmsg@net_write_nowait", prep_pair, run_stream_write_timeout_taken,
                                            done_pair};
    fx_backend b = fx_backend_of(state);
    if (b == FX_THREADED) { /* the readiness wait is the backend's poll(2), after a non-blocking try */
        net_fault_with(state, &timed_poll, "poll@poll_one", 'e', EINTR, 50, 0, CIO_OK, "EINTR");
        net_fault_with(state, &timed_poll, "poll@poll_one", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES, "ENOMEM");
        net_fault_with(state, &nowait, "recvmsg@net_read_nowait", 'e', EINTR, 50, 0, CIO_OK, "EINTR");
        net_fault_with(state, &nowait, "recvmsg@net_read_nowait", 'e', ECONNRESET, 1, 0, CIO_E_CONNECTION_RESET_BY_PEER,
                       "ECONNRESET");
        /* EAGAIN although data is there: wait for readability, then recvmsg again */
        net_fault_with(state, &nowait, "recvmsg@net_read_nowait", 'e', EAGAIN, 1, 0, CIO_OK, "EAGAIN");
        /* after a read that waited, the next polls first: EAGAIN after its poll (another reader took
         * the data) polls again against the deadline, then reads what is there */
        net_fault_with(state, &nowait_waited, "recvmsg@net_read_nowait", 'e', EAGAIN, 2, 0, CIO_OK,
                       "EAGAIN after poll");
        /* ... and never past the deadline, however often poll and recvmsg disagree */
        net_fault_with(state, &nowait_taken, "recvmsg@net_read_nowait", 'e', EAGAIN, -1, 0, CIO_E_TIMEOUT,
                       "EAGAIN for ever");
        net_fault_with(state, &nowait_w, "sendmsg@net_write_nowait", 'e', EINTR, 50, 0, CIO_OK, "EINTR");
        net_fault_with(state, &nowait_w, "sendmsg@net_write_nowait", 'e', EPIPE, 1, 0, CIO_E_BROKEN_PIPE, "EPIPE");
        /* EAGAIN: no room yet: wait for POLLOUT and try again */
        net_fault_with(state, &nowait_w, "sendmsg@net_write_nowait", 'e', EAGAIN, 3, 0, CIO_OK, "EAGAIN");
        net_fault_with(state, &nowait_w, "sendmsg@net_write_nowait", 's', 0, -1, 7, CIO_OK, "short");
        /* ... and never past the deadline, however often poll and sendmsg disagree */
        net_fault_with(state, &nowait_w_taken, "sendmsg@net_write_nowait", 'e', EAGAIN, -1, 0, CIO_E_TIMEOUT,
                       "EAGAIN for ever");
        return; /* a timed socket read never reaches the readv site: recvmsg before and after its poll */
    }
    if (b == FX_URING) {
        (void)cio_test_io(state);
        CIO_SKIP("io_uring reads through RECVMSG on the ring, not the readv site");
    }
    net_fault_with(state, &timed_read, "recvfrom@net_read", 'e', ECONNRESET, 1, 0, CIO_E_CONNECTION_RESET_BY_PEER,
                   "ECONNRESET");
}

/* The device_io_control operation: FIONREAD on a stream with 100 bytes waiting (Evented: on the
 * helper pool, the same ioctl site). */
static cio_err run_device_io_control(fx *f)
{
    assert_ok(cio_stream_write_all(f->io, &f->a, data, 100));
    int n = -1;
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_DEVICE_IO_CONTROL;
    op.u.device_io_control.file.handle = f->b.handle;
    op.u.device_io_control.code = FIONREAD;
    op.u.device_io_control.arg = &n;
    cio_err err = cio_operate(f->io, &op);
    if (err == CIO_OK)
        err = op.err;
    if (err == CIO_OK)
        assert_int_equal(n, 100);
    unsigned char buf[100];
    size_t got = 0;
    assert_ok(cio_stream_read_all_timeout(f->io, &f->b, buf, sizeof buf, &got, CIO_TIMEOUT_NONE));
    assert_int_equal(got, 100);
    return err;
}

static void test_device_io_control_faults(void **state)
{
    static const net_case c = {"ioctl@device_io_control", prep_pair, run_device_io_control, done_pair};
    net_fault_with(state, &c, "ioctl@device_io_control", 'e', EINTR, 50, 0, CIO_OK, "EINTR");
    net_fault_with(state, &c, "ioctl@device_io_control", 'e', ENOTTY, 1, 0, CIO_E_OPERATION_UNSUPPORTED, "ENOTTY");
    net_fault_with(state, &c, "ioctl@device_io_control", 'e', EPERM, 1, 0, CIO_E_ACCESS_DENIED, "EPERM");
    net_fault_with(state, &c, "ioctl@device_io_control", 'e', EINVAL, 1, 0, CIO_E_INVALID_ARGUMENT, "EINVAL");
}

static void test_net_short_transfers(void **state)
{
    net_fault(state, "recvfrom@net_read", 's', 0, -1, 7, CIO_OK, "short");
    net_fault(state, "read@net_read_pipe", 's', 0, -1, 7, CIO_OK, "short");
    net_fault(state, "readv@net_readv", 's', 0, -1, 7, CIO_OK, "short");
    net_fault(state, "sendto@net_write", 's', 0, -1, 7, CIO_OK, "short");
    net_fault(state, "sendmsg@net_writev", 's', 0, -1, 7, CIO_OK, "short");
}

/* close of a socket: EINTR is not retried, nothing leaks */
/* Every socket site that retries EINTR: a cancel during its endless storm ends the operation with
 * Canceled and leaks no socket. */
static void test_net_storm_cancel(void **state)
{
    for (size_t i = 0; i < sizeof net_cases / sizeof net_cases[0]; i++) {
        const net_case *c = &net_cases[i];
        if (strcmp(c->site, "fcntl@set_blocking") == 0)
            continue; /* not a retry site */
        fx f;
        fx_open(state, &f);
        c->prep(&f);
        int fds = fd_count();
        storm_then_cancel(&f, c->site, c->run);
        assert_int_equal(fd_count(), fds);
        covered(c->site, "EINTR-storm+cancel");
        c->done(&f);
        fx_close(&f);
    }
}

static void test_net_close(void **state)
{
    fx f;
    fx_open(state, &f);
    prep_listener(&f);
    assert_true(cio__fault_errno("close@net_close_fd", EINTR, 0, 1) == 1);
    assert_ok(cio_server_close(f.io, &f.server)); /* closed all the same: never retried */
    assert_int_equal(cio__fault_hits("close@net_close_fd"), 1);
    cio__sys_reset();
    assert_int_equal(fd_count(), f.fds);
    covered("close@net_close_fd", "EINTR");
    fx_close(&f);
}

/* if_nametoindex cannot be armed (0 is its failure and an answer: `fail: none`), so a hook stands
 * in for it: 0 with each errno glibc's can leave (its ioctl socket failing, a name it does not know,
 * and nothing at all), and the error cio_net_interface_name_resolve must give for it. */
static _Atomic(int) nametoindex_errno;
static _Atomic(unsigned) nametoindex_calls;

static unsigned int nametoindex_fails(const char *name)
{
    (void)name;
    atomic_fetch_add(&nametoindex_calls, 1);
    errno = atomic_load(&nametoindex_errno);
    return 0;
}

static void test_interface_resolve_faults(void **state)
{
    cio_io io = cio_test_io(state);
    uint32_t lo = 0;
    assert_ok(cio_net_interface_name_resolve(io, "lo", &lo)); /* Linux always has its loopback */
    const errno_case cases[] = {
        E("if_nametoindex@interface_resolve", ENODEV, CIO_E_INTERFACE_NOT_FOUND),
        E("if_nametoindex@interface_resolve", 0, CIO_E_INTERFACE_NOT_FOUND),
        E("if_nametoindex@interface_resolve", EMFILE, CIO_E_SYSTEM_RESOURCES),
        E("if_nametoindex@interface_resolve", ENFILE, CIO_E_SYSTEM_RESOURCES),
        E("if_nametoindex@interface_resolve", ENOMEM, CIO_E_SYSTEM_RESOURCES),
        E("if_nametoindex@interface_resolve", EACCES, CIO_E_ACCESS_DENIED),
    };
    int fds = fd_count();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cio__fault_reset();
        atomic_store(&nametoindex_errno, cases[i].err);
        atomic_store(&nametoindex_calls, 0);
        cio__sys_set(if_nametoindex__interface_resolve, nametoindex_fails);
        uint32_t idx = 12345;
        cio_err err = cio_net_interface_name_resolve(io, "lo", &idx);
        cio__sys_reset();
        assert_int_equal(atomic_load(&nametoindex_calls), 1);
        if (err != cases[i].want)
            fail_msg("if_nametoindex failing with %s: %s, want %s", cases[i].name, cio_err_name(err),
                     cio_err_name(cases[i].want));
        assert_int_equal(idx, 12345); /* nothing written on failure */
        print_message("fault-covered: if_nametoindex@interface_resolve %s\n",
                      cases[i].err == 0 ? "errno-0" : cases[i].name);
    }
    /* and the real call answers again */
    uint32_t again = 0;
    assert_ok(cio_net_interface_name_resolve(io, "lo", &again));
    assert_int_equal(again, lo);
    assert_int_equal(fd_count(), fds);
}
int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_net_eintr_storms),    CIO_TESTS(test_net_errors),
        CIO_TESTS(test_timed_read_faults),   CIO_TESTS(test_device_io_control_faults),
        CIO_TESTS(test_net_short_transfers), CIO_TESTS(test_net_storm_cancel),
        CIO_TESTS(test_net_close),           CIO_TESTS(test_interface_resolve_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_POSIX_ONLY(test_net_eintr_storms),    CIO_POSIX_ONLY(test_net_errors),
        CIO_POSIX_ONLY(test_net_short_transfers), CIO_POSIX_ONLY(test_net_storm_cancel),
        CIO_POSIX_ONLY(test_net_close),           CIO_POSIX_ONLY(test_interface_resolve_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
