/* log_source.c -- client-caused log lines, at most one a second per source
 * (log_source.h). source_lock protects the slots and this second's total;
 * it is held for a hash and a compare, never for the line's formatting or
 * the log itself. */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <event2/event.h>
#include "log.h"
#include "log_source.h"
#include "source.h"
#include "timeutil.h"

#define SOURCE_KEY 48           /* an IPv6 address in brackets, with NUL */

struct source_slot {
    char key[SOURCE_KEY];
    uint64_t last_ns;           /* when it last had a line (0: never) */
    long held_back;             /* its lines suppressed since then */
};

atomic_long log_source_suppressed;

static pthread_mutex_t source_lock = PTHREAD_MUTEX_INITIALIZER;
static struct source_slot slots[LOG_SOURCE_SLOTS];  /* by source_lock */
static uint64_t this_second;                        /* by source_lock */
static long lines_this_second;                      /* by source_lock */

/* The address without its port: "10.0.0.1:4242" -> "10.0.0.1". */
static void source_key(const char *peer, char *key)
{
    const char *colon = strrchr(peer, ':');
    size_t n = colon ? (size_t)(colon - peer) : strlen(peer);

    if (n >= SOURCE_KEY)
        n = SOURCE_KEY - 1;
    memcpy(key, peer, n);
    key[n] = '\0';
}

/* May this source log now? 1 with *was_held its count of lines held back
 * (reset); 0 when held back (counted). A source's lines are a full second
 * apart, not one per calendar second (which lets two through 1 ms apart,
 * either side of a second's edge). Another source hashing to the same
 * slot takes it over: at worst one extra line a second, never fewer. */
static int may_log(const char *key, long *was_held)
{
    uint64_t now_ns = time_now_ns();
    uint64_t now = now_ns / TIME_NS_PER_SEC;
    struct source_slot *sl = &slots[source_hash(key) % LOG_SOURCE_SLOTS];
    int ok;

    pthread_mutex_lock(&source_lock);
    if (now != this_second) {
        this_second = now;
        lines_this_second = 0;
    }
    if (strcmp(sl->key, key) != 0) {
        snprintf(sl->key, sizeof(sl->key), "%s", key);
        sl->last_ns = 0;
        sl->held_back = 0;
    }
    ok = (sl->last_ns == 0 || now_ns - sl->last_ns >= TIME_NS_PER_SEC) &&
         lines_this_second < LOG_SOURCE_PER_SEC;
    if (ok) {
        sl->last_ns = now_ns;
        lines_this_second++;
        *was_held = sl->held_back;
        sl->held_back = 0;
    } else {
        sl->held_back++;
    }
    pthread_mutex_unlock(&source_lock);
    if (!ok)
        atomic_fetch_add(&log_source_suppressed, 1);
    return ok;
}

int log_source(int level, const char *peer, const char *fmt, ...)
{
    char key[SOURCE_KEY], line[400];
    long held = 0;
    va_list ap;

    source_key(peer, key);
    if (!may_log(key, &held))
        return 0;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (held)
        log_msg(level, "%s (and %ld such lines from %s held back)", line,
                held, key);
    else
        log_msg(level, "%s", line);
    return 1;
}

void log_source_libevent(int severity, const char *msg)
{
    int level = severity >= EVENT_LOG_ERR ? LOG_LEVEL_ERROR :
                severity >= EVENT_LOG_WARN ? LOG_LEVEL_WARN : LOG_LEVEL_INFO;

    if (severity > EVENT_LOG_DEBUG)
        log_source(level, LOG_SOURCE_LIBEVENT, "libevent: %s", msg);
}
