/*
 * What tests/test_resolve.c and tests/test_resolve_tcp.c share: temporary files, a lookup that
 * collects its results, and a dnsmasq started on loopback (under Wine: the Linux dnsmasq, through
 * a shell). Included once per suite; everything is static inline.
 */
#ifndef CIO_TEST_RESOLVE_HELPERS_H
#define CIO_TEST_RESOLVE_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "os_helpers.h"

#ifndef CIO_TEST_SUITE_TAG
#define CIO_TEST_SUITE_TAG "resolve" /* tells the suites' dnsmasq stop files apart */
#endif

#if defined(CIO_OS_WINDOWS)
/* Under Wine the Linux dnsmasq is started as a Unix process from the Windows test (Wine's
 * CreateProcess runs ELF binaries), through a shell that stops it when a stop file appears (Wine
 * gives no waitable or killable handle for a Unix process, nor its stdin): the test creates the
 * file as Z:\tmp\..., the shell sees it as /tmp/... . The shell gives up after two minutes. */
#define DNSMASQ_WIN "Z:\\usr\\sbin\\dnsmasq"
#define SHELL_WIN "Z:\\bin\\sh"
#define OWN_PID ((long)GetCurrentProcessId())
#else
#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#define OWN_PID ((long)getpid())
#endif

#define DNSMASQ "/usr/sbin/dnsmasq"

static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Every path tmp_path hands out, removed when the program ends (atexit), whatever became of the
 * test that wrote it: a failed assertion leaves its test halfway, before its own remove(). */
#define TMP_FILES_MAX 32
static char tmp_files[TMP_FILES_MAX][128];
static size_t tmp_count;

static inline void remove_tmp_files(void)
{
    for (size_t i = 0; i < tmp_count; i++)
        (void)remove(tmp_files[i]);
    tmp_count = 0;
}

static inline void tmp_path(char *buf, size_t len, const char *what)
{
    snprintf(buf, len, "%scio_test_resolve_%ld_%s", cio_test_tmp_root(), OWN_PID, what);
    for (size_t i = 0; i < tmp_count; i++)
        if (strcmp(tmp_files[i], buf) == 0)
            return;
    assert_true(tmp_count < TMP_FILES_MAX && strlen(buf) < sizeof tmp_files[0]);
    strcpy(tmp_files[tmp_count++], buf);
}

/* Writes a resolv.conf with `text` and an empty hosts file (both named after `what`) so that a lookup
 * asks DNS only; the paths go into `resolv` and `hosts`. */
static inline void dns_only_files(const char *what, const char *text, char resolv[128], char hosts[128])
{
    char name[64];
    snprintf(name, sizeof name, "resolv_%s", what);
    tmp_path(resolv, 128, name);
    snprintf(name, sizeof name, "hosts_%s", what);
    tmp_path(hosts, 128, name);
    write_text(resolv, text);
    write_text(hosts, "");
}

#define COLLECT_MAX 400 /* addresses a lookup may return here (the 300-record name fits) */

typedef struct collected {
    size_t naddrs;
    cio_ip_address addrs[COLLECT_MAX];
    int canonicals;
    char canonical[CIO_HOST_NAME_MAX + 1];
} collected;

/* Runs the lookup with a queue big enough never to block, then drains it (one lookup at a time:
 * the queue's storage is static). More than COLLECT_MAX addresses fail the test. */
static inline cio_err lookup(cio_io io, const char *name, const cio_lookup_options *o, collected *c)
{
    static cio_lookup_result buf[COLLECT_MAX + 2];
    cio_queue q;
    cio_queue_init(&q, buf, sizeof buf[0], COLLECT_MAX + 2);
    memset(c, 0, sizeof *c);
    cio_err err = cio_hostname_lookup(io, name, o, &q);
    cio_lookup_result r;
    while (cio_queue_get_one(io, &q, &r) == CIO_OK) {
        if (r.kind == CIO_LOOKUP_ADDRESS) {
            assert_true(c->naddrs < COLLECT_MAX);
            c->addrs[c->naddrs++] = r.address;
        } else if (r.kind == CIO_LOOKUP_CANONICAL_NAME) {
            c->canonicals++;
            memcpy(c->canonical, r.canonical_name, sizeof c->canonical);
        }
    }
    /* closed on return */
    assert_int_equal(cio_queue_put_one(io, &q, &r), CIO_E_CLOSED);
    return err;
}

static inline bool has(const collected *c, const char *ip)
{
    cio_ip_address a;
    if (cio_ip_parse(ip, 0, &a) != CIO_OK)
        return false;
    for (size_t i = 0; i < c->naddrs; i++) {
        cio_ip_address b = c->addrs[i];
        b.port = 0;
        if (cio_ip_equal(&a, &b))
            return true;
    }
    return false;
}

/* ---- dnsmasq ---------------------------------------------------------------------------------- */

#if !defined(CIO_OS_WINDOWS)
typedef pid_t dns_server;

static inline bool dnsmasq_installed(void)
{
    return access(DNSMASQ, X_OK) == 0;
}

static inline bool dns_server_started(dns_server pid)
{
    return pid > 0;
}

static inline dns_server start_dnsmasq(uint16_t port, const char *extra)
{
    char portarg[32];
    snprintf(portarg, sizeof portarg, "--port=%u", (unsigned)port);
    char *argv[] = {(char *)DNSMASQ,
                    (char *)"--keep-in-foreground",
                    (char *)"--conf-file=/dev/null",
                    (char *)"--no-resolv",
                    (char *)"--no-hosts",
                    (char *)"--no-dhcp-interface=",
                    portarg,
                    (char *)"--listen-address=127.0.0.1",
                    (char *)"--bind-interfaces",
                    (char *)"--pid-file=",
                    (char *)"--local=/test/",
                    (char *)"--host-record=both.test,127.0.0.10,::10",
                    (char *)"--host-record=v4only.test,127.0.0.11",
                    (char *)"--host-record=v6only.test,::11",
                    (char *)"--cname=alias.test,mid.test",
                    (char *)"--cname=mid.test,both.test",
                    (char *)"--host-record=www.search.test,127.0.0.12",
                    NULL,
                    NULL,
                    NULL,
                    NULL,
                    NULL,
                    NULL,
                    NULL,
                    NULL,
                    NULL};
    /* `extra`: more arguments, separated by single spaces (at most 8) */
    static char extra_copy[1024];
    snprintf(extra_copy, sizeof extra_copy, "%s", extra != NULL ? extra : "");
    size_t argc = 0;
    while (argv[argc] != NULL)
        argc++;
    for (char *p = strtok(extra_copy, " "); p != NULL && argc + 1 < sizeof argv / sizeof argv[0]; p = strtok(NULL, " "))
        argv[argc++] = p;
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execv(DNSMASQ, argv);
        _exit(127);
    }
    return pid;
}

static inline void stop_dnsmasq(pid_t pid)
{
    int status;
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
}

/* False once the server exited (it could not bind its port: taken meanwhile by another test). */
static inline bool dns_server_alive(dns_server pid)
{
    int status;
    return waitpid(pid, &status, WNOHANG) == 0;
}
#else
typedef struct dns_server {
    bool started;
    char stop_file[96]; /* the Windows name of /tmp/cio_test_resolve_<suite>_<pid>_<n>_stop */
} dns_server;

static inline bool dnsmasq_installed(void)
{
    return GetFileAttributesA(DNSMASQ_WIN) != INVALID_FILE_ATTRIBUTES &&
           GetFileAttributesA(SHELL_WIN) != INVALID_FILE_ATTRIBUTES;
}

static inline bool dns_server_started(dns_server h)
{
    return h.started;
}

static inline dns_server start_dnsmasq(uint16_t port, const char *extra)
{
    /* a stop file per start: a start right after a stop must not delete the file the previous
     * shell has yet to see (Wine's process ids are small and reused: the suite is in the name) */
    static unsigned starts;
    starts++;
    dns_server h = {false, ""};
    char unix_stop[96];
    snprintf(unix_stop, sizeof unix_stop, "/tmp/cio_test_resolve_%s_%ld_%u_stop", CIO_TEST_SUITE_TAG, OWN_PID, starts);
    snprintf(h.stop_file, sizeof h.stop_file, "Z:\\tmp\\cio_test_resolve_%s_%ld_%u_stop", CIO_TEST_SUITE_TAG, OWN_PID,
             starts);
    DeleteFileA(h.stop_file);
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             SHELL_WIN " -c \"" DNSMASQ " --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts"
                       " --no-dhcp-interface= --port=%u --listen-address=127.0.0.1 --bind-interfaces --pid-file="
                       " --local=/test/ --host-record=both.test,127.0.0.10,::10 --host-record=v4only.test,127.0.0.11"
                       " --host-record=v6only.test,::11 --cname=alias.test,mid.test --cname=mid.test,both.test"
                       " --host-record=www.search.test,127.0.0.12 %s </dev/null >/dev/null 2>&1 & p=$!; i=0;"
                       " while [ ! -e %s ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; kill $p; rm -f %s\"",
             (unsigned)port, extra != NULL ? extra : "", unix_stop, unix_stop);
    STARTUPINFOA si;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    PROCESS_INFORMATION pi;
    if (!CreateProcessA(SHELL_WIN, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
        return h;
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    h.started = true;
    return h;
}

static inline void stop_dnsmasq(dns_server h)
{
    HANDLE f = CreateFileA(h.stop_file, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    if (f != INVALID_HANDLE_VALUE)
        CloseHandle(f);
}

static inline bool dns_server_alive(dns_server h)
{
    return h.started; /* the shell's dnsmasq cannot be watched from here: the retries below wait */
}
#endif

/* Starts dnsmasq (the test zone plus `extra` arguments) on a free port of 127.0.0.1 and waits until
 * it answers `probe`: true with *server and *port set. A port taken between the probe and dnsmasq's
 * bind (suites run side by side) means a fresh port and a fresh start, three times at most. */
static inline bool dnsmasq_serving(cio_io io, const char *extra, const char *probe, const cio_lookup_options *base,
                                   dns_server *server, uint16_t *port)
{
    cio_socket sock;
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_lookup_options o = *base;
    char resolv[128], hosts[128]; /* a short timeout while dnsmasq starts */
    dns_only_files("probe", "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n", resolv, hosts);
    o.resolv_conf = resolv;
    o.hosts_file = hosts;
    collected *c = (collected *)malloc(sizeof *c);
    assert_non_null(c);
    cio_err err = CIO_E_NAME_SERVER_FAILURE;
    for (int start = 0; start < 4 && err != CIO_OK; start++) {
        assert_int_equal(cio_net_bind(io, &lo, NULL, &sock), CIO_OK);
        *port = sock.address.port;
        cio_socket_close(io, &sock);
        *server = start_dnsmasq(*port, extra);
        assert_true(dns_server_started(*server));
        o.dns_port = *port;
        for (int i = 0; i < 50 && err != CIO_OK && dns_server_alive(*server); i++) {
            err = lookup(io, probe, &o, c);
            if (err != CIO_OK)
                cio_sleep(io, cio_timeout_ms(100));
        }
        if (err != CIO_OK)
            stop_dnsmasq(*server);
    }
    free(c);
    return err == CIO_OK;
}

#endif
