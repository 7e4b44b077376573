/* commands.h -- what each request does to the store and what it answers,
 * for the session core (session.c). */
#ifndef SSN_COMMANDS_H
#define SSN_COMMANDS_H

#include "proto.h"
#include "store.h"

struct session;

/* The lock policy's op hooks around one store operation. cmd_store_enter
 * returns 0 or -errno; on failure the reply says so, and the operation must
 * not run. Also used by print.c. */
int cmd_store_enter(struct session *s, enum store_access how);
void cmd_store_leave(struct session *s, enum store_access how);

/* Releases the store lock a batch or a round kept, if one did: before any
 * request that is not in the batch, and before any send. */
void cmd_batch_end(struct session *s);

/* The end of s's slice (session_received_slice): its batch's hold ends, a
 * round's goes on to the round's next session. */
void cmd_slice_end(struct session *s);

/* An event worker's round, for session_round (session.h): the n sessions
 * whose bytes came in one pass of its loop run one after the other
 * (cmd_round_at names the one running), their batchable requests under
 * shared holds of the store lock, each covering at most batch_max + 1
 * requests and asking the cache for the next sessions' lines as a batch
 * does; nothing is sent while a hold is on (cmd_round_holding), and
 * cmd_round_end ends the last. Only with batch_max > 0 (--batch 2 or
 * more); a round's sessions are the caller's thread's, and so is kept,
 * where the holds' look-aheads keep their parses until the round ends. */
void cmd_round_begin(struct session *const *s, int n,
                     struct store_kept *kept);
void cmd_round_at(int i);
int cmd_round_holding(void);    /* 1 while a hold of the round is on */
void cmd_round_end(void);

/* A line of a round's session that the hold's look-ahead parsed already
 * (kept, the caller's for the round, cmd_round_begin): its bytes are
 * line's (len bytes), so req->cmd and *p are what proto_parse would make
 * of it, *hash its names' sindex_hash, and 1 is returned; else 0 (parse
 * it). The kept copy is wiped. */
int cmd_kept_take(const char *line, size_t len, struct proto_req *req,
                  struct person *p, uint64_t *hash);

/* ADD's entry for p: the one a hold made ahead when it is p's, with where
 * its walk ended into *hint; else a new one (NULL: no memory). */
struct entry *cmd_take_entry(const struct person *p,
                             struct store_slot_hint *hint);

/* The automatic compaction, due after an ADD or DELETE (the mutation's
 * compact_due, journal.h, noted in s->compact_due): started once the
 * batch has ended, so that under the store lock the journal does only the
 * snapshot, and a failure to start is logged with no lock held. Nothing
 * is answered: the compaction's outcome is the journal's to log. */
void cmd_compact_due(struct session *s);

#define AUTH_DELAY_FIRST_MS 250 /* before answering the first wrong AUTH */
#define AUTH_DELAY_MAX_MS   2000    /* the delay doubles up to this */
#define AUTH_MAX_FAILURES   3   /* wrong AUTHs before the connection closes */

/* auth.c: AUTH password, len bytes at secret (not NUL-terminated).
 * Returns 0, or CMD_WAITS when its answer waits (session_waiting: a wrong
 * guess's delay, or the session's admission after a right one, for a
 * driver that never waits); then cmd_auth_resume runs it on. */
int cmd_auth(struct session *s, const char *secret, size_t len);
int cmd_auth_resume(struct session *s);

/* auth.c: how long, in ns, the answer to a password from peer waits, at
 * now: the address's wait (auth_source.h), right or wrong; a wrong one is
 * counted (srv.auth_failures), charged to the address, and waits at least
 * the delay of its connection's failures-th wrong guess (1, 2, ...). AUTH
 * and /metrics (net/metrics_http.c) both judge by it. */
uint64_t auth_verdict(const char *peer, int right, int failures,
                      uint64_t now);

/* TRACE, TRACE START and TRACE STOP (trace_cmd.c); 0, or CMD_WAITS while
 * an event driver's TRACE STOP waits for the file to be written. */
int cmd_trace(struct session *s, enum proto_cmd cmd);

/* TREE: the top depth levels of the tree as Graphviz DOT (tree.c). 0, or
 * CMD_WAITS while a driver still holds earlier replies, or while clients
 * dropped for the reply budget have not given theirs back (an event
 * driver's: run it again later, session_waiting). */
int cmd_tree(struct session *s, int depth);

/* 1 for the requests one store-lock hold may cover (ADD, DELETE, FIND,
 * COUNT): short, no I/O, no wait. The session ends a batch before any
 * other request. */
int cmd_batchable(enum proto_cmd cmd);

#define CMD_WAITS 1             /* cmd_run: run it again later */

/* Runs the parsed request cmd (its fields are in s->req) and appends its
 * one reply, between the session's reply_begin and reply_end. Returns 0,
 * or CMD_WAITS when the request cannot run on yet (a streamed PRINT or a
 * TREE with replies still queued ahead of it, or COMPACT's outcome for an
 * event driver: session_waiting) and nothing of its reply was made. QUIT
 * and a failed write to the client set s->ending. */
int cmd_run(struct session *s, enum proto_cmd cmd);

#endif
