/*
 * The fiber stacks of the Evented backend (src/evented/fiber.h): allocation, alignment inside a
 * fiber, the pool (recycling, its cap, pages committed only when used, regions, two threads), a
 * fiber resumed on another thread, and a stack overflow hitting the guard page.
 *
 * Fibers never call cmocka asserts (a failed assert longjmps, which must not cross stacks): they
 * record what they saw in shared state, and the thread context checks it after switching back.
 */
#define _DEFAULT_SOURCE 1
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/evented/fiber.h"
#include "fiber_helpers.h"

static size_t page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* ==== stacks ===================================================================================== */

static void test_stack_alloc(void **state)
{
    (void)state;
    cio__stack s;
    assert_int_equal(cio__stack_alloc(1, &s), CIO_OK);
    assert_int_equal(s.size, page());
    assert_int_equal((uintptr_t)s.lo % page(), 0);
    assert_ptr_equal((char *)s.map + page(), s.lo);
    assert_int_equal(s.map_size, 2 * page());
    memset(s.lo, 0xa5, s.size); /* all of it is writable */
    cio__stack_free(&s);
    assert_null(s.map);

    assert_int_equal(cio__stack_alloc(FIBER_STACK + 1, &s), CIO_OK);
    assert_int_equal(s.size, FIBER_STACK + page());
    cio__stack_free(&s);

    assert_int_equal(cio__stack_alloc(0, &s), CIO_E_INVALID_ARGUMENT);
    assert_null(s.map);
    assert_int_equal(cio__stack_alloc(SIZE_MAX, &s), CIO_E_SYSTEM_RESOURCES);
    assert_int_equal(cio__stack_alloc(SIZE_MAX - page(), &s), CIO_E_SYSTEM_RESOURCES);
    assert_null(s.map);
    cio__stack_free(&s); /* freeing an empty stack is harmless */
}

/* ==== stack alignment inside a fiber ================================================================ */

struct align {
    cio__fiber_ctx thread, fiber;
    uintptr_t frame_entry, frame_nested, frame_resumed, local;
};

static __attribute__((noinline)) uintptr_t frame_of_callee(void)
{
    return (uintptr_t)__builtin_frame_address(0);
}

static void align_fiber(void *arg)
{
    struct align *a = (struct align *)arg;
    _Alignas(16) volatile unsigned char local[16];
    local[0] = 1;
    a->local = (uintptr_t)local;
    a->frame_entry = (uintptr_t)__builtin_frame_address(0);
    a->frame_nested = frame_of_callee();
    cio__fiber_switch(&a->fiber, &a->thread);
    a->frame_resumed = frame_of_callee();
    cio__fiber_exit(&a->fiber, &a->thread);
}

static void test_fiber_stack_alignment(void **state)
{
    (void)state;
    cio__stack s;
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &s), CIO_OK);
    /* Stack tops at every 8-byte offset: the context must align its first frame itself. */
    for (size_t cut = 0; cut < 64; cut += 8) {
        static struct align a;
        memset(&a, 0, sizeof a);
        cio__fiber_ctx_thread(&a.thread);
        cio__fiber_ctx_init(&a.fiber, s.lo, s.size - cut, align_fiber, &a);
        cio__fiber_switch(&a.thread, &a.fiber);
        cio__fiber_switch(&a.thread, &a.fiber);
        uintptr_t lo = (uintptr_t)s.lo, hi = lo + s.size - cut;
        assert_true(a.frame_entry > lo && a.frame_entry <= hi); /* riscv: the frame address is the CFA */
        assert_int_equal(a.frame_entry % 16, 0);
        assert_int_equal(a.frame_nested % 16, 0);
        assert_int_equal(a.frame_resumed % 16, 0);
        assert_int_equal(a.local % 16, 0);
        cio__fiber_ctx_release(&a.fiber);
    }
    cio__stack_free(&s);
}

/* ==== 1,000 fibers from the pool, at most SLOTS alive at once, stacks recycled ==================== */

#define MANY 1000
#define SLOTS 8

struct many;
struct many_fiber {
    cio__fiber_ctx ctx;
    cio__stack stack;
    struct many *m;
    unsigned id;
    bool live, done;
};

struct many {
    cio__fiber_ctx thread;
    struct many_fiber slot[SLOTS];
    uint64_t sum; /* what the fibers computed */
    unsigned ran; /* fibers that ran to completion */
};

static void many_entry(void *arg)
{
    struct many_fiber *f = (struct many_fiber *)arg;
    /* Touch a few KiB of the stack, and yield id % 4 times before finishing. */
    volatile unsigned char scratch[2048];
    memset((void *)scratch, (int)(f->id & 0xff), sizeof scratch);
    uint64_t v = f->id;
    for (unsigned y = 0; y < f->id % 4; y++) {
        cio__fiber_switch(&f->ctx, &f->m->thread);
        v += scratch[y * 100];
    }
    f->m->sum += v;
    f->m->ran++;
    f->done = true;
    cio__fiber_exit(&f->ctx, &f->m->thread);
}

static void test_fiber_many_from_pool(void **state)
{
    (void)state;
    static struct many m;
    memset(&m, 0, sizeof m);
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, SLOTS);
    cio__fiber_ctx_thread(&m.thread);
    unsigned started = 0, live = 0;
    uint64_t want = 0;
    void *seen_first = NULL;
    bool first_reused = false;
    while (started < MANY || live > 0) {
        for (int i = 0; i < SLOTS && started < MANY; i++) {
            struct many_fiber *f = &m.slot[i];
            if (f->live)
                continue;
            assert_int_equal(cio__stack_pool_get(&pool, &f->stack), CIO_OK);
            if (started == 0)
                seen_first = f->stack.lo;
            else if (f->stack.lo == seen_first)
                first_reused = true;
            f->m = &m;
            f->id = started++;
            f->live = true;
            f->done = false;
            want += f->id + (uint64_t)(f->id & 0xff) * (f->id % 4);
            cio__fiber_ctx_init(&f->ctx, f->stack.lo, f->stack.size, many_entry, f);
            live++;
        }
        for (int i = 0; i < SLOTS; i++) {
            struct many_fiber *f = &m.slot[i];
            if (!f->live)
                continue;
            cio__fiber_switch(&m.thread, &f->ctx);
            if (f->done) {
                cio__fiber_ctx_release(&f->ctx);
                cio__stack_pool_put(&pool, &f->stack);
                assert_null(f->stack.map);
                f->live = false;
                live--;
            }
        }
    }
    assert_int_equal(m.ran, MANY);
    assert_int_equal(m.sum, want);
    /* Never more than SLOTS stacks existed; every other fiber ran on a recycled one. */
    assert_true(pool.created <= SLOTS);
    assert_int_equal(pool.created + pool.reused, MANY);
    assert_true(first_reused);
    assert_true(pool.cached <= SLOTS);
    cio__stack_pool_destroy(&pool);
}

/* Whether the page at p is mapped: a range of /proc/self/maps holds it (read, not probed with a system
 * call on the address, which memcheck would report as unaddressable). */
static bool mapped(void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    uintptr_t a = (uintptr_t)p;
    bool found = false;
    unsigned long lo, hi;
    char line[512];
    while (!found && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
            found = true;
    fclose(f);
    return found;
}

/* The cap: past twice max_cached, a put trims the list to max_cached and the trimmed stacks are
 * unmapped; the rest are handed out again. */
static void test_stack_pool_cap(void **state)
{
    (void)state;
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, 2);
    cio__stack s[6];
    void *at[6];
    for (int i = 0; i < 6; i++) {
        assert_int_equal(cio__stack_pool_get(&pool, &s[i]), CIO_OK);
        at[i] = s[i].lo;
    }
    assert_int_equal(pool.created, 6);
    for (int i = 0; i < 4; i++)
        cio__stack_pool_put(&pool, &s[i]);
    assert_int_equal(pool.cached, 4); /* up to 2 * max_cached: kept */
    assert_int_equal(pool.trimmed, 0);
    cio__stack_pool_put(&pool, &s[4]);
    assert_int_equal(pool.cached, 2); /* crossed: trimmed to max_cached */
    assert_int_equal(pool.trimmed, 3);
    int gone = 0;
    for (int i = 0; i < 5; i++)
        gone += !mapped(at[i]);
    assert_int_equal(gone, 3);
    assert_true(mapped(at[5]));
    cio__stack_pool_put(&pool, &s[5]);
    for (int i = 0; i < 4; i++)
        assert_int_equal(cio__stack_pool_get(&pool, &s[i]), CIO_OK);
    assert_int_equal(pool.reused, 3);
    assert_int_equal(pool.created, 7);
    for (int i = 0; i < 4; i++)
        cio__stack_pool_put(&pool, &s[i]);
    cio__stack_pool_destroy(&pool);
}

/* Whether the page holding p is resident (committed). */
static bool resident(const void *p)
{
    uintptr_t pg = (uintptr_t)p & ~(uintptr_t)(page() - 1);
    unsigned char vec[1] = {0};
    assert_int_equal(mincore((void *)pg, page(), (void *)vec), 0);
    return (vec[0] & 1) != 0;
}

/* The pool commits no page of a stack ahead of its fiber, in the slabs it maps itself and in those its
 * keeper prepares: the first page fault of a stack is taken by the thread that runs on it (for a
 * burst of fibers, spread over the loops that run them; see stack.c). Every stack is still guarded. */
#define COMMIT_STACKS 400 /* past the slabs of 4 .. 64 the pool maps itself (124 stacks): the keeper starts */
static void test_stack_pool_commits_nothing(void **state)
{
    (void)state;
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, 2 * COMMIT_STACKS);
    cio__stack *s = (cio__stack *)calloc(2 * COMMIT_STACKS, sizeof *s);
    assert_non_null(s);
    for (size_t i = 0; i < COMMIT_STACKS; i++)
        assert_int_equal(cio__stack_pool_get(&pool, &s[i]), CIO_OK);
    for (int i = 0; i < 500; i++) { /* the keeper's slabs */
        pthread_mutex_lock(&pool.lock);
        size_t prepared = pool.prepared;
        pthread_mutex_unlock(&pool.lock);
        if (prepared > 0)
            break;
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
    }
    for (size_t i = COMMIT_STACKS; i < 2 * COMMIT_STACKS; i++)
        assert_int_equal(cio__stack_pool_get(&pool, &s[i]), CIO_OK);
    pthread_mutex_lock(&pool.lock);
    size_t prepared = pool.prepared;
    pthread_mutex_unlock(&pool.lock);
    size_t committed = 0;
    for (size_t i = 0; i < 2 * COMMIT_STACKS; i++)
        committed += resident((char *)s[i].lo + s[i].size - 1);
    for (size_t i = 0; i < 2 * COMMIT_STACKS; i++) { /* still usable, and used: resident now */
        ((volatile char *)s[i].lo)[s[i].size - 1] = 1;
        assert_true(resident((char *)s[i].lo + s[i].size - 1));
    }
    for (size_t i = 0; i < 2 * COMMIT_STACKS; i++)
        cio__stack_pool_put(&pool, &s[i]);
    free(s);
    cio__stack_pool_destroy(&pool);
    if (committed != 0)
        fail_msg("%zu of %d fresh stacks had their top page committed ahead", committed, 2 * COMMIT_STACKS);
    if (prepared == 0)
        fail_msg("the keeper prepared no slab");
}

/* Whether MADV_POPULATE_WRITE commits pages here. */
static bool populate_commits(void)
{
    void *m = mmap(NULL, page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    bool yes = madvise(m, page(), 23 /* MADV_POPULATE_WRITE */) == 0 && resident(m);
    munmap(m, page());
    if (!yes)
        print_message(
            "MADV_POPULATE_WRITE commits nothing here (qemu-user ignores it; before Linux 5.14 it is refused)\n");
    return yes;
}

/* Regions for fiber blocks: the first is mapped by the caller (nothing committed, no keeper started);
 * once the caller says demand goes on, the keeper prepares the next ones with every page committed
 * (so the fibers' spawner takes no fault on them), zeroed and writable; they may outlive the pool. */
static void test_stack_pool_regions(void **state)
{
    (void)state;
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, 4);
    unsigned char *first = (unsigned char *)cio__stack_pool_region(&pool, false);
    assert_non_null(first);
    assert_false(resident(first));
    assert_int_equal(pool.keeper_state, 0);
    unsigned char *second = (unsigned char *)cio__stack_pool_region(&pool, true);
    assert_non_null(second);
    size_t prepared = 0;
    for (int i = 0; i < 500 && prepared == 0; i++) {
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
        pthread_mutex_lock(&pool.lock);
        prepared = pool.regions_prepared;
        pthread_mutex_unlock(&pool.lock);
    }
    if (prepared == 0)
        fail_msg("the keeper prepared no region");
    unsigned char *third = (unsigned char *)cio__stack_pool_region(&pool, true);
    assert_non_null(third);
    size_t committed = 0;
    for (size_t off = 0; off < CIO__STACK_REGION; off += page())
        committed += resident(third + off);
    for (size_t off = 0; off < CIO__STACK_REGION; off += 512) {
        assert_int_equal(third[off], 0);
        third[off] = 1;
    }
    cio__stack_pool_destroy(&pool);
    third[0] = 2; /* still mapped: regions are the caller's until given back */
    cio__stack_pool_region_free(first);
    cio__stack_pool_region_free(second);
    cio__stack_pool_region_free(third);
    if (committed != CIO__STACK_REGION / page()) {
        if (!populate_commits())
            skip(); /* qemu-user takes MADV_POPULATE_WRITE and ignores it; a kernel before 5.14 refuses it */
        fail_msg("%zu of %zu pages of a prepared region committed", committed, (size_t)(CIO__STACK_REGION / page()));
    }
}

/* ==== the pool from two threads, and a fiber resumed on another thread ============================ */

#define POOL_THREAD_ROUNDS 2000

struct pool_thread {
    cio__stack_pool *pool;
    unsigned bad;
};

static void *pool_thread_main(void *arg)
{
    struct pool_thread *t = (struct pool_thread *)arg;
    for (int i = 0; i < POOL_THREAD_ROUNDS; i++) {
        cio__stack s;
        if (cio__stack_pool_get(t->pool, &s) != CIO_OK) {
            t->bad++;
            continue;
        }
        unsigned char *top = (unsigned char *)s.lo + s.size - 64;
        top[0] = (unsigned char)i;
        *(unsigned char *)s.lo = (unsigned char)i;
        if (top[0] != (unsigned char)i)
            t->bad++;
        cio__stack_pool_put(t->pool, &s);
    }
    return NULL;
}

static void test_stack_pool_threads(void **state)
{
    (void)state;
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, 4);
    struct pool_thread t[2] = {{&pool, 0}, {&pool, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, pool_thread_main, &t[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(t[0].bad + t[1].bad, 0);
    assert_int_equal(pool.created + pool.reused, 2 * POOL_THREAD_ROUNDS);
    assert_true(pool.created <= 2 * POOL_THREAD_ROUNDS);
    assert_true(pool.cached <= 4);
    cio__stack_pool_destroy(&pool);
}

/* A fiber started on one thread and resumed on another (how work stealing moves fibers). */
struct migrate {
    cio__fiber_ctx fiber;
    cio__fiber_ctx *sched; /* the context of the thread running the fiber now */
    uint64_t value;
    int steps;
};

static void migrate_fiber(void *arg)
{
    struct migrate *g = (struct migrate *)arg;
    for (int i = 0; i < 4; i++) {
        g->value = g->value * 3 + 1;
        g->steps++;
        cio__fiber_switch(&g->fiber, g->sched);
    }
    g->steps++;
    cio__fiber_exit(&g->fiber, g->sched);
}

static void *migrate_thread(void *arg)
{
    struct migrate *g = (struct migrate *)arg;
    cio__fiber_ctx me;
    cio__fiber_ctx_thread(&me);
    g->sched = &me;
    cio__fiber_switch(&me, &g->fiber);
    cio__fiber_ctx_release(&me);
    return NULL;
}

static void test_fiber_migrates_between_threads(void **state)
{
    (void)state;
    static struct migrate g;
    memset(&g, 0, sizeof g);
    cio__stack s;
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &s), CIO_OK);
    cio__fiber_ctx_init(&g.fiber, s.lo, s.size, migrate_fiber, &g);
    /* Five threads in turn each run the fiber up to its next switch (joining orders them). */
    for (int i = 0; i < 5; i++) {
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, migrate_thread, &g), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(g.steps, i + 1);
    }
    assert_int_equal(g.value, 40); /* 0 → 1 → 4 → 13 → 40 */
    cio__fiber_ctx_release(&g.fiber);
    cio__stack_free(&s);
}

/* ==== stack overflow hits the guard page ============================================================ */

/* Shared with the child process. */
struct overflow_report {
    uintptr_t stack_lo;
    uintptr_t lowest;     /* the lowest frame the recursion reached */
    uintptr_t fault_addr; /* si_addr of the SIGSEGV */
    int faulted;
};

static struct overflow_report *overflow_shared;
static volatile int overflow_limit = 1 << 30;

static __attribute__((noinline)) int overflow_recurse(int depth)
{
    volatile unsigned char pad[200];
    pad[0] = (unsigned char)depth;
    overflow_shared->lowest = (uintptr_t)pad;
    if (depth >= overflow_limit)
        return pad[0];
    return overflow_recurse(depth + 1) + pad[0];
}

static void overflow_fiber(void *arg)
{
    (void)arg;
    overflow_recurse(0);
    _exit(3); /* the recursion ended: the guard page did not stop it */
}

static void overflow_segv(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    overflow_shared->fault_addr = (uintptr_t)info->si_addr;
    overflow_shared->faulted = 1;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL); /* returning re-runs the access, which now kills the process */
}

static void test_fiber_stack_overflow_hits_guard(void **state)
{
    (void)state;
    overflow_shared = (struct overflow_report *)mmap(NULL, sizeof *overflow_shared, PROT_READ | PROT_WRITE,
                                                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(overflow_shared != MAP_FAILED);
    memset(overflow_shared, 0, sizeof *overflow_shared);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(overflow_shared, sizeof *overflow_shared);
        FIBER_SKIP("fork failed: cannot run the overflow in a child process");
    }
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        static unsigned char altstack[64 * 1024];
        stack_t ss;
        memset(&ss, 0, sizeof ss);
        ss.ss_sp = altstack;
        ss.ss_size = sizeof altstack;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = overflow_segv;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGSEGV, &sa, NULL) != 0)
            _exit(4);
        cio__stack s;
        if (cio__stack_alloc(FIBER_STACK, &s) != CIO_OK)
            _exit(5);
        overflow_shared->stack_lo = (uintptr_t)s.lo;
        cio__fiber_ctx thread, fiber;
        cio__fiber_ctx_thread(&thread);
        cio__fiber_ctx_init(&fiber, s.lo, s.size, overflow_fiber, NULL);
        cio__fiber_switch(&thread, &fiber);
        _exit(6);
    }
    int status = 0;
    pid_t w;
    do
        w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);
    assert_int_equal(w, pid);
    struct overflow_report r = *overflow_shared;
    munmap(overflow_shared, sizeof *overflow_shared);
    if (WIFEXITED(status))
        fail_msg("the child exited with %d instead of dying of SIGSEGV", WEXITSTATUS(status));
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
    /* It ran all the way down, and the fault was in the guard page right below the stack. */
    assert_true(r.faulted);
    assert_true(r.lowest >= r.stack_lo && r.lowest < r.stack_lo + 4096);
    assert_true(r.fault_addr < r.stack_lo && r.fault_addr >= r.stack_lo - page());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_alloc),
        cmocka_unit_test(test_fiber_stack_alignment),
        cmocka_unit_test(test_fiber_many_from_pool),
        cmocka_unit_test(test_stack_pool_cap),
        cmocka_unit_test(test_stack_pool_commits_nothing),
        cmocka_unit_test(test_stack_pool_regions),
        cmocka_unit_test(test_stack_pool_threads),
        cmocka_unit_test(test_fiber_migrates_between_threads),
        cmocka_unit_test(test_fiber_stack_overflow_hits_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
