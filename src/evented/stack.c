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
 * part is mapped, not committed: pages cost memory only once touched.
 *
 * The pool: `lock` guards every field but stack_size and max_cached (fixed at init). Cached stacks
 * are linked through a node stored at the top of their own usable part, so the pool allocates
 * nothing; a stack is written by its next owner only after the get that handed it out returned,
 * and the lock orders the put before that get.
 */
#define _DEFAULT_SOURCE 1
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fiber.h"
#include "internal/cio_oscalls.h"

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

struct cio__stack_node {
    struct cio__stack_node *next;
    cio__stack stack;
};

static size_t page_size(void)
{
    long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? (size_t)n : 4096u;
}

cio_err cio__stack_alloc(size_t size, cio__stack *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0)
        return CIO_E_INVALID_ARGUMENT;
    size_t page = page_size();
    if (size > SIZE_MAX - 2 * page)
        return CIO_E_SYSTEM_RESOURCES;
    size_t usable = (size + page - 1) / page * page;
    size_t total = usable + page;
    void *map = CIO__SYS(mmap, fiber_stack)(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (map == MAP_FAILED)
        return CIO_E_SYSTEM_RESOURCES; /* ENOMEM, or EAGAIN/EINVAL for an absurd size */
    if (CIO__SYS(mprotect, stack_guard)(map, page, PROT_NONE) != 0) {
        /* ENOMEM: splitting the mapping would exceed vm.max_map_count. */
        CIO__SYS(munmap, stack_undo)(map, total);
        return CIO_E_SYSTEM_RESOURCES;
    }
    out->map = map;
    out->map_size = total;
    out->lo = (char *)map + page;
    out->size = usable;
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
    pthread_mutex_init(&p->lock, NULL);
    p->stack_size = stack_size;
    p->max_cached = max_cached;
}

static struct cio__stack_node *node_of(const cio__stack *s)
{
    /* The top of the usable part, aligned for the node. */
    uintptr_t top = (uintptr_t)s->lo + s->size - sizeof(struct cio__stack_node);
    return (struct cio__stack_node *)(top & ~(uintptr_t)(_Alignof(struct cio__stack_node) - 1));
}

cio_err cio__stack_pool_get(cio__stack_pool *p, cio__stack *out)
{
    pthread_mutex_lock(&p->lock);
    struct cio__stack_node *n = p->head;
    if (n != NULL) {
        p->head = n->next;
        p->cached--;
        p->reused++;
        *out = n->stack;
        pthread_mutex_unlock(&p->lock);
        return CIO_OK;
    }
    pthread_mutex_unlock(&p->lock);
    cio_err err = cio__stack_alloc(p->stack_size, out);
    if (err == CIO_OK) {
        pthread_mutex_lock(&p->lock);
        p->created++;
        pthread_mutex_unlock(&p->lock);
    }
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
    struct cio__stack_node *n = node_of(s);
    CIO__STACK_UNPOISON(n, sizeof *n);
    n->stack = *s;
    pthread_mutex_lock(&p->lock);
    if (p->cached < p->max_cached) {
        n->next = p->head;
        p->head = n;
        p->cached++;
        pthread_mutex_unlock(&p->lock);
        memset(s, 0, sizeof *s);
        return;
    }
    pthread_mutex_unlock(&p->lock);
    cio__stack_free(s);
}

void cio__stack_pool_destroy(cio__stack_pool *p)
{
    pthread_mutex_lock(&p->lock);
    struct cio__stack_node *n = p->head;
    p->head = NULL;
    p->cached = 0;
    pthread_mutex_unlock(&p->lock);
    while (n != NULL) {
        struct cio__stack_node *next = n->next;
        cio__stack s = n->stack;
        cio__stack_free(&s);
        n = next;
    }
    pthread_mutex_destroy(&p->lock);
}
