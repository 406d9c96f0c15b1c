/*
 * <cio.h> from C++17: the public headers compile as C++ (CIO_ATOMIC is std::atomic there, see
 * cio/atomic.h), every public struct has the layout the C library gives it (compared with
 * tests/cxx/layout.c, compiled as C), and a C++ program uses the library through them: groups, a
 * mutex and an event statically initialised with the CIO_*_INIT macros, and a futex wait on a
 * std::atomic, on each backend.
 */
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <setjmp.h>
extern "C" { /* this cmocka.h declares print_error without C linkage */
#include <cmocka.h>
}

#include <atomic>

#include <cio.h>

#include "cxx/layout.h"

namespace {

#define CXX_LAYOUT_ROW(type) {#type, sizeof(type), alignof(type)},
const cio_test_layout cxx_rows[] = {CIO_TEST_LAYOUT_TYPES(CXX_LAYOUT_ROW){nullptr, 0, 0}};

void test_layout_matches_c(void **)
{
    const cio_test_layout *c = cio_test_c_layout();
    size_t i = 0;
    for (; cxx_rows[i].name != nullptr; i++) {
        assert_non_null(c[i].name);
        assert_string_equal(c[i].name, cxx_rows[i].name);
        if (c[i].size != cxx_rows[i].size || c[i].align != cxx_rows[i].align)
            fail_msg("%s: C has size %zu align %zu, C++ size %zu align %zu", c[i].name, c[i].size, c[i].align,
                     cxx_rows[i].size, cxx_rows[i].align);
    }
    assert_null(c[i].name);
}

struct shared {
    cio_io io;
    cio_mutex mu;
    cio_event ready;
    std::atomic<uint32_t> word;
    uint32_t total;
};

struct add_ctx {
    shared *s;
    uint32_t n;
};

cio_err add_under_mutex(void *p)
{
    add_ctx *c = static_cast<add_ctx *>(p);
    cio_err e = cio_mutex_lock(c->s->io, &c->s->mu);
    if (e != CIO_OK)
        return e;
    c->s->total += c->n;
    cio_mutex_unlock(c->s->io, &c->s->mu);
    return CIO_OK;
}

cio_err set_word_then_event(void *p)
{
    shared *s = *static_cast<shared **>(p);
    s->word.store(1);
    cio_futex_wake(s->io, &s->word, UINT32_MAX);
    cio_event_set(s->io, &s->ready);
    return CIO_OK;
}

void use_from_cxx(cio_io io)
{
    static shared s = {{nullptr, nullptr}, CIO_MUTEX_INIT, CIO_EVENT_INIT, {0}, 0};
    s.io = io;
    s.total = 0;
    s.word.store(0);
    s.ready.state.store(0);
    cio_group g = CIO_GROUP_INIT;
    for (uint32_t i = 1; i <= 10; i++) {
        add_ctx c = {&s, i};
        cio_group_async(io, &g, add_under_mutex, &c, sizeof c);
    }
    assert_int_equal(cio_group_await(io, &g), CIO_OK);
    assert_int_equal(s.total, 55);

    shared *sp = &s;
    cio_future f = cio_async(io, set_word_then_event, &sp, sizeof sp);
    while (s.word.load() == 0)
        (void)cio_futex_wait(io, &s.word, 0, cio_timeout_ms(100));
    assert_int_equal(cio_event_wait(io, &s.ready), CIO_OK);
    assert_int_equal(cio_await(io, &f), CIO_OK);
}

void test_threaded_from_cxx(void **)
{
    cio_threaded *t = nullptr;
    assert_int_equal(cio_threaded_create(nullptr, &t), CIO_OK);
    use_from_cxx(cio_threaded_io(t));
    cio_threaded_destroy(t);
}

#if CIO_HAVE_EVENTED
void test_evented_from_cxx(void **)
{
    cio_evented_options o;
    std::memset(&o, 0, sizeof o);
    o.flavour = CIO_EVENTED_EPOLL;
    cio_evented *e = nullptr;
    assert_int_equal(cio_evented_create(&o, &e), CIO_OK);
    use_from_cxx(cio_evented_io(e));
    cio_evented_destroy(e);
}
#endif

} // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_matches_c),
        cmocka_unit_test(test_threaded_from_cxx),
#if CIO_HAVE_EVENTED
        cmocka_unit_test(test_evented_from_cxx),
#endif
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
