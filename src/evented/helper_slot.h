/*
 * One helper-pool trampoline per slot, written once: CIO__E_HELPER_SLOT(slot, n, T1, a1, ..., Tn, an)
 * defines cio__e_<slot>(void *ud, T1 a1, ..., Tn an), which packs its arguments into a struct on the
 * calling fiber's stack and runs cio__os_<slot>(NULL, a1, ..., an) on the helper pool (helper.c,
 * cio__e_helper), the wait for it being a cancellation point. For the slots that have no
 * asynchronous form; the struct lives until cio__e_helper returns, which is after the helper is done.
 */
#ifndef CIO_EVENTED_HELPER_SLOT_H
#define CIO_EVENTED_HELPER_SLOT_H

#include "evented.h"
#include "os.h"

/* The (type, name) pairs as struct fields, parameters, initialiser values and struct members. */
#define CIO__E_HS_FIELD(T, x) T x;
#define CIO__E_HS_PARAM(T, x) , T x
#define CIO__E_HS_VALUE(T, x) x,
#define CIO__E_HS_MEMBER(T, x) , a->x
#define CIO__E_HS_EACH1(m, T, x) m(T, x)
#define CIO__E_HS_EACH2(m, T, x, ...) m(T, x) CIO__E_HS_EACH1(m, __VA_ARGS__)
#define CIO__E_HS_EACH3(m, T, x, ...) m(T, x) CIO__E_HS_EACH2(m, __VA_ARGS__)
#define CIO__E_HS_EACH4(m, T, x, ...) m(T, x) CIO__E_HS_EACH3(m, __VA_ARGS__)
#define CIO__E_HS_EACH5(m, T, x, ...) m(T, x) CIO__E_HS_EACH4(m, __VA_ARGS__)
#define CIO__E_HS_EACH6(m, T, x, ...) m(T, x) CIO__E_HS_EACH5(m, __VA_ARGS__)

#define CIO__E_HELPER_SLOT(slot, n, ...)                                              \
    struct a_##slot {                                                                 \
        CIO__E_HS_EACH##n(CIO__E_HS_FIELD, __VA_ARGS__)                               \
    };                                                                                \
    static cio_err h_##slot(void *p)                                                  \
    {                                                                                 \
        struct a_##slot *a = (struct a_##slot *)p;                                    \
        return cio__os_##slot(NULL CIO__E_HS_EACH##n(CIO__E_HS_MEMBER, __VA_ARGS__)); \
    }                                                                                 \
    cio_err cio__e_##slot(void *ud CIO__E_HS_EACH##n(CIO__E_HS_PARAM, __VA_ARGS__))   \
    {                                                                                 \
        struct a_##slot a = {CIO__E_HS_EACH##n(CIO__E_HS_VALUE, __VA_ARGS__)};        \
        return cio__e_helper((struct cio_evented *)ud, h_##slot, &a, true);           \
    }

#endif
