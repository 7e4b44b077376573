/* check_auth_source.c -- wrong passwords per address (server/auth_source.c):
 * a few cost nothing, then every answer from the address waits 250 ms,
 * doubling with each AUTH_SOURCE_FREE more up to the cap; the port is not
 * part of the address; the score halves every half-life. Times are given,
 * not read from the clock. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "suites.h"
#include "../server/auth_source.h"
#include "../server/source.h"
#include "../server/commands.h"
#include "timeutil.h"

#define MS (TIME_NS_PER_MS)
#define T0 (1000 * TIME_NS_PER_SEC)     /* a second on the clock */

static void fail_n(const char *peer, int n, uint64_t now)
{
    for (int i = 0; i < n; i++)
        auth_source_failed(peer, now);
}

START_TEST(test_auth_source_schedule)
{
    auth_source_reset();
    ck_assert_uint_eq(auth_source_delay("10.0.0.1:1000", T0), 0);
    fail_n("10.0.0.1:1000", AUTH_SOURCE_FREE, T0);
    ck_assert_uint_eq(auth_source_delay("10.0.0.1:1000", T0), 0);
    fail_n("10.0.0.1:1001", 1, T0);             /* another port: the same */
    ck_assert_uint_eq(auth_source_delay("10.0.0.1:2000", T0),
                      AUTH_DELAY_FIRST_MS * MS);
    fail_n("10.0.0.1:1", AUTH_SOURCE_FREE, T0);
    ck_assert_uint_eq(auth_source_delay("10.0.0.1:3", T0),
                      2 * AUTH_DELAY_FIRST_MS * MS);
    fail_n("10.0.0.1:1", 100 * AUTH_SOURCE_FREE, T0);
    ck_assert_uint_eq(auth_source_delay("10.0.0.1:3", T0),
                      AUTH_DELAY_MAX_MS * MS);
    /* Another address is not charged for it. */
    ck_assert_uint_eq(auth_source_delay("10.0.0.2:1000", T0), 0);
    ck_assert_uint_eq(auth_source_delay("[::1]:1000", T0), 0);
}
END_TEST

START_TEST(test_auth_source_decay)
{
    uint64_t life = AUTH_SOURCE_HALF_LIFE_S * TIME_NS_PER_SEC;

    auth_source_reset();
    fail_n("10.0.0.9:5", 2 * AUTH_SOURCE_FREE + 2, T0);    /* 14: 500 ms */
    ck_assert_uint_eq(auth_source_delay("10.0.0.9:5", T0),
                      2 * AUTH_DELAY_FIRST_MS * MS);
    ck_assert_uint_eq(auth_source_delay("10.0.0.9:5", T0 + life - 1), 
                      2 * AUTH_DELAY_FIRST_MS * MS);
    /* One half-life: 7, just past the free ones. */
    ck_assert_uint_eq(auth_source_delay("10.0.0.9:5", T0 + life),
                      AUTH_DELAY_FIRST_MS * MS);
    /* Two: 3, free again. */
    ck_assert_uint_eq(auth_source_delay("10.0.0.9:5", T0 + 2 * life), 0);
}
END_TEST

/* One child's source_hash of peer, by a pipe. */
static uint32_t child_hash(const char *peer)
{
    int fds[2];
    uint32_t h = 0;

    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        h = source_hash(peer);
        _exit(write(fds[1], &h, sizeof(h)) == sizeof(h) ? 0 : 1);
    }
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], &h, sizeof(h)), sizeof(h));
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    return h;
}

/* The hash that chooses an address's slot leaves the port out, and is
 * keyed anew in each process (source.c): children forked before this
 * process drew its key each draw their own, and four do not all agree,
 * so no client can compute which of its addresses shares a victim's
 * slot. With the FNV-1a it was, all agreed. (With CK_FORK=no an earlier
 * test may have drawn the key, which children inherit: then only the
 * port is checked.) */
START_TEST(test_source_hash_port_out_key_per_process)
{
    const char *fork_mode = getenv("CK_FORK");
    uint32_t first = child_hash("10.0.0.1:1000");
    int differ = 0;

    for (int i = 0; i < 3; i++)
        differ += child_hash("10.0.0.1:1000") != first;
    if (!fork_mode || strcmp(fork_mode, "no") != 0)
        ck_assert_int_gt(differ, 0);
    ck_assert_uint_eq(source_hash("10.0.0.1:2000"),
                      source_hash("10.0.0.1:1000"));
    ck_assert_uint_eq(source_hash("[::1]:7"), source_hash("[::1]:8"));
    ck_assert_uint_ne(source_hash("10.0.0.1:1"), source_hash("10.0.0.2:1"));
}
END_TEST

static Suite *auth_source_suite(void)
{
    Suite *s = suite_create("auth_source");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_auth_source_schedule);
    tcase_add_test(tc, test_auth_source_decay);
    tcase_add_test(tc, test_source_hash_port_out_key_per_process);
    suite_add_tcase(s, tc);
    return s;
}
SUITE_REGISTER(auth_source_suite)
