/*
 * Fiber stacks on Windows: VirtualAlloc with a guard page, and a thread-safe free list of them.
 *
 * Layout of one stack (addresses grow to the right; the stack grows to the left):
 *
 *     map                          lo                                  lo + size
 *     | guard (reserved, no access) | committed, PAGE_READWRITE          |
 *       CIO__STACK_GUARD bytes        size rounded up to whole pages
 *
 * One reservation per stack (VirtualFree releases only whole reservations, so stacks are not carved
 * out of slabs as stack.c does with mmap); the guard page is reserved and never committed, so the
 * first access below lo is an access violation, and fiber_x86_64_windows.c tells the OS the
 * stack's bounds (StackBase = lo + size, StackLimit = lo, DeallocationStack = map). The usable part
 * is committed at once: commit charge, not memory (a page costs memory once touched), and no stack
 * growth through PAGE_GUARD is needed, so a probe (__chkstk) of any page of the stack succeeds.
 *
 * The pool: `lock` guards the list and the counters; cached stacks are linked through a node at
 * the top of their own usable part (as in stack.c). Past 2 * max_cached cached stacks, the put that
 * crossed the mark releases the oldest down to max_cached. There is no keeper thread here (fiber.h's
 * keeper fields stay zero): a reservation costs one call, and regions are committed when mapped.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdint.h>
#include <string.h>

#include "fiber.h"
#include "internal/cio_oscalls.h"
#include "stack_list.h"

/* The usable size for a requested size (whole pages); false if absurd. */
static bool stack_geometry(size_t size, size_t *usable)
{
    if (size > SIZE_MAX / 2)
        return false;
    *usable = (size + CIO__STACK_GUARD - 1) / CIO__STACK_GUARD * CIO__STACK_GUARD;
    return true;
}

cio_err cio__stack_alloc(size_t size, cio__stack *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0)
        return CIO_E_INVALID_ARGUMENT;
    size_t usable;
    if (!stack_geometry(size, &usable))
        return CIO_E_SYSTEM_RESOURCES;
    char *map = (char *)CIO__SYS(VirtualAlloc, stack_reserve)(NULL, usable + CIO__STACK_GUARD, MEM_RESERVE,
                                                              PAGE_NOACCESS);
    if (map == NULL) /* ERROR_NOT_ENOUGH_MEMORY: no address space */
        return CIO_E_SYSTEM_RESOURCES;
    if (CIO__SYS(VirtualAlloc, stack_commit)(map + CIO__STACK_GUARD, usable, MEM_COMMIT, PAGE_READWRITE) == NULL) {
        /* ERROR_COMMITMENT_LIMIT: the page file is full */
        CIO__SYS(VirtualFree, stack_undo)(map, 0, MEM_RELEASE);
        return CIO_E_SYSTEM_RESOURCES;
    }
    out->map = map;
    out->map_size = usable + CIO__STACK_GUARD;
    out->lo = map + CIO__STACK_GUARD;
    out->size = usable;
    return CIO_OK;
}

void cio__stack_free(cio__stack *s)
{
    if (s->map != NULL)
        CIO__SYS(VirtualFree, stack_free)(s->map, 0, MEM_RELEASE);
    memset(s, 0, sizeof *s);
}

void cio__stack_pool_init(cio__stack_pool *p, size_t stack_size, size_t max_cached)
{
    memset(p, 0, sizeof *p);
    cio__mu_init(&p->lock);
    p->stack_size = stack_size;
    p->max_cached = max_cached;
}

void *cio__stack_pool_region(cio__stack_pool *p, bool again)
{
    (void)p;
    (void)again;
    return CIO__SYS(VirtualAlloc, block_region)(NULL, CIO__STACK_REGION, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

void cio__stack_pool_region_free(void *region)
{
    CIO__SYS(VirtualFree, block_region)(region, 0, MEM_RELEASE);
}

cio_err cio__stack_pool_get(cio__stack_pool *p, cio__stack *out)
{
    cio__mu_lock(&p->lock);
    bool cached = cio__stack_pool_take(p, out);
    cio__mu_unlock(&p->lock);
    if (cached)
        return CIO_OK;
    cio_err err = p->stack_size == 0 ? CIO_E_INVALID_ARGUMENT : cio__stack_alloc(p->stack_size, out);
    if (err == CIO_OK) {
        cio__mu_lock(&p->lock);
        p->created++;
        cio__mu_unlock(&p->lock);
    }
    return err;
}

void cio__stack_pool_put(cio__stack_pool *p, cio__stack *s)
{
    if (s->map == NULL)
        return;
    struct cio__stack_node *n = cio__stack_node_of(s);
    n->stack = *s;
    memset(s, 0, sizeof *s);
    cio__mu_lock(&p->lock);
    n->next = p->head;
    p->head = n;
    p->cached++;
    struct cio__stack_node *trim = NULL;
    if (p->cached > 2 * p->max_cached) {
        struct cio__stack_node *keep = p->head;
        for (size_t i = 1; i < p->max_cached; i++)
            keep = keep->next;
        if (p->max_cached == 0) {
            trim = p->head;
            p->head = NULL;
        } else {
            trim = keep->next;
            keep->next = NULL;
        }
        p->trimmed += p->cached - p->max_cached;
        p->cached = p->max_cached;
    }
    cio__mu_unlock(&p->lock);
    cio__stack_free_list(trim);
}

void cio__stack_pool_destroy(cio__stack_pool *p)
{
    cio__mu_lock(&p->lock);
    struct cio__stack_node *n = p->head;
    p->head = NULL;
    p->cached = 0;
    cio__mu_unlock(&p->lock);
    cio__stack_free_list(n);
    cio__mu_destroy(&p->lock);
}
