/* trace_cmd.c -- TRACE, TRACE START and TRACE STOP (commands.h): a trace
 * window of a running server (trace.h). The file is the operator's,
 * named at start-up by --trace or --trace-file; no request can name one.
 *
 * Nothing here touches the store or holds its lock (coarse's
 * session-long hold aside). START opens the file on the calling thread:
 * an open and one byte. STOP hands the writing, megabytes with many
 * threads, to a thread of the trace's own; a thread-per-connection
 * session waits for it, an event driver's never does (CMD_WAITS, and the
 * driver asks again: SESSION_WAITS_TRACE).
 */
#include <errno.h>
#include <string.h>
#include "commands.h"
#include "log.h"
#include "reply.h"
#include "session.h"
#include "trace.h"

#define NO_FILE "no trace file (start the server with --trace-file FILE)"

static const char *state_name(enum trace_state st)
{
    switch (st) {
    case TRACE_ON:      return "on";
    case TRACE_STARTING: return "starting";
    case TRACE_WRITING: return "writing";
    default:            return "off";
    }
}

/* TRACE: "trace STATE: N events, D dropped", the figures of the window
 * that records, or of the last one. */
static void cmd_trace_status(struct session *s)
{
    struct trace_status st;

    if (!trace_configured()) {
        reply_puts(s, "trace off: " NO_FILE "\n");
        return;
    }
    trace_status(&st);
    reply_printf(s, "trace %s: %llu events, %llu dropped\n",
                 state_name(st.state), (unsigned long long)st.events,
                 (unsigned long long)st.dropped);
}

static void cmd_trace_start(struct session *s)
{
    int rc = trace_start();

    switch (rc) {
    case 0:
        log_msg(LOG_LEVEL_INFO, "trace: started by %s; TRACE STOP writes %s",
                s->peer, trace_path());
        if (!s->quiet)
            reply_puts(s, PROTO_OK_LINE);
        break;
    case TRACE_NO_FILE:
        reply_puts(s, "Error: " NO_FILE "\n");
        break;
    case -EALREADY:
        reply_puts(s, "Error: trace is already on (TRACE STOP writes it)\n");
        break;
    case -EBUSY:
        reply_puts(s, "Error: trace is being written; try again\n");
        break;
    case -EEXIST:
        reply_puts(s, "Error: the trace file is a journal: not "
                      "overwritten\n");
        break;
    case -ENOTEMPTY:
        reply_puts(s, "Error: the trace file holds something that is no "
                      "trace: not overwritten\n");
        break;
    default:
        reply_printf(s, "Error: cannot write the trace file: %s\n",
                     strerror(-rc));
        break;
    }
}

/* The outcome of the window s->trace_window, once written. */
static void stop_answer(struct session *s, int rc,
                        const struct trace_status *st)
{
    if (rc == -ESTALE)
        reply_puts(s, "OK trace written\n");    /* its figures are gone */
    else if (rc)
        reply_printf(s, "Error: writing the trace file failed: %s\n",
                     strerror(-rc));
    else
        reply_printf(s, "OK %llu %s written, %llu dropped\n",
                     (unsigned long long)st->events,
                     st->events == 1 ? "event" : "events",
                     (unsigned long long)st->dropped);
}

static int cmd_trace_stop(struct session *s)
{
    struct trace_status st;
    int rc;

    if (!s->trace_window) {             /* not yet stopped for this one */
        rc = trace_stop(&s->trace_window);
        if (rc == TRACE_NO_FILE) {
            reply_puts(s, "Error: " NO_FILE "\n");
        } else if (rc == -ESRCH) {
            reply_puts(s, "Error: trace is off (TRACE START starts it)\n");
        } else if (rc == -EBUSY) {
            reply_puts(s, "Error: trace is starting or being written; "
                       "try again\n");
        } else if (rc) {
            reply_printf(s, "Error: cannot start the trace writer: %s\n",
                         strerror(-rc));
        } else {
            log_msg(LOG_LEVEL_INFO, "trace: stopped by %s", s->peer);
        }
        if (rc) {
            s->trace_window = 0;
            return 0;
        }
    }
    if (s->io->never_waits) {
        rc = trace_stop_result(s->trace_window, &st);
        if (rc == -EINPROGRESS)
            return CMD_WAITS;
    } else {
        rc = trace_stop_wait(s->trace_window, &st);
    }
    s->trace_window = 0;
    stop_answer(s, rc, &st);
    return 0;
}

int cmd_trace(struct session *s, enum proto_cmd cmd)
{
    switch (cmd) {
    case PROTO_TRACE_START: cmd_trace_start(s); return 0;
    case PROTO_TRACE_STOP:  return cmd_trace_stop(s);
    default:                cmd_trace_status(s); return 0;
    }
}
