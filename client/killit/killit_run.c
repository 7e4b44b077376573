/* killit_run.c -- kill_it's clients: fork them, release them at once,
 * watch them with a bounded wait, reap them (killit.h).
 *
 * Each child generates its own stream (seed + i, --shard i/N), runs one
 * pipelined session (pipeline.c) and leaves its result in its shared slot.
 * The parent polls every KI_TICK_MS: it reaps, draws the progress line, and
 * runs the watchdog over all clients at once (one client waiting behind
 * another in coarse mode is not a hang; nobody receiving anything is).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "killit.h"
#include "timeutil.h"

#define KI_TICK_MS      100     /* parent's polling period */
#define KI_GRACE_S      5.0     /* past --timeout before children are killed */
#define KI_GO_WAIT_MS   30000   /* a child waits this long for the start */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The child's whole life; never returns. */
static void child_main(struct killit *k, unsigned i, int go_fd)
{
    struct ki_slot *s = &k->slot[i];
    struct pl_result *r = &s->res;

    prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive kill_it */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (getppid() == 1)
        _exit(3);

    /* Generate first, then wait: the start is the same for everyone. */
    struct gen g;
    struct gen_opts go = {
        .nevents = k->nevents, .seed = k->seed + i,
        .shard_k = i, .shard_n = k->nclients, .mix = k->mix,
    };
    if (gen_init(&g, &k->names, &go)) {
        r->fail = PL_ERR_INTERNAL;
        snprintf(r->what, sizeof(r->what), "generator failed to start");
        atomic_store(&s->done, 1);
        _exit(1);
    }
    struct pollfd p = { .fd = go_fd, .events = POLLIN };
    while (poll(&p, 1, KI_GO_WAIT_MS) < 0 && errno == EINTR)
        ;
    close(go_fd);

    struct pl_opts o = {
        .host = k->host, .port = k->port, .echo = NULL,
        .password = k->password_file ? k->password : NULL,
        .rate = i < k->nslow ? k->rate : 0, .rcvbuf = k->rcvbuf, .mss = k->mss,
        .timeout_s = k->timeout_s, .hang_s = 0,   /* the parent watches */
        .progress = &s->prog,
    };
    struct pl_source src;
    pl_source_gen(&src, &g);
    hist_init(&s->lat);
    pl_run(&o, &src, r, &s->lat);
    atomic_store(&s->done, 1);
    _exit(0);
}

static void kill_children(struct killit *k)
{
    for (unsigned i = 0; i < k->nclients; i++)
        if (k->pid[i] > 0)
            kill(k->pid[i], SIGKILL);
}

static unsigned reap(struct killit *k, int block)
{
    unsigned running = 0;
    for (unsigned i = 0; i < k->nclients; i++) {
        if (k->pid[i] <= 0)
            continue;
        pid_t w;
        while ((w = waitpid(k->pid[i], &k->exit_status[i],
                            block ? 0 : WNOHANG)) < 0 && errno == EINTR)
            ;
        if (w == k->pid[i] || (w < 0 && errno == ECHILD))
            k->pid[i] = 0;
        else
            running++;
    }
    return running;
}

static void progress_line(const struct killit *k, unsigned finished,
                          uint64_t sent, uint64_t replies, double elapsed,
                          int final)
{
    if (final) {
        fprintf(stderr, "\r%79s\r", "");
        return;
    }
    fprintf(stderr, "\rkill_it: %u/%u clients finished, %llu requests sent, "
            "%llu replies, %.1f s ", finished, k->nclients,
            (unsigned long long)sent, (unsigned long long)replies, elapsed);
}

/* Waits for every child, bounded. Sets hung/timed_out/interrupted. */
static void watch(struct killit *k, uint64_t t0)
{
    int tty = !k->quiet && isatty(STDERR_FILENO);
    uint64_t hang_ns = time_s_to_ns(k->hang_s);
    uint64_t limit_ns = time_s_to_ns(k->timeout_s + KI_GRACE_S);
    uint64_t last_draw = 0;

    for (;;) {
        unsigned running = reap(k, 0);
        uint64_t sent = 0, replies = 0, due = 0, last_reply = t0;
        for (unsigned i = 0; i < k->nclients; i++) {
            struct pl_progress *pg = &k->slot[i].prog;
            uint64_t s = atomic_load(&pg->sent), r = atomic_load(&pg->replies);
            uint64_t rx = atomic_load(&pg->last_reply_ns);
            sent += s;
            replies += r;
            if (k->pid[i] > 0 && s > r)
                due += s - r;
            if (rx > last_reply)
                last_reply = rx;
        }
        uint64_t now = time_now_ns();
        if (tty && (now - last_draw > 200 * TIME_NS_PER_MS || !running)) {
            progress_line(k, k->nclients - running, sent, replies,
                          time_ns_to_s(now - t0), !running);
            last_draw = now;
        }
        if (!running)
            return;
        if (interrupted) {
            k->interrupted = 1;
        } else if (hang_ns && due && now - last_reply > hang_ns) {
            k->hung = 1;
            k->hung_outstanding = due;
        } else if (now - t0 > limit_ns) {
            k->timed_out = 1;
        } else {
            poll(NULL, 0, KI_TICK_MS);
            continue;
        }
        kill_children(k);
        reap(k, 1);
        if (tty)
            progress_line(k, 0, 0, 0, 0, 1);
        return;
    }
}

int ki_run(struct killit *k)
{
    size_t len = k->nclients * sizeof(struct ki_slot);
    k->slot = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    k->pid = calloc(k->nclients, sizeof(*k->pid));
    k->exit_status = calloc(k->nclients, sizeof(*k->exit_status));
    if (k->slot == MAP_FAILED || !k->pid || !k->exit_status) {
        if (k->slot == MAP_FAILED)
            k->slot = NULL;
        fprintf(stderr, "kill_it: out of memory for %u clients\n",
                k->nclients);
        return -1;
    }

    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    int go[2];
    if (pipe2(go, O_CLOEXEC) < 0) {
        fprintf(stderr, "kill_it: pipe: %s\n", strerror(errno));
        return -1;
    }
    fflush(NULL);           /* children must not flush our buffers again */
    for (unsigned i = 0; i < k->nclients; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            close(go[1]);
            child_main(k, i, go[0]);
        }
        if (pid < 0) {
            fprintf(stderr, "kill_it: fork: %s\n", strerror(errno));
            close(go[0]);
            close(go[1]);
            kill_children(k);
            reap(k, 1);
            return -1;
        }
        k->pid[i] = pid;
    }
    close(go[0]);
    uint64_t t0 = time_now_ns();
    close(go[1]);           /* end of file on the pipe: everyone starts */
    watch(k, t0);
    k->wall_s = time_ns_to_s(time_now_ns() - t0);
    return 0;
}

void ki_cleanup(struct killit *k)
{
    if (k->slot)
        munmap(k->slot, k->nclients * sizeof(struct ki_slot));
    free(k->pid);
    free(k->exit_status);
    names_free(&k->names);
    OPENSSL_cleanse(k->password, sizeof(k->password));
}
