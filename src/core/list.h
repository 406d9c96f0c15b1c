/*
 * The intrusive lists of the backends (run queues, group members, futex buckets, timer FIFOs):
 * each node carries its own link fields, named by the caller, so one node can sit on several
 * lists. Macros, because the node types differ; no locking of their own (the caller holds
 * whatever guards the list).
 */
#ifndef CIO_LIST_H
#define CIO_LIST_H

/* Takes `node` off the doubly linked list whose first node is `head`, through the link fields
 * `prev` and `next` (the node's own links are left as they were). */
#define CIO__LIST_UNLINK(head, node, prev, next) \
    do {                                         \
        if ((node)->prev != NULL)                \
            (node)->prev->next = (node)->next;   \
        else                                     \
            (head) = (node)->next;               \
        if ((node)->next != NULL)                \
            (node)->next->prev = (node)->prev;   \
    } while (0)

/* The same on a list that also keeps its last node in `tail`. */
#define CIO__LIST_UNLINK_TAILED(head, tail, node, prev, next) \
    do {                                                      \
        if ((node)->next == NULL)                             \
            (tail) = (node)->prev;                            \
        CIO__LIST_UNLINK(head, node, prev, next);             \
    } while (0)

/* Appends `node` to the singly linked FIFO `head`..`tail` through its link field `next`. */
#define CIO__FIFO_PUSH(head, tail, node, next) \
    do {                                       \
        (node)->next = NULL;                   \
        if ((tail) != NULL)                    \
            (tail)->next = (node);             \
        else                                   \
            (head) = (node);                   \
        (tail) = (node);                       \
    } while (0)

/* A group's record, installed in its token (cio_group.token) by the first member of both backends:
 * `fresh` (freshly allocated with `free`-able memory, or NULL) becomes the record unless another
 * thread installed one first; then `fresh` is freed and theirs returned. NULL when fresh is. */
#define CIO__GROUP_INSTALL(type, g, fresh, out)                                                                       \
    do {                                                                                                              \
        uintptr_t expected_ = 0;                                                                                      \
        if ((fresh) == NULL || atomic_compare_exchange_strong_explicit(&(g)->token, &expected_, (uintptr_t)(fresh),   \
                                                                       memory_order_acq_rel, memory_order_acquire)) { \
            (out) = (fresh);                                                                                          \
        } else {                                                                                                      \
            free(fresh);                                                                                              \
            (out) = (type *)expected_;                                                                                \
        }                                                                                                             \
    } while (0)

#endif
