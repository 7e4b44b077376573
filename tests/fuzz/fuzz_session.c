/* fuzz_session.c -- one client's whole request path on any bytes, with no
 * socket: the telnet filter, the line reader, the parser and every command
 * (commands.c, auth.c, print.c, tree.c, stats.c, trace_cmd.c), on the
 * server's own store (srv.store) under the lock policy of the build
 * (lockmode_build.c, buffered in tests/fuzz/fuzz.mk), with a session whose
 * drivers are the target's own (fuzz_session_drive.c). They feed the
 * session as server/net/threads.c does (session_recv_space,
 * session_received, session_flush, session_release) or as
 * server/net/econn.c does (slices, rounds, sessions parked between reads,
 * listings held by reference until the "socket" takes them).
 *
 * This file reads the input and runs one session; the rest is shared
 * through fuzz_session.h: fuzz_session_drive.c (the client and the two
 * drivers), fuzz_session_model.c (the reference model),
 * fuzz_session_reply.c (each request's reply) and fuzz_session_check.c
 * (the conversation and the store once the session has ended).
 *
 * Input: byte 0 is the setting, byte 1 seeds the chunk sizes, the rest is
 * what the client types.
 *   bit 0      the server has a password (FUZZ_PASSWORD)
 *   bit 1      the event driver (always, with a password: see below)
 *   bits 2-3   --batch 32, 1, 2 or 4 (requests one store-lock hold covers)
 *   bits 4-5   --max-output 64m, 4096 (the least options.c allows), 5000
 *              or 16k
 *   bit 6      --quiet (no OK, no Bye), thread driver only (--stdin's)
 *   bit 7      the client goes away: sends fail from the (1 + byte1 / 16)th
 * Byte 1 = 0: each read takes what the session has room for (a thread's
 * first read of an idle session at most 2048 bytes, as read_idle); else
 * reads of 1 to 2, 8, 64 or 1200 bytes (byte 1 & 3), sizes drawn from it.
 * Inputs under 2 bytes are skipped.
 *
 * No input can make the target sleep. A wrong AUTH's delay (250 ms to
 * 2 s) is a sleep in the thread driver (auth.c, answer_at), so inputs with
 * a password run the event driver, whose AUTH waits on a timer instead
 * (SESSION_WAITS_TIMER): the target's clock skips the delay, setting
 * wait_until to 0 as if the timer had fired. No other request waits: the
 * store has no journal (COMPACT answers at once), there is no trace file
 * (TRACE STOP too), no race window, and nothing else holds the lock.
 *
 * The oracle, after each input (docs/PROTOCOL.md):
 *   - no reply byte is sent while this thread holds the store lock for a
 *     store operation; only a streamed PRINT (fine) uses send_locked, and
 *     it begins with nothing queued;
 *   - the session keeps its driver promises: it begins at once (nobody
 *     else holds the lock); room to receive while it is not ending; no
 *     reply waiting for a journal record, and no request waiting for a
 *     journal, a trace file or a lock holder it does not have; one that
 *     waits (AUTH's timer, the output draining) answered once the wait is
 *     over; a round's callback made for its one session with no lock
 *     held; a refused send ending the session with its error (-EPIPE);
 *     no store lock held once it has ended;
 *   - the bytes received are replies and telnet answers (IAC WONT x or
 *     IAC DONT x) only; the answers are the telnet filter's, in order,
 *     all of them unless a send failed or they alone reach the output
 *     limit; no reply line has a control byte, DEL, 0xFE or 0xFF;
 *   - every request gets exactly one reply, in order, and a blank line
 *     none (under --quiet, neither does an ADD or DELETE that did it, nor
 *     QUIT): a reference model (the people added and not deleted, sorted
 *     as the tree is) says what each reply must be: a line over 1024
 *     bytes gets "Error: line too long", a request the parser refuses its
 *     error, anything but AUTH, HELP and QUIT before AUTH "Error:
 *     authentication required"; ADD's and DELETE's OK or error, FIND's
 *     line, PRINT's listing, COUNT, CHECK, DIGEST (its own SHA-256 of the
 *     model's dump), STATS' entries, STATS RESET's OK, TREE's shape and
 *     size, HELP, AUTH's answers, QUIT's Bye, and COMPACT's and TRACE's
 *     answers with no journal and no trace file; each within its bound
 *     (PRINT's and HELP's exact, STATS' STATS_MAX, TREE's its levels);
 *     "Error: output limit exceeded" may replace a reply, under a limit
 *     below the default only, and ends the session; the session ends at
 *     QUIT, the third wrong password or the limit, and only there, and
 *     nothing is answered after; no reply says "Error: out of memory",
 *     since no allocation fails here (ASan aborts instead);
 *   - store_check_locked finds the tree and its index consistent, and the
 *     store holds exactly the model's people, in order (unless a send
 *     failed: then replies the model never saw may have changed it).
 * The store is then emptied by DELETEs (checked again: each person
 * deleted by name, the emptied store empty and consistent) and made
 * afresh, so that no input's history (the index's size, a rehash under
 * way, the lock's figures, PRINT's cached listing) changes how the next
 * one runs.
 */
#include <string.h>
#include "fuzz.h"
#include "fuzz_session.h"
#include "auth_source.h"
#include "lockmode.h"
#include "log.h"
#include "server.h"
#include "session.h"

#define FLAG_PASSWORD   0x01
#define FLAG_EVENTS     0x02
#define FLAG_QUIET      0x40
#define FLAG_SEND_FAILS 0x80

static struct session_pool thread_pool;     /* threads.c's, shared */
static struct session_pool event_pool;      /* one event worker's */

/* Once per process: the digest, the password's hash, the store, the
 * pools, a log that keeps only errors (a wrong AUTH logs a warning). */
static void init_once(void)
{
    static int done;
    struct digest *d;

    if (done)
        return;
    done = 1;
    FUZZ_CHECK(digest_global_init() == 0, "the digest");
    d = digest_new();
    FUZZ_CHECK(d && digest_hex(d, FUZZ_PASSWORD, strlen(FUZZ_PASSWORD),
                               srv.password_hex) == 0, "the password's hash");
    digest_free(d);
    clock_gettime(CLOCK_MONOTONIC, &srv.started);
    pthread_mutex_init(&srv.conns_lock, NULL);
    srv.opt.batch = 32;
    srv.opt.sched_batch = 1;
    srv.opt.write_timeout_s = 60;
    FUZZ_CHECK(store_init(&srv.store, lock_policy_built) == 0, "the store");
    FUZZ_CHECK(session_pool_init_shared(&thread_pool,
                                        SESSION_POOL_SPARE) == 0,
               "the threads' pool");
    session_pool_init(&event_pool, SESSION_POOL_SPARE);
    FUZZ_CHECK(log_init(LOG_LEVEL_ERROR, NULL) == 0, "the log");
}

/* The run an input asks for: bytes 0 and 1 read as the layout above says,
 * the rest what the client sends. size is at least 2. */
static void read_setting(const uint8_t *data, size_t size, struct run *run)
{
    static const int batch[4] = { 32, 1, 2, 4 };
    static const size_t limit[4] = { SSN_DEFAULT_MAX_OUTPUT, 4096, 5000,
                                     16384 };

    memset(run, 0, sizeof(*run));
    run->in = data + 2;
    run->n = size - 2;
    run->password = data[0] & FLAG_PASSWORD;
    run->events = run->password || (data[0] & FLAG_EVENTS);
    /* --quiet is --stdin's, a thread driver's session: an event
     * connection's never is (session_new_pooled makes them all loud). */
    run->quiet = !run->events && (data[0] & FLAG_QUIET);
    run->batch_max = batch[(data[0] >> 2) & 3] - 1;
    run->limit = limit[(data[0] >> 4) & 3];
    run->seed = data[1];
    run->x = data[1];
    if (data[0] & FLAG_SEND_FAILS)
        run->client.fail_from = 1 + (data[1] >> 4);
}

/* The server's settings for this input, as main.c would have them. With
 * a password, serial takes a turn per session (main.c picks the policy
 * so); the store is made afresh for each input anyway. Returns the lock
 * policy the store now has. */
static const struct lock_policy *set_server(const struct run *run)
{
    const struct lock_policy *policy = run->password
        ? lock_policy_with_password(lock_policy_built) : lock_policy_built;

    if (srv.store.policy != policy) {
        store_destroy(&srv.store);
        FUZZ_CHECK(store_init(&srv.store, policy) == 0, "a fresh store");
    }
    srv.auth_required = run->password;
    srv.opt.max_output = run->limit;
    srv.opt.batch = run->batch_max + 1;
    srv.opt.io_events = run->events;
    if (run->password)
        auth_source_reset();            /* no delay carried over */
    return policy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct run run;
    struct model m;

    if (size < 2)
        return 0;
    init_once();
    read_setting(data, size, &run);
    const struct lock_policy *policy = set_server(&run);

    if (run.events)
        fs_run_events(&run, &event_pool);
    else
        fs_run_thread(&run, &thread_pool);

    fs_check_conversation(&run, &m);
    fs_check_store(&run, &m, policy);
    free(m.p);
    free(run.client.buf);
    free(run.client.q);
    return 0;
}
