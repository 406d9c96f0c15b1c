/*
 * The Evented backend's fiber blocks: the record of a task (struct cio_any_future) with its context
 * buffer, and where they come from and go back to. A new fiber is a block plus a stack.
 *
 * Invariants: a loop's caches (blk_cache, stk_cache) are touched by its own thread only; the
 * instance's free list and the region being carved from are under free_mu (lock order: free_mu,
 * then the stack pool's lock). A block of BLOCK_CTX capacity comes from the calling loop's cache,
 * else the instance's free list, else a region; a larger one, or any when regions fail, from
 * cio__e_block_mem (blocks_mem_<os>.c: posix_memalign, _aligned_malloc). Going back it takes the same
 * ladder up to where there is room.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "evented.h"
#include "internal.h"
#include "overflow.h"
#include "internal/cio_oscalls.h"

#define BLOCK_CTX 256u
#define BLOCK_HEADER ((sizeof(struct cio_any_future) + CIO_CONTEXT_ALIGN - 1) & ~(size_t)(CIO_CONTEXT_ALIGN - 1))
#define FREE_MAX 256u
#define LOCAL_BLOCKS 1024u

/* Blocks of BLOCK_CTX capacity are carved from regions of the stack pool (cio__stack_pool_region:
 * committed ahead by its keeper thread once demand goes on) rather than one posix_memalign each: a
 * burst of new fibers then costs its spawner no allocator work, no page fault and no growth of its
 * malloc arena (B12, 2 CPUs: the loop spawning 100,000 fibers took 0.29 s with posix_memalign'd
 * blocks, 0.13 s with regions; medians of 12 runs). Lock order: free_mu, then the pool's lock. A
 * region's head counts its blocks handed out, plus one while it is the one carved from
 * (free_mu); the block given back last unmaps it. A block given back (past the loop caches and
 * the free list) is not carved again: a region lives as long as its longest-lived block, so a few
 * long-lived futures spread over many regions keep those mapped (64 KiB each, ~110 blocks: the
 * cost of not going through malloc). Under ASan blocks stay malloc'd, so it still sees their
 * overflows and uses after free. */
struct block_region {
    _Atomic(size_t) refs;
};
#define REGION_HEAD ((sizeof(struct block_region) + CIO_CONTEXT_ALIGN - 1) & ~(size_t)(CIO_CONTEXT_ALIGN - 1))

static void region_put(struct block_region *r)
{
    if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1)
        cio__stack_pool_region_free(r);
}

/* Gives a block's memory back (its region's, or the heap's). */
void cio__e_block_release(struct cio_any_future *f)
{
    struct block_region *r = (struct block_region *)f->region;
    if (r != NULL)
        region_put(r);
    else
        cio__e_block_mem_free(f);
}

/* free_mu held: a block of BLOCK_CTX capacity carved from the current region, or NULL. */
static struct cio_any_future *region_carve(struct cio_evented *e, size_t header)
{
#ifdef CIO__FIBER_ASAN
    (void)e;
    (void)header;
    return NULL;
#else
    size_t size = header + BLOCK_CTX;
    if (e->rgn_left < size) {
        bool again = e->rgn != NULL;
        if (again)
            region_put((struct block_region *)e->rgn);
        e->rgn = NULL;
        e->rgn_left = 0;
        unsigned char *m = (unsigned char *)cio__stack_pool_region(&e->stacks, again);
        if (m == NULL)
            return NULL;
        struct block_region *r = (struct block_region *)(void *)m;
        atomic_init(&r->refs, 1);
        e->rgn = r;
        e->rgn_next = m + REGION_HEAD;
        e->rgn_left = CIO__STACK_REGION - REGION_HEAD;
    }
    struct cio_any_future *f = (struct cio_any_future *)(void *)e->rgn_next;
    e->rgn_next += size;
    e->rgn_left -= size;
    atomic_fetch_add_explicit(&((struct block_region *)e->rgn)->refs, 1, memory_order_relaxed);
    f->capacity = BLOCK_CTX;
    f->ctxbuf = (unsigned char *)f + header;
    f->region = e->rgn;
    return f;
#endif
}

static struct cio_any_future *block_alloc(struct cio_evented *e, size_t ctx_size)
{
    struct cio_any_future *f = NULL;
    struct cio__e_loop *l = cio__e_local_loop(e);
    if (ctx_size <= BLOCK_CTX && l != NULL && l->blk_cache != NULL) {
        f = l->blk_cache;
        l->blk_cache = f->next;
        l->blk_count--;
    } else if (ctx_size <= BLOCK_CTX) {
        cio__mu_lock(&e->free_mu);
        f = e->free_list;
        if (f != NULL) {
            e->free_list = f->next;
            e->free_count--;
        } else {
            f = region_carve(e, BLOCK_HEADER);
        }
        cio__mu_unlock(&e->free_mu);
    }
    if (f == NULL) {
        size_t cap = ctx_size <= BLOCK_CTX ? BLOCK_CTX : ctx_size;
        size_t header = BLOCK_HEADER;
        if (cap > SIZE_MAX - header)
            return NULL;
        void *mem = cio__e_block_mem(header + cap);
        if (mem == NULL)
            return NULL;
        f = (struct cio_any_future *)mem;
        f->capacity = cap;
        f->ctxbuf = (unsigned char *)mem + header;
        f->region = NULL;
    }
    /* Field by field: ctx is set up by cio__fiber_ctx_init and stack by the caller, and a memset of
     * the whole block (a `rep stos`) was a tenth of an async+await. */
    f->next = f->cnext = f->gnext = f->gprev = NULL;
    f->owner = e;
    f->group = NULL;
    atomic_store_explicit(&f->home, NULL, memory_order_relaxed);
    f->fn = NULL;
    f->result = CIO_OK;
    f->protection = CIO_CANCEL_UNBLOCKED;
    atomic_store_explicit(&f->cancel, 0, memory_order_relaxed);
    atomic_store_explicit(&f->done, CIO__E_DONE_RUNNING, memory_order_relaxed);
    f->awaiter = NULL;
    f->handed_off = false;
    f->inline_ok = false;
    f->cancel_posted = false;
    f->glinked = false;
    atomic_store_explicit(&f->exited, false, memory_order_relaxed);
    f->wait = NULL;
    f->ctx_size = 0;
    return f;
}

void cio__e_fiber_free(struct cio_evented *e, struct cio_any_future *f)
{
    struct cio__e_loop *l = cio__e_local_loop(e);
    if (f->capacity == BLOCK_CTX && l != NULL && l->blk_count < LOCAL_BLOCKS) {
        f->next = l->blk_cache;
        l->blk_cache = f;
        l->blk_count++;
        return;
    }
    if (f->capacity == BLOCK_CTX) {
        cio__mu_lock(&e->free_mu);
        if (e->free_count < FREE_MAX) {
            f->next = e->free_list;
            e->free_list = f;
            e->free_count++;
            f = NULL;
        }
        cio__mu_unlock(&e->free_mu);
        if (f == NULL)
            return;
    }
    cio__e_block_release(f);
}

struct cio_any_future *cio__e_fiber_new(struct cio_evented *e, cio_task_fn fn, const void *ctx, size_t ctx_size,
                                        bool live)
{
    struct cio_any_future *f = block_alloc(e, ctx_size);
    if (f == NULL)
        return NULL;
    struct cio__e_loop *l = cio__e_local_loop(e);
    if (l != NULL && l->stk_count > 0) {
        f->stack = l->stk_cache[--l->stk_count];
    } else if (cio__stack_pool_get(&e->stacks, &f->stack) != CIO_OK) {
        cio__e_fiber_free(e, f);
        return NULL;
    }
    f->fn = fn;
    f->site = cio__spawn_site();
    f->ctx_size = ctx_size;
    if (ctx_size > 0)
        memcpy(f->ctxbuf, ctx, ctx_size);
    /* The context is made when a loop first starts f (start_here): one awaited while still in its
     * spawner's LIFO slot may run inline and never need it. */
    if (live)
        cio__e_live_add(e);
    return f;
}

void cio__e_blocks_free(struct cio_evented *e)
{
    for (unsigned i = 0; i < e->nloops; i++) {
        struct cio__e_loop *l = &e->loops[i];
        while (l->blk_cache != NULL) {
            struct cio_any_future *n = l->blk_cache->next;
            cio__e_block_release(l->blk_cache);
            l->blk_cache = n;
        }
        l->blk_count = 0;
    }
    struct cio_any_future *f = e->free_list;
    while (f != NULL) {
        struct cio_any_future *n = f->next;
        cio__e_block_release(f);
        f = n;
    }
    e->free_list = NULL;
    e->free_count = 0;
    if (e->rgn != NULL) /* the carver's count: blocks still out keep it mapped */
        region_put((struct block_region *)e->rgn);
    e->rgn = NULL;
}
