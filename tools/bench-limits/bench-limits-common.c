/* bench-limits-common.c -- the helpers bench-limits' three parts share
 * (bench-limits.h): numbers as the tables show them, the server's process
 * as /proc describes it, request sources for pl_run (client/lib/pipeline.h),
 * STATS and one-line requests on short connections of their own
 * (client/lib/ctl.h), and the DIGEST cache made cold. No state of its own.
 */
#include "bench-limits.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "pipeline.h"
#include "proto.h"

/* ---- numbers shown ------------------------------------------------------ */

/* v rounded to sig significant digits (HdrHistogram's convention: show
 * only what the buckets hold). */
double round_sig(double v, int sig)
{
    if (v <= 0)
        return 0;
    double scale = pow(10, sig - 1 - (int)floor(log10(v)));
    return round(v * scale) / scale;
}

/* "0.047", "1.5", "150" (ms) for a percentile in ns. */
void fmt_pct(char *buf, size_t len, uint64_t ns)
{
    double ms = round_sig(time_ns_to_ms(ns), SIG_DIGITS);
    int e = ms > 0 ? (int)floor(log10(ms)) : 0;
    int dec = SIG_DIGITS - 1 - e;

    snprintf(buf, len, "%.*f", dec > 0 ? dec : 0, ms);
}

/* "NAME": V, -- or null for a figure the server does not report (-1). */
void json_ll(const char *name, long long v)
{
    if (v < 0)
        printf("\"%s\": null, ", name);
    else
        printf("\"%s\": %lld, ", name, v);
}

/* ---- the server's process ----------------------------------------------- */

/* Fields of /proc/PID/stat after the command: state in *state, start time
 * (field 22) returned; 0 when there is no such process. */
unsigned long long proc_stat(pid_t pid, char *state)
{
    char path[64], line[1024];
    unsigned long long start = 0;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    if (fgets(line, sizeof line, f) != NULL) {
        char *p = strrchr(line, ')');
        /* ") S ppid pgrp ... starttime": starttime is the 20th after ')' */
        if (p && sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                        "%*s %*s %*s %*s %*s %*s %*s %*s %llu", state,
                        &start) != 2)
            start = 0;
    }
    fclose(f);
    return start;
}

/* 1 once the server has exited: no process, a zombie (its parent has not
 * reaped it yet), or another process that took the PID over. */
int proc_gone(const struct server_info *si)
{
    char state = '?';
    unsigned long long start = proc_stat(si->pid, &state);

    return start == 0 || start != si->start || state == 'Z' || state == 'X';
}

/* VmRSS in kB, or -1. */
long proc_rss_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* MemAvailable in kB, or 0. */
long mem_available_kb(void)
{
    char line[256];
    long kb = 0;
    FILE *f = fopen("/proc/meminfo", "r");

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* Raises this process's open-file limit to want (the hard one too when
 * allowed: root). Returns the soft limit now in force. */
rlim_t raise_nofile(rlim_t want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur >= want)
        return rl.rlim_cur;
    if (rl.rlim_max < want) {
        struct rlimit up = { want, want };
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            return want;
    }
    rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur;
}

/* ---- request sources for pl_run ----------------------------------------- */

static ssize_t req_next(void *arg, char *buf, size_t cap, int *cmd)
{
    struct req_source *g = arg;

    if (g->i == g->n) {
        if (g->done)
            return 0;
        g->done = 1;
        *cmd = PROTO_QUIT;
        return snprintf(buf, cap, "DONE\n");
    }
    int len = g->line(g, g->i++, buf, cap, cmd);
    return len > 0 && (size_t)len < cap ? len : -EINVAL;
}

void req_source_init(struct pl_source *s, struct req_source *g)
{
    g->i = 0;
    g->done = 0;
    s->next = req_next;
    s->arg = g;
    s->fd = -1;
}

int line_word(const struct req_source *g, uint64_t i, char *buf,
              size_t cap, int *cmd)
{
    (void)i;
    *cmd = strcmp(g->word, "PRINT") == 0 ? PROTO_PRINT : PROTO_STATS;
    return snprintf(buf, cap, "%s\n", g->word);
}

void session_opts(struct pl_opts *po, const struct opts *o,
                  double timeout_s, FILE *echo, atomic_int *stop)
{
    memset(po, 0, sizeof *po);
    po->host = o->host;
    po->port = o->port;
    po->echo = echo;
    po->timeout_s = timeout_s;
    po->stop = stop;
}

/* ---- STATS -------------------------------------------------------------- */

/* STATS over a connection of its own (its reply has many lines, which
 * ctl.h does not read). Returns 0, or -1 with the reason in err. */
int stats_fetch(const struct opts *o, struct stats *st, char *err,
                size_t errlen)
{
    struct req_source g = { .line = line_word, .n = 1, .word = "STATS" };
    struct pl_source src;
    struct pl_opts po;
    struct pl_result r;
    char *text = NULL, *save, *line;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);

    if (mem == NULL) {
        snprintf(err, errlen, "open_memstream: %s", strerror(errno));
        return -1;
    }
    req_source_init(&src, &g);
    session_opts(&po, o, CTL_MS / 1000.0, mem, NULL);
    int rc = pl_run(&po, &src, &r, NULL);
    fclose(mem);
    st->n = 0;
    for (line = strtok_r(text, "\n", &save); line && st->n < STATS_ROWS;
         line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (sp == NULL)
            continue;               /* END, Bye */
        *sp = '\0';
        snprintf(st->name[st->n], sizeof st->name[0], "%s", line);
        snprintf(st->val[st->n], sizeof st->val[0], "%s", sp + 1);
        st->n++;
    }
    free(text);
    if (rc < 0 || st->n == 0) {
        snprintf(err, errlen, "STATS: %s", rc < 0 ? r.what : "no reply");
        return -1;
    }
    return 0;
}

const char *stats_str(const struct stats *st, const char *name)
{
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->name[i], name) == 0)
            return st->val[i];
    return NULL;
}

/* A numeric STATS value; -1 when the server does not report it. */
long long stats_num(const struct stats *st, const char *name)
{
    const char *v = stats_str(st, name);
    return v ? atoll(v) : -1;
}

/* One request with a one-line reply on its own short connection. */
int ask(const struct opts *o, const char *req, char *out, size_t len,
        char *err, size_t errlen)
{
    struct ctl c;
    int rc = ctl_open(&c, o->host, o->port, CTL_MS);

    if (rc == 0)
        rc = ctl_query(&c, req, out, len);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", req, c.err);
        if (c.fd >= 0)
            ctl_abandon(&c);
        return -1;
    }
    ctl_close(&c);
    return 0;
}


/* Makes the next DIGEST hash the store again: an ADD and a DELETE change
 * the store's version and leave its content as it was. */
int digest_cache_cold(struct ctl *c, const char *tag)
{
    char req[160], reply[CTL_REPLY_MAX];

    snprintf(req, sizeof req, "ADD Probe %s 1 000-00-0000", tag);
    if (ctl_query(c, req, reply, sizeof reply) < 0)
        return -1;
    snprintf(req, sizeof req, "DELETE Probe %s", tag);
    return ctl_query(c, req, reply, sizeof reply);
}
