/* trace_json.c -- a trace window's file (trace_int.h): opened without
 * following a symbolic link, one ring at a time written as Chrome Trace
 * Event JSON, the array closed at the end. Every call is made with
 * trace.c's file_lock held, which guards everything here; no other lock
 * is held meanwhile, so the I/O never holds up a thread that records.
 *
 * Each event is complete in itself: a span is one "X" event with its ts
 * and dur, a connection's wait or hold one "b" and its "e", written
 * together. So a ring that overwrote its oldest events leaves nothing
 * half open, and the spans of a thread nest as they did.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fdio.h"
#include "journal/journal_rec.h"
#include "trace_int.h"

#define TRACE_FILE_BUFFER (64 * 1024)   /* stdio's buffer for the file */

static FILE *out;               /* the window's file; NULL between windows */
static int first;               /* no event written yet */
static int pid;

static const struct {
    const char *name, *cat, *arg;
} kinds[TRACE_KINDS] = {
    [TRACE_LOCK_WAIT] = { "wait for the store lock", "lock", NULL },
    [TRACE_LOCK_HOLD] = { "hold the store lock", "lock", NULL },
    [TRACE_SEND] = { "write replies", "io", "bytes" },
    [TRACE_JOURNAL_ROUND] = { "journal round", "journal", "records" },
    [TRACE_CONN_LOCK_WAIT] = { "a connection waits for the store lock",
                               "lock", NULL },
    [TRACE_CONN_LOCK_HOLD] = { "a connection holds the store lock",
                               "lock", NULL },
};

static int is_async(uint32_t kind)
{
    return kind == TRACE_CONN_LOCK_WAIT || kind == TRACE_CONN_LOCK_HOLD;
}

int trace_json_open(const char *path)
{
    struct stat st;
    int fd, rc;

    /* O_NONBLOCK: a FIFO with no reader fails (ENXIO) instead of
     * blocking the opener; it is refused below anyway. Emptied only once
     * known to be a file and no journal (-EEXIST) nor any other file that
     * is not empty and no trace (-ENOTEMPTY): --trace-file naming the
     * journal, a link to it, or a log, must not wipe it. */
    fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
              O_NONBLOCK, 0600);
    if (fd < 0)
        return -errno;
    rc = fstat(fd, &st) ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
    if (!rc && fd_starts_with(fd, JREC_MAGIC, strlen(JREC_MAGIC)))
        rc = -EEXIST;
    else if (!rc && st.st_size > 0 && !fd_starts_with(fd, "[", 1))
        rc = -ENOTEMPTY;        /* a trace begins with '[': this is some
                                   other file a typo named */
    if (!rc && ftruncate(fd, 0))
        rc = -errno;
    if (rc) {
        close(fd);
        return rc;
    }
    out = fdopen(fd, "w");
    if (!out) {
        rc = -errno;
        close(fd);
        return rc;
    }
    setvbuf(out, NULL, _IOFBF, TRACE_FILE_BUFFER);
    pid = (int)getpid();
    first = 1;
    fputc('[', out);
    return 0;
}

static void sep(void)
{
    fputs(first ? "\n" : ",\n", out);
    first = 0;
}

/* A name for JSON: the names here are ours ("worker 2"), but a quote or a
 * backslash would still break the file, so they become '_'. */
static void json_name(char *dst, size_t cap, const char *src)
{
    size_t i;

    for (i = 0; i + 1 < cap && src[i]; i++)
        dst[i] = (src[i] == '"' || src[i] == '\\' ||
                  (unsigned char)src[i] < ' ') ? '_' : src[i];
    dst[i] = 0;
}

/* Nanoseconds from t0 as microseconds with three decimals. */
#define US_FMT "%" PRIu64 ".%03u"
#define US(ns) (ns) / 1000, (unsigned)((ns) % 1000)

static void write_async(const struct trace_ring *r, uint64_t i,
                        uint32_t kind, uint64_t from, uint64_t to)
{
    const char *name = kinds[kind].name, *cat = kinds[kind].cat;

    fprintf(out, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"b\","
            "\"id\":\"%u.%" PRIu64 "\",\"ts\":" US_FMT ",\"pid\":%d,"
            "\"tid\":%u},\n", name, cat, r->id, i, US(from), pid, r->id);
    fprintf(out, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"e\","
            "\"id\":\"%u.%" PRIu64 "\",\"ts\":" US_FMT ",\"pid\":%d,"
            "\"tid\":%u}", name, cat, r->id, i, US(to), pid, r->id);
}

uint64_t trace_json_ring(const struct trace_ring *r, const char *name,
                         uint64_t t0)
{
    uint64_t n = atomic_load_explicit(&r->n, memory_order_acquire);
    uint64_t kept = n < TRACE_RING_EVENTS ? n : TRACE_RING_EVENTS;
    const struct trace_event *ev = atomic_load_explicit(&r->ev,
                                                        memory_order_relaxed);
    char lane[32];

    if (!ev)
        return 0;                       /* past TRACE_RINGS_MAX: no room */

    json_name(lane, sizeof(lane), name);
    sep();
    fprintf(out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
            "\"tid\":%u,\"args\":{\"name\":\"%s\"}}", pid, r->id, lane);
    for (uint64_t i = n - kept; i < n; i++) {
        const struct trace_event *e = &ev[i & TRACE_RING_MASK];
        /* Clipped at t0, both ends alike, so that nesting is kept. */
        uint64_t from = e->from > t0 ? e->from - t0 : 0;
        uint64_t to = e->to > t0 ? e->to - t0 : 0;

        if (to < from)
            to = from;
        sep();
        if (is_async(e->kind)) {
            write_async(r, i, e->kind, from, to);
            continue;
        }
        fprintf(out, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\","
                "\"ts\":" US_FMT ",\"dur\":" US_FMT ",\"pid\":%d,\"tid\":%u",
                kinds[e->kind].name, kinds[e->kind].cat, US(from),
                US(to - from), pid, r->id);
        if (kinds[e->kind].arg)
            fprintf(out, ",\"args\":{\"%s\":%u}", kinds[e->kind].arg,
                    e->arg);
        fputc('}', out);
    }
    return kept;
}

int trace_json_close(void)
{
    int rc = 0;

    if (!out)
        return 0;
    fputs("\n]\n", out);
    if (ferror(out))
        rc = -EIO;
    if (fclose(out) && !rc)
        rc = -errno;
    out = NULL;
    return rc;
}
