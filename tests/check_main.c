/* check_main.c -- the unit-test runner: every suite that registered itself
 * with SUITE_REGISTER runs, in fork mode so one crash cannot hide the rest.
 * Exits with the number of failures (capped), as check's examples do.
 */
#include <stdio.h>
#include <stdlib.h>
#include "suites.h"

#define MAX_SUITES 64           /* more registered suites are a build error */

static suite_fn suites[MAX_SUITES];
static int nsuites;

void suite_register(suite_fn fn)
{
    if (nsuites == MAX_SUITES) {
        fprintf(stderr, "check_main: more than %d suites\n", MAX_SUITES);
        abort();
    }
    suites[nsuites++] = fn;
}

int main(void)
{
    SRunner *sr = srunner_create(NULL);
    for (int i = 0; i < nsuites; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed > 125 ? 125 : failed;
}
