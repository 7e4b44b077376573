/* metrics_http.h -- --metrics-port: GET /metrics in Prometheus's text
 * exposition format, on a thread of its own (metrics_conn.c's connections).
 * It binds as the main port does (srv.opt.bind, protected mode), and
 * shows counters, gauges and the latency summaries of STATS: never a name
 * or an SSN. */
#ifndef SSN_METRICS_HTTP_H
#define SSN_METRICS_HTTP_H

#include <stddef.h>

struct evbuffer;

/* With --metrics-port: binds, prints "metrics on ADDR:PORT" on stdout and
 * starts the thread. Returns 0 (also without the option), or -1 after one
 * line on stderr. */
int metrics_http_start(void);

/* Stops the thread and closes the port (a no-op when not started). */
void metrics_http_stop(void);

/* Appends the whole exposition to b (for the handler and the tests).
 * Returns 0, or -ENOMEM. */
int metrics_http_write(struct evbuffer *b);

#endif
