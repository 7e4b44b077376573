/* session_park.c -- an idle session given back whole (session.h).
 *
 * Between requests an event connection's session holds nothing but three
 * facts (authenticated, begun, wrong AUTHs so far); everything else is
 * either what its driver sets up for every session alike or state that
 * lives only while a request is in progress. So an idle connection keeps
 * those three in a struct session_keep and its session goes back to its
 * worker's pool, buffers and all; the next bytes take one again. This is
 * memcached's idle connection, which holds its conn and no buffers, one
 * step further: the conversation's state is the part that is borrowed.
 */
#include "lockmode.h"
#include "session.h"

/* Nothing but k's facts would be lost: no input or partial telnet command
 * or over-long line, no reply, no waiting request, no kept store hold, no
 * journal mark, due compaction or count not yet given to the server, no
 * SHA-256 context of its own, and not --quiet (session_new_pooled makes a
 * loud one: only --stdin's thread session is quiet today). */
static int idle(const struct session *s)
{
    return !s->quiet && lr_between_lines(&s->in) && telnet_between(&s->tn) &&
           s->out.len == 0 && s->reply_mark == 0 && !s->reply_failed &&
           !s->waiting && !s->ending && !s->send_error &&
           !s->output_limited && !s->batch_kept && !s->journal_seq &&
           !s->compact_due && !s->commands && !s->digest;
}

int session_park(struct session *s, struct session_keep *k)
{
    if (!session_release(s) || !session_own_pool(s) || !idle(s))
        return 0;
    k->authed = (unsigned char)s->authed;
    k->begun = (unsigned char)s->begun;
    k->auth_failures = (unsigned short)s->auth_failures;
    /* session_free's work, but for what idle() ruled out: no buffer, no
     * digest, nothing to wipe. */
    bufpool_put(&s->pool->sessions, s, sizeof(*s), 0);
    return 1;
}

void session_unpark(struct session *s, const struct session_keep *k)
{
    s->authed = k->authed;
    s->begun = k->begun;
    s->auth_failures = k->auth_failures;
}

void session_end_parked(struct store *st, struct session_keep *k)
{
    if (k->begun)
        st->policy->session_end(st);
    k->begun = 0;
}
