/* trace_figures.c -- what the trace's windows counted, and the outcomes
 * of the last ones (trace_int.h). No lock of its own: all of its state is
 * under trace.c's trace_lock, which the _locked calls hold.
 */
#include "trace_int.h"

/* Outcomes of the last windows kept, for the sessions whose STOP waits
 * for theirs (an event connection looks every ECONN_TRACE_POLL_US): 4
 * were too few for clients that START and STOP without pause, most of
 * whose answers lost their figures; TRACE_RESULTS (256) take 6 kB. */
static struct {
    unsigned window;
    int rc;
    uint64_t events, dropped;
} results[TRACE_RESULTS];       /* by window % TRACE_RESULTS; trace_lock */

static uint64_t past_events, past_dropped;  /* earlier windows; trace_lock */
static uint64_t win_events, win_dropped;    /* this window's rings counted
                                               (written); trace_lock */

void trace_ring_figures(const struct trace_ring *r, uint64_t *kept,
                        uint64_t *dropped)
{
    uint64_t n = atomic_load_explicit(&r->n, memory_order_relaxed);

    *kept = n < TRACE_RING_EVENTS ? n : TRACE_RING_EVENTS;
    if (!atomic_load_explicit(&r->ev, memory_order_relaxed))
        *kept = 0;
    *dropped = n - *kept;
}

int trace_count_locked(struct trace_ring *r, unsigned w)
{
    uint64_t k, d;

    trace_ring_figures(r, &k, &d);
    r->counted = w;
    if (win_events + k > TRACE_WINDOW_EVENTS) {
        win_dropped += k + d;
        return 0;
    }
    win_events += k;
    win_dropped += d;
    return 1;
}

void trace_window_open_locked(void)
{
    past_events += win_events;
    past_dropped += win_dropped;
    win_events = win_dropped = 0;
}

void trace_totals_locked(uint64_t *events, uint64_t *dropped, int past)
{
    *events = past ? past_events : win_events;
    *dropped = past ? past_dropped : win_dropped;
}

void trace_result_put_locked(unsigned w, int rc,
                             const struct trace_status *st)
{
    results[w % TRACE_RESULTS].window = w;
    results[w % TRACE_RESULTS].rc = rc;
    results[w % TRACE_RESULTS].events = st->events;
    results[w % TRACE_RESULTS].dropped = st->dropped;
}

int trace_result_get_locked(unsigned w, struct trace_status *st, int *rc)
{
    if (results[w % TRACE_RESULTS].window != w)
        return 0;
    st->events = results[w % TRACE_RESULTS].events;
    st->dropped = results[w % TRACE_RESULTS].dropped;
    *rc = results[w % TRACE_RESULTS].rc;
    return 1;
}
