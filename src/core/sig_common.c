/*
 * The OS-independent half of signals: names, number checks and cio_sigset, all table-driven from
 * the generated CIO__SIG_LIST of the target being compiled.
 */
#include <stddef.h>
#include <string.h>

#include "cio/sig.h"
#include "sig_internal.h"

typedef struct sig_entry {
    int number;
    const char *name;
} sig_entry;

static const sig_entry sig_table[] = {
#define CIO__ENTRY(name, number) {number, #name},
    CIO__SIG_LIST(CIO__ENTRY)
#undef CIO__ENTRY
        {0, NULL}};

static const sig_entry *find(int number)
{
    if (number <= 0 || number > CIO_SIG_MAX_NUMBER)
        return NULL;
    for (const sig_entry *e = sig_table; e->name != NULL; e++)
        if (e->number == number)
            return e;
    return NULL;
}

bool cio__sig_valid(cio_sig sig)
{
    return find((int)sig) != NULL;
}

cio_err cio__sigaction_check(cio_sig sig, const struct cio_sigaction *act, cio_sig_handler foreign)
{
    const sig_entry *e = find((int)sig);
    if (e == NULL)
        return CIO_E_INVALID_SIGNAL;
    if (act != NULL && act->handler == foreign)
        return CIO_E_INVALID_ARGUMENT;
    if (act != NULL && (strcmp(e->name, "KILL") == 0 || strcmp(e->name, "STOP") == 0))
        return CIO_E_INVALID_SIGNAL;
    return CIO_OK;
}

const char *cio_sig_name(cio_sig sig)
{
    const sig_entry *e = find((int)sig);
    return e != NULL ? e->name : NULL;
}

cio_err cio_sig_from_number(int number, cio_sig *out)
{
    const sig_entry *e = find(number);
    if (e == NULL)
        return CIO_E_INVALID_SIGNAL;
    *out = (cio_sig)e->number;
    return CIO_OK;
}

static bool bit_index(cio_sig sig, unsigned *word, uint64_t *mask)
{
    if (!cio__sig_valid(sig) || (int)sig > 128)
        return false;
    unsigned i = (unsigned)sig - 1u;
    *word = i / 64u;
    *mask = (uint64_t)1 << (i % 64u);
    return true;
}

void cio_sigset_empty(cio_sigset *set)
{
    set->bits[0] = 0;
    set->bits[1] = 0;
}

void cio_sigset_fill(cio_sigset *set)
{
    cio_sigset_empty(set);
    for (const sig_entry *e = sig_table; e->name != NULL; e++)
        (void)cio_sigset_add(set, (cio_sig)e->number);
}

cio_err cio_sigset_add(cio_sigset *set, cio_sig sig)
{
    unsigned w;
    uint64_t m;
    if (!bit_index(sig, &w, &m))
        return CIO_E_INVALID_SIGNAL;
    set->bits[w] |= m;
    return CIO_OK;
}

cio_err cio_sigset_del(cio_sigset *set, cio_sig sig)
{
    unsigned w;
    uint64_t m;
    if (!bit_index(sig, &w, &m))
        return CIO_E_INVALID_SIGNAL;
    set->bits[w] &= ~m;
    return CIO_OK;
}

bool cio_sigset_has(const cio_sigset *set, cio_sig sig)
{
    unsigned w;
    uint64_t m;
    if (!bit_index(sig, &w, &m))
        return false;
    return (set->bits[w] & m) != 0;
}
