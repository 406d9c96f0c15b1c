/*
 * clang emits _Thread_local on OpenBSD as emulated TLS: every access calls
 * __emutls_get_address(control). On OpenBSD that function comes from libcompiler_rt.a, which the
 * system's clang links into every program; with no sysroot there is no such archive, so this is the
 * same runtime, written for these programs only (never built into libcio).
 *
 * Invariants:
 * - control->object.index is 0 until the variable's first use anywhere; then a process-wide index
 *   (1, 2, ...) assigned once under `mu` and published with release order.
 * - Each thread has an array of object pointers, indexed by index - 1, kept in a pthread key whose
 *   destructor frees the objects and the array at thread exit. Objects are allocated on first use
 *   in a thread and initialised from the template (or zeroed).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct __emutls_control {
    size_t size;
    size_t align;
    union {
        _Atomic(uintptr_t) index;
        void *address;
    } object;
    void *value;
};

typedef struct {
    size_t len;
    void *obj[];
} slots;

void *__emutls_get_address(struct __emutls_control *control);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t next_index = 1;
static pthread_key_t key;

static void free_slots(void *p)
{
    slots *s = p;
    for (size_t i = 0; i < s->len; i++)
        free(s->obj[i]);
    free(s);
}

static uintptr_t index_of(struct __emutls_control *c)
{
    uintptr_t i = atomic_load_explicit(&c->object.index, memory_order_acquire);
    if (i != 0)
        return i;
    pthread_mutex_lock(&mu);
    i = atomic_load_explicit(&c->object.index, memory_order_relaxed);
    if (i == 0) {
        if (next_index == 1 && pthread_key_create(&key, free_slots) != 0)
            abort();
        i = next_index++;
        atomic_store_explicit(&c->object.index, i, memory_order_release);
    }
    pthread_mutex_unlock(&mu);
    return i;
}

void *__emutls_get_address(struct __emutls_control *control)
{
    uintptr_t i = index_of(control);
    slots *s = pthread_getspecific(key);
    if (s == NULL || s->len < i) {
        size_t len = i + 16;
        slots *n = realloc(s, sizeof *n + len * sizeof n->obj[0]);
        if (n == NULL)
            abort();
        for (size_t k = s == NULL ? 0 : n->len; k < len; k++)
            n->obj[k] = NULL;
        n->len = len;
        s = n;
        if (pthread_setspecific(key, s) != 0)
            abort();
    }
    void *obj = s->obj[i - 1];
    if (obj == NULL) {
        size_t align = control->align < sizeof(void *) ? sizeof(void *) : control->align;
        if (posix_memalign(&obj, align, control->size) != 0)
            abort();
        if (control->value != NULL)
            memcpy(obj, control->value, control->size);
        else
            memset(obj, 0, control->size);
        s->obj[i - 1] = obj;
    }
    return obj;
}
