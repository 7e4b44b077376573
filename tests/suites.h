/* suites.h -- how a tests/check_<module>.c file adds its suite to the one
 * unit-test runner (tests/check_main.c) without editing the runner:
 *
 *     static Suite *rbtree_suite(void) { ... }
 *     SUITE_REGISTER(rbtree_suite)
 */
#ifndef SSN_TESTS_SUITES_H
#define SSN_TESTS_SUITES_H

#include <check.h>

typedef Suite *(*suite_fn)(void);
void suite_register(suite_fn fn);

#define SUITE_REGISTER(fn) \
    __attribute__((constructor)) static void register_##fn(void) \
    { suite_register(fn); }

#endif
