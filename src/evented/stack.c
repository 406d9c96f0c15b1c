/*
 * Fiber stacks: mmap with a guard page, and a thread-safe free list of them.
 *
 * Layout of one stack (addresses grow to the right; the stack grows to the left):
 *
 *     map                lo                                   lo + size
 *     | guard (PROT_NONE) | usable, PROT_READ|PROT_WRITE       |
 *       one page            size rounded up to whole pages
 *
 * The guard page is what turns an overflow into SIGSEGV: the first access below lo faults, so a
 * fiber running off its stack dies at once instead of writing over whatever lies below. The usable
 * part is mapped, not committed: pages cost memory only once touched. The guard is a guard region
 * (madvise MADV_GUARD_INSTALL, Linux 6.13+: a marker in the page table, so the mapping stays one
 * VMA and installing it takes the mm lock for reading only); where the kernel lacks that, the page
 * is mprotect'ed PROT_NONE, which splits the mapping (and counts against vm.max_map_count).
 *
 * The pool carves stacks out of slabs (one mmap for up to SLAB_MAX stacks, growing 4, 8, ... as
 * demand goes on), so a burst of new fibers costs one madvise per stack instead of mmap+mprotect.
 * Each carved stack still owns its own [guard, usable] range: cio__stack_free unmaps just that.
 *
 * The keeper: once demand fills a whole SLAB_MAX slab, the pool starts a thread of its own that
 * prepares the next slab while the current one is carved: it maps it and installs every guard with
 * one vectored madvise where the kernel has process_madvise on itself (else stack by stack). A slab
 * carved from a prepared one costs the carver no system call. At most READY_MAX prepared slabs wait
 * (`ready`); the keeper prepares more only when one is taken or the carver had to map one itself
 * (`want`). A slab the carver maps itself once slabs have grown to SLAB_MAX is prepared the same way
 * at once.
 * Nobody commits a stack's pages ahead (no MADV_POPULATE_WRITE of the top page): its first page
 * fault is taken by the loop thread that first runs the fiber. A fault costs the same CPU on any
 * thread (~2 us in a VM, the bulk of starting a fiber), but taken by the carver (usually a fiber
 * spawning a burst, the serial part) or by the keeper (a third thread competing for the CPUs and
 * holding the mm lock while it populates) it slowed a burst down: B12 (100,000 sleeping tasks, 2
 * CPUs) spawned in 0.39 s with the top pages committed ahead and 0.24 s without (medians of 20
 * runs; 1.39 s and 1.34 s in all), because the fibers and their faults are spread over every loop
 * by stealing. It also
 * unmaps the stacks trims take off the list (`unmap`), so the loop thread that gave a stack back
 * does not wait for the munmap. When the keeper cannot be started the pool works as before it.
 * Destroy stops and joins it (it unmaps what it was handed first).
 *
 * Block regions: the Evented scheduler carves its fiber blocks (~576 bytes each) out of regions of
 * CIO__STACK_REGION bytes (cio__stack_pool_region). The first is mapped by the caller; once a caller
 * has used one up, the keeper keeps up to REGIONS_MAX more ready, mapped and committed in one
 * contiguous MADV_POPULATE_WRITE, so a burst of spawns takes neither the allocator's nor the page
 * faults' time on the spawning thread. The pool only hands regions out; their owner unmaps them
 * (cio__stack_pool_region_free), so they may outlive it.
 *
 * The pool: `lock` guards every field but stack_size and max_cached (fixed at init); the keeper
 * waits on `wake` under it and drops it around its system calls. Cached stacks
 * are linked through a node stored at the top of their own usable part, so the pool allocates
 * nothing; a stack is written by its next owner only after the get that handed it out returned,
 * and the lock orders the put before that get. A put never unmaps one stack: unmapping in a
 * multi-threaded process costs a TLB shootdown (an interrupt to every other CPU running it), which
 * made the end of a burst of fibers slower than its start. Once more than twice max_cached stacks
 * are cached, the put that crossed the mark trims the list to max_cached: it sorts the stacks it
 * takes off by address and unmaps each run of adjacent ones (stacks of one slab, freed in about the
 * order they were carved) with one munmap.
 */
#define _DEFAULT_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fiber.h"
#include "internal/cio_oscalls.h"
#include "stack_list.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CIO__STACK_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define CIO__STACK_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#endif
#endif
#ifndef CIO__STACK_UNPOISON
#define CIO__STACK_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#ifndef MAP_STACK
#define MAP_STACK 0
#endif
#if defined(__linux__)
#include <sys/random.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* include/uapi/asm-generic/mman-common.h, Linux 5.14 */
#endif
#if !defined(MADV_GUARD_INSTALL)
#define MADV_GUARD_INSTALL 102 /* include/uapi/asm-generic/mman-common.h, Linux 6.13 */
#endif
#endif

#define SLAB_FIRST 4u
#define SLAB_MAX 64u
#define READY_MAX 2u                       /* prepared slabs waiting: the fiber.h array's size */
#define REGIONS_MAX CIO__STACK_REGIONS_MAX /* prepared block regions waiting */


static size_t page_size(void)
{
    long n = CIO__SYS(sysconf, stack_page)(_SC_PAGESIZE);
    return n > 0 ? (size_t)n : 4096u;
}

#ifdef MADV_GUARD_INSTALL
/* Whether guard regions really work here: a kernel before 6.13 refuses the advice (EINVAL), but
 * qemu-user accepts any advice and ignores it, and a guard that is not there is worse than none.
 * So once per process a guard is installed on a scratch page and the kernel is asked to write into
 * it (getrandom): EFAULT means the guard holds. */
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static bool guard_regions;

static void probe_guard_regions(void)
{
    size_t page = page_size();
    void *map = CIO__SYS(mmap, guard_probe)(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return;
    if (CIO__SYS(madvise, guard_probe)(map, page, MADV_GUARD_INSTALL) == 0) {
        ssize_t n = CIO__SYS(getrandom, guard_probe)(map, 1, GRND_NONBLOCK);
        guard_regions = n == -1 && errno == EFAULT;
    }
    CIO__SYS(munmap, guard_probe)(map, page);
}
#endif

/* Makes the page at `guard` fault on access. */
static bool install_guard(void *guard, size_t page)
{
#ifdef MADV_GUARD_INSTALL
    pthread_once(&guard_once, probe_guard_regions);
    if (guard_regions && CIO__SYS(madvise, stack_guard)(guard, page, MADV_GUARD_INSTALL) == 0)
        return true;
#endif
    /* ENOMEM: splitting the mapping would exceed vm.max_map_count. */
    return CIO__SYS(mprotect, stack_guard)(guard, page, PROT_NONE) == 0;
}

/* Vectored madvise on this process (process_madvise with the PIDFD_SELF sentinel: Linux 6.15+ for
 * the sentinel, 6.13+ for advice other than the reclaim hints on oneself), one call for a slab; only
 * where guard regions were found to work (a real kernel of 6.13 or later, not qemu-user). Once the
 * kernel refuses it (EBADF: no sentinel; EINVAL, EPERM, ENOSYS) it is not tried again; any other
 * failure (ENOMEM), or a partial result, falls back for this slab only. */
#if defined(__linux__)
#define PIDFD_SELF_PROCESS (-10001) /* PIDFD_SELF_THREAD_GROUP, include/uapi/linux/pidfd.h, Linux 6.15 */
static _Atomic(int) vectored_off;

static bool madvise_vec(const struct iovec *v, size_t n, size_t page, int advice)
{
    pthread_once(&guard_once, probe_guard_regions);
    if (!guard_regions || atomic_load_explicit(&vectored_off, memory_order_relaxed))
        return false;
    long r = CIO__SYS(process_madvise, stack_slab)(PIDFD_SELF_PROCESS, v, n, advice, 0u);
    if (r == (long)(n * page))
        return true;
    if (r < 0 && errno != ENOMEM && errno != EAGAIN && errno != EINTR)
        atomic_store_explicit(&vectored_off, 1, memory_order_relaxed);
    return false;
}
#endif

/* Installs the guards of a slab: one vectored call where the kernel has it, else one by one (a
 * guard installed twice is still one guard). */
static bool install_guards(const struct iovec *v, size_t n, size_t page)
{
#if defined(__linux__)
    if (madvise_vec(v, n, page, MADV_GUARD_INSTALL))
        return true;
#endif
    for (size_t i = 0; i < n; i++)
        if (!install_guard(v[i].iov_base, page))
            return false;
    return true;
}

/* The usable size for a requested size, and the stride (guard + usable); false if absurd. */
static bool stack_geometry(size_t size, size_t page, size_t *usable, size_t *stride)
{
    if (size > SIZE_MAX - 2 * page)
        return false;
    *usable = (size + page - 1) / page * page;
    *stride = *usable + page;
    return true;
}

static void *map_stacks(size_t bytes)
{
    void *map = CIO__SYS(mmap, fiber_stack)(NULL, bytes, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    return map == MAP_FAILED ? NULL : map; /* ENOMEM, or EAGAIN/EINVAL for an absurd size */
}

/* The stack at `map` (a stride's worth of a mapping) with its guard installed. */
static bool stack_at(char *map, size_t page, size_t usable, cio__stack *out)
{
    if (!install_guard(map, page))
        return false;
    out->map = map;
    out->map_size = usable + page;
    out->lo = map + page;
    out->size = usable;
    return true;
}

cio_err cio__stack_alloc(size_t size, cio__stack *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0)
        return CIO_E_INVALID_ARGUMENT;
    size_t page = page_size(), usable, stride;
    if (!stack_geometry(size, page, &usable, &stride))
        return CIO_E_SYSTEM_RESOURCES;
    char *map = (char *)map_stacks(stride);
    if (map == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    if (!stack_at(map, page, usable, out)) {
        CIO__SYS(munmap, stack_alloc_undo)(map, stride);
        memset(out, 0, sizeof *out);
        return CIO_E_SYSTEM_RESOURCES;
    }
    return CIO_OK;
}

void cio__stack_free(cio__stack *s)
{
    if (s->map != NULL) {
        /* Frames that died on the stack may have left ASan redzones in the shadow memory; a later
         * mapping at the same address must not inherit them. */
        CIO__STACK_UNPOISON(s->lo, s->size);
        CIO__SYS(munmap, stack_free)(s->map, s->map_size);
    }
    memset(s, 0, sizeof *s);
}

void cio__stack_pool_init(cio__stack_pool *p, size_t stack_size, size_t max_cached)
{
    memset(p, 0, sizeof *p);
    cio__mu_init(&p->lock);
    cio__cv_init(&p->wake);
    p->stack_size = stack_size;
    p->max_cached = max_cached;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const cio__stack *)a)->map, y = (uintptr_t)((const cio__stack *)b)->map;
    return x < y ? -1 : x > y;
}

/* Unmaps the stacks of a detached list of n nodes, one munmap per run of adjacent stacks. */
static void unmap_list(struct cio__stack_node *list, size_t n)
{
    cio__stack *v = (cio__stack *)CIO__SYS(malloc, stack_trim_sort)(n * sizeof *v);
    if (v == NULL) { /* no room to sort: one by one */
        cio__stack_free_list(list);
        return;
    }
    size_t k = 0;
    for (; list != NULL && k < n; list = list->next)
        v[k++] = list->stack;
    qsort(v, k, sizeof *v, by_address);
    for (size_t i = 0; i < k;) {
        char *start = (char *)v[i].map;
        size_t len = 0;
        size_t j = i;
        while (j < k && (char *)v[j].map == start + len) {
            CIO__STACK_UNPOISON(v[j].lo, v[j].size);
            len += v[j].map_size;
            j++;
        }
        CIO__SYS(munmap, stack_trim)(start, len);
        i = j;
    }
    free(v);
}

/* Unmaps the n stacks of a slab (or its rest) at map. */
static void drop_slab(void *map, size_t n, size_t stride)
{
    CIO__SYS(munmap, slab_left)(map, n * stride);
}

/* A region of CIO__STACK_REGION bytes for fiber blocks; commit: its pages committed now (in one call,
 * contiguous: cheaper than a fault per page; a kernel without MADV_POPULATE_WRITE (before 5.14)
 * leaves them to be faulted in). NULL without memory. */
static void *map_region(bool commit)
{
    void *r = CIO__SYS(mmap, block_region)(NULL, CIO__STACK_REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                           -1, 0);
    if (r == MAP_FAILED)
        return NULL;
#ifdef MADV_POPULATE_WRITE
    if (commit)
        (void)CIO__SYS(madvise, block_region)(r, CIO__STACK_REGION, MADV_POPULATE_WRITE);
#else
    (void)commit;
#endif
    return r;
}

/* ---- the keeper ---- */

/* A slab of n (<= SLAB_MAX) stacks, each with its guard installed (no page committed); NULL when it
 * cannot be mapped or guarded (nothing is left mapped then). */
static void *prepare_slab(cio__stack_pool *p, size_t n)
{
    size_t page = page_size(), usable, stride;
    if (!stack_geometry(p->stack_size, page, &usable, &stride) || n > SIZE_MAX / stride)
        return NULL;
    char *map = (char *)map_stacks(n * stride);
    if (map == NULL)
        return NULL;
    struct iovec guards[SLAB_MAX];
    for (size_t i = 0; i < n; i++) {
        guards[i].iov_base = map + i * stride;
        guards[i].iov_len = page;
    }
    if (!install_guards(guards, n, page)) {
        drop_slab(map, n, stride);
        return NULL;
    }
    return map;
}

static void *keeper_main(void *arg)
{
    cio__stack_pool *p = (cio__stack_pool *)arg;
    size_t page = page_size(), usable = 0, stride = 0;
    (void)stack_geometry(p->stack_size, page, &usable, &stride);
    cio__mu_lock(&p->lock);
    for (;;) {
        if (p->unmap != NULL) {
            struct cio__stack_node *list = p->unmap;
            size_t n = p->unmap_n;
            p->unmap = NULL;
            p->unmap_n = 0;
            cio__mu_unlock(&p->lock);
            unmap_list(list, n);
            cio__mu_lock(&p->lock);
            continue;
        }
        if (p->keeper_stop)
            break;
        if (p->want_region && p->nregions < REGIONS_MAX) {
            cio__mu_unlock(&p->lock);
            void *r = map_region(true);
            cio__mu_lock(&p->lock);
            if (r == NULL) {
                p->want_region = false; /* no memory: try again when asked again */
            } else if (p->keeper_stop) {
                cio__mu_unlock(&p->lock);
                cio__stack_pool_region_free(r);
                cio__mu_lock(&p->lock);
            } else {
                p->regions[p->nregions++] = r;
                p->regions_prepared++;
                if (p->nregions == REGIONS_MAX)
                    p->want_region = false;
            }
            continue;
        }
        if (p->want && p->nready < READY_MAX) {
            cio__mu_unlock(&p->lock);
            void *slab = prepare_slab(p, SLAB_MAX);
            cio__mu_lock(&p->lock);
            if (slab == NULL) {
                p->want = false; /* no memory or mappings: try again when asked again */
            } else if (p->keeper_stop) {
                cio__mu_unlock(&p->lock);
                drop_slab(slab, SLAB_MAX, stride);
                cio__mu_lock(&p->lock);
            } else {
                p->ready[p->nready++] = slab;
                p->prepared += SLAB_MAX;
                if (p->nready == READY_MAX)
                    p->want = false;
            }
            continue;
        }
        cio__cv_wait(&p->wake, &p->lock);
    }
    cio__mu_unlock(&p->lock);
    return NULL;
}

/* Lock held: the keeper, started on first use; false if it could not be started. */
static bool keeper_up(cio__stack_pool *p)
{
    if (p->keeper_state == 0) /* EAGAIN: no thread to be had; the pool then works without */
        p->keeper_state = CIO__SYS(pthread_create, stack_keeper)(&p->keeper, NULL, keeper_main, p) == 0 ? 1 : 2;
    return p->keeper_state == 1;
}

/* Lock held: asks the keeper for prepared slabs; false if it could not be started. */
static bool keeper_ask(cio__stack_pool *p)
{
    if (!keeper_up(p))
        return false;
    p->want = true;
    cio__cv_signal(&p->wake);
    return true;
}

void *cio__stack_pool_region(cio__stack_pool *p, bool again)
{
    cio__mu_lock(&p->lock);
    void *r = NULL;
    if (p->nregions > 0) {
        r = p->regions[--p->nregions];
        p->regions[p->nregions] = NULL;
    }
    if (again && keeper_up(p)) { /* the next one */
        p->want_region = true;
        cio__cv_signal(&p->wake);
    }
    cio__mu_unlock(&p->lock);
    return r != NULL ? r : map_region(false);
}

void cio__stack_pool_region_free(void *region)
{
    CIO__STACK_UNPOISON(region, CIO__STACK_REGION);
    CIO__SYS(munmap, block_region)(region, CIO__STACK_REGION);
}

/* Carves the next stack out of the current slab, taking the keeper's prepared slab or mapping a new
 * one when it is used up (lock held). */
static cio_err carve(cio__stack_pool *p, cio__stack *out)
{
    size_t page = page_size(), usable, stride;
    if (p->stack_size == 0)
        return CIO_E_INVALID_ARGUMENT;
    if (!stack_geometry(p->stack_size, page, &usable, &stride))
        return CIO_E_SYSTEM_RESOURCES;
    if (p->carve_left == 0 && p->nready > 0) {
        p->carve = p->ready[0];
        p->carve_left = SLAB_MAX;
        p->carve_ready = true;
        p->ready[0] = p->ready[1];
        p->ready[1] = NULL;
        p->nready--;
        (void)keeper_ask(p); /* the next one */
    } else if (p->carve_left == 0) {
        size_t n = p->slab_next != 0 ? p->slab_next : SLAB_FIRST;
        char *map = NULL;
        /* Demand fills whole slabs: this one is prepared at once like the keeper's (one vectored
         * call for its guards beats a call per stack), and the keeper is asked to prepare the next
         * ones. */
        p->carve_ready = n == SLAB_MAX && (map = (char *)prepare_slab(p, n)) != NULL;
        if (n == SLAB_MAX)
            (void)keeper_ask(p);
        while (map == NULL && n > 0 && (n > SIZE_MAX / stride || (map = (char *)map_stacks(n * stride)) == NULL))
            n /= 2; /* no room for a whole slab: try a smaller one, down to a single stack */
        if (map == NULL)
            return CIO_E_SYSTEM_RESOURCES;
        p->carve = map;
        p->carve_left = n;
        p->slab_next = n * 2 <= SLAB_MAX ? n * 2 : SLAB_MAX;
    }
    char *map = (char *)p->carve;
    if (p->carve_ready) {
        out->map = map;
        out->map_size = stride;
        out->lo = map + page;
        out->size = usable;
    } else if (!stack_at(map, page, usable, out)) {
        /* The mapping count is exhausted: give the rest of the slab back, and start small again. */
        CIO__SYS(munmap, stack_undo)(map, p->carve_left * stride);
        p->carve = NULL;
        p->carve_left = 0;
        p->slab_next = SLAB_FIRST;
        memset(out, 0, sizeof *out);
        return CIO_E_SYSTEM_RESOURCES;
    }
    p->carve = map + stride;
    p->carve_left--;
    p->created++;
    return CIO_OK;
}

cio_err cio__stack_pool_get(cio__stack_pool *p, cio__stack *out)
{
    cio__mu_lock(&p->lock);
    cio_err err = cio__stack_pool_take(p, out) ? CIO_OK : carve(p, out);
    cio__mu_unlock(&p->lock);
    return err;
}

void cio__stack_pool_put(cio__stack_pool *p, cio__stack *s)
{
    if (s->map == NULL)
        return;
    if (s->size < sizeof(struct cio__stack_node) + _Alignof(struct cio__stack_node)) {
        cio__stack_free(s);
        return;
    }
    /* The node overwrites what the last fiber left at its stack top: ASan may have it poisoned. */
    struct cio__stack_node *n = cio__stack_node_of(s);
    CIO__STACK_UNPOISON(n, sizeof *n);
    n->stack = *s;
    memset(s, 0, sizeof *s);
    cio__mu_lock(&p->lock);
    n->next = p->head;
    p->head = n;
    p->cached++;
    struct cio__stack_node *trim = NULL;
    size_t ntrim = 0;
    if (p->cached > 2 * p->max_cached) {
        ntrim = p->cached - p->max_cached;
        trim = p->head;
        struct cio__stack_node *last = trim;
        for (size_t i = 1; i < ntrim; i++)
            last = last->next;
        p->head = last->next;
        last->next = NULL;
        p->cached = p->max_cached;
        p->trimmed += ntrim;
        if (p->keeper_state == 1) { /* the keeper unmaps them, off this (a loop's) thread */
            last->next = p->unmap;
            p->unmap = trim;
            p->unmap_n += ntrim;
            trim = NULL;
            cio__cv_signal(&p->wake);
        }
    }
    cio__mu_unlock(&p->lock);
    if (trim != NULL)
        unmap_list(trim, ntrim);
}

void cio__stack_pool_destroy(cio__stack_pool *p)
{
    cio__mu_lock(&p->lock);
    bool join = p->keeper_state == 1;
    p->keeper_stop = true;
    cio__cv_signal(&p->wake);
    cio__mu_unlock(&p->lock);
    if (join)
        pthread_join(p->keeper, NULL); /* it has unmapped every trimmed stack */
    cio__mu_lock(&p->lock);
    struct cio__stack_node *n = p->head;
    p->head = NULL;
    p->cached = 0;
    size_t page = page_size(), usable, stride;
    if (stack_geometry(p->stack_size, page, &usable, &stride)) {
        if (p->carve_left > 0)
            drop_slab(p->carve, p->carve_left, stride);
        for (unsigned i = 0; i < p->nready; i++)
            drop_slab(p->ready[i], SLAB_MAX, stride);
    }
    p->carve = p->ready[0] = p->ready[1] = NULL;
    p->carve_left = 0;
    p->nready = 0;
    void *regions[CIO__STACK_REGIONS_MAX];
    unsigned nregions = p->nregions;
    memcpy(regions, p->regions, sizeof regions);
    p->nregions = 0;
    cio__mu_unlock(&p->lock);
    for (unsigned i = 0; i < nregions; i++)
        cio__stack_pool_region_free(regions[i]);
    cio__stack_free_list(n);
    cio__cv_destroy(&p->wake);
    cio__mu_destroy(&p->lock);
}
