/*
 * The fiber suites' shared bits (test_fiber.c, test_fiber_stacks.c): the stack size their fibers
 * get and a skip with its reason. Include after cmocka.h.
 */
#ifndef CIO_TESTS_FIBER_HELPERS_H
#define CIO_TESTS_FIBER_HELPERS_H

#define FIBER_STACK (64u * 1024u)

#define FIBER_SKIP(reason)                           \
    do {                                             \
        print_message("      skip: %s\n", (reason)); \
        skip();                                      \
    } while (0)

#endif
