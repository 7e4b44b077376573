/* session_round.c -- an event worker's round over sessions (session.h):
 * the sessions whose bytes came in one pass answered one after the other,
 * their batchable requests under shared holds of the store lock
 * (commands.h, cmd_round_begin), and each one handed back to the driver
 * (done, then group) once the hold that answered it has ended.
 */
#include <assert.h>
#include "commands.h"
#include "session.h"
#include "store.h"

void session_round(struct session *const *s, int n, uint64_t budget_ns,
                   void (*done)(int i, int more, void *arg),
                   void (*group)(void *arg), void *arg)
{
    int more[SESSION_ROUND_MAX], sent = 0;
    struct store_kept kept;     /* on the event worker's stack */

    assert(n > 0 && n <= SESSION_ROUND_MAX);
    cmd_round_begin(s, n, &kept);
    for (int i = 0; i < n; i++) {
        cmd_round_at(i);
        session_received_slice(s[i], 0, budget_ns, &more[i]);
        if (!cmd_round_holding() && sent <= i) {   /* those answered
                                           need not wait for the next
                                           hold's */
            for (; sent <= i; sent++)
                done(sent, more[sent], arg);
            if (group)
                group(arg);
        }
    }
    cmd_round_end();
    if (sent < n) {
        for (; sent < n; sent++)
            done(sent, more[sent], arg);
        if (group)
            group(arg);
    }
}
