/* budget.h -- one budget for the reply memory of all clients together
 * (--max-output-total), beside each client's own --max-output: Redis 7's
 * maxmemory-clients. Every reply buffer a driver holds for a client that
 * has not taken all of it yet (a copy of replies, or a whole PRINT listing,
 * counted in full for each client that holds it: the thread driver while
 * it writes, the event driver while it queues) is charged to that client's
 * conn and to the total; when
 * the total passes the budget, the clients holding the most are dropped
 * first (their sockets shut down; their own threads end them and give the
 * memory back), until what is left fits.
 *
 * Charging is two atomic adds; only going over the budget takes
 * conns_lock, to find whom to drop. Never called with the store lock held.
 */
#ifndef SSN_BUDGET_H
#define SSN_BUDGET_H

#include <stddef.h>
#include "server.h"

/* A thread-per-connection write of this much or more is charged before its
 * first byte is sent (threads.c). */
#define BUDGET_CHARGE_AT    (64 * 1024)

/* n more bytes held for c (c may be NULL: not a network client). */
void budget_charge(struct conn *c, size_t n);

/* n of c's bytes were sent or dropped. */
void budget_release(struct conn *c, size_t n);

/* 1 while all clients together hold more than the budget: some dropped
 * for it have not given theirs back yet (an event worker closes them on
 * its loop's next pass). A reply of one client's own that an event
 * worker would make now waits instead (TREE's, tree.c), else each one it
 * makes in the same pass drops another client, whose reply stays until
 * then. */
static inline int budget_over(void)
{
    size_t limit = srv.opt.max_output_total;

    return limit && atomic_load(&srv.reply_held) > limit;
}

/* The default budget: SSN_OUTPUT_TOTAL_SHARE of physical memory, and at
 * least twice max_output (so one client's whole allowance always fits). */
size_t budget_default(size_t max_output);

#endif
