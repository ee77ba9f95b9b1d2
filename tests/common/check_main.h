/* check_main.h - the main() every check-framework test shares. run_suite() runs a suite with
 * check's normal output and turns the number of failed tests into the exit status (EXIT_SUCCESS
 * or EXIT_FAILURE). MANTRA_CHECK_MAIN(fn) defines a main() that runs the suite fn() builds in
 * check's default fork mode (CK_FORK from the environment, forking by default);
 * MANTRA_CHECK_MAIN_NOFORK(fn) runs it in the test process itself, for cases that share
 * process-wide state (the listener, sessions, the trace clock). A test whose main() does more
 * (arguments, environment, a skip) keeps its main() and ends it with `return run_suite(s, ...);`.
 * tests/CMakeLists.txt puts tests/common on every check test's include path. */
#ifndef MANTRA_TESTS_CHECK_MAIN_H
#define MANTRA_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

/* Runs s (and frees it); fork_mode: CK_FORK_GETENV (check's default), CK_FORK or CK_NOFORK. */
static inline int run_suite(Suite *s, enum fork_status fork_mode) {
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, fork_mode);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#define MANTRA_CHECK_MAIN(suite_fn) \
    int main(void) { return run_suite(suite_fn(), CK_FORK_GETENV); }

#define MANTRA_CHECK_MAIN_NOFORK(suite_fn) \
    int main(void) { return run_suite(suite_fn(), CK_NOFORK); }

#endif
