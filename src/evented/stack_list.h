/*
 * The stack pools' free list, shared by stack.c (mmap, POSIX) and stack_windows.c (VirtualAlloc):
 * cached stacks are linked through a node stored at the top of their own usable part (the part of a
 * stack every fiber touches), so the pool allocates nothing for them.
 */
#ifndef CIO_EVENTED_STACK_LIST_H
#define CIO_EVENTED_STACK_LIST_H

#include <stdint.h>

#include "fiber.h"

struct cio__stack_node {
    struct cio__stack_node *next;
    cio__stack stack;
};

/* Where s's node goes: the top of its usable part, aligned for the node. */
static inline struct cio__stack_node *cio__stack_node_of(const cio__stack *s)
{
    uintptr_t top = (uintptr_t)s->lo + s->size - sizeof(struct cio__stack_node);
    return (struct cio__stack_node *)(top & ~(uintptr_t)(_Alignof(struct cio__stack_node) - 1));
}

/* p->lock held: takes the most recently cached stack into *out (counted as reused); false if none. */
static inline bool cio__stack_pool_take(cio__stack_pool *p, cio__stack *out)
{
    struct cio__stack_node *n = p->head;
    if (n == NULL)
        return false;
    p->head = n->next;
    p->cached--;
    p->reused++;
    *out = n->stack;
    return true;
}

/* Frees every stack of a detached list, one by one (cio__stack_free). */
static inline void cio__stack_free_list(struct cio__stack_node *n)
{
    while (n != NULL) {
        struct cio__stack_node *next = n->next;
        cio__stack s = n->stack;
        cio__stack_free(&s);
        n = next;
    }
}

#endif /* CIO_EVENTED_STACK_LIST_H */
