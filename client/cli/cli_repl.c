/* cli_repl.c -- ssn-cli at a terminal (cli.h): a prompt "HOST:PORT> " with
 * libedit's line editing (emacs keys, ~/.editrc), each line sent as one
 * request and its whole reply printed; Ctrl-D or QUIT ends. The history is
 * kept in ~/.ssn_cli_history (or $SSN_CLI_HISTFILE), mode 0600, saved after
 * every line so a session killed by Ctrl-C keeps it; an AUTH line never
 * enters it, in memory or on disk, so the Up arrow cannot recall a
 * password either. A lost connection is reported and opened again by the
 * next line, the prompt saying "not connected> " meanwhile.
 *
 * The only file of the suite that includes libedit (BSD licensed): the
 * other modes and the server do not link it.
 */
#include <errno.h>
#include <fcntl.h>
#include <histedit.h>
#include <locale.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "proto.h"

struct repl {
    struct cli_conn k;
    EditLine *el;
    History *hist;
    char prompt[300];
    char path[4096];            /* the history file; "" for none */
    int save_warned;            /* said once that it cannot be written */
};

static char *prompt_fn(EditLine *el)
{
    struct repl *rp;
    el_get(el, EL_CLIENTDATA, &rp);
    return rp->prompt;
}

static void set_prompt(struct repl *rp)
{
    if (rp->k.open)
        snprintf(rp->prompt, sizeof(rp->prompt), "%s:%s> ", rp->k.host,
                 rp->k.port);
    else
        snprintf(rp->prompt, sizeof(rp->prompt), "not connected> ");
}

/* $SSN_CLI_HISTFILE (empty: no history), else ~/.ssn_cli_history. */
static void history_path(struct repl *rp)
{
    const char *env = getenv("SSN_CLI_HISTFILE");
    const char *home = getenv("HOME");

    rp->path[0] = '\0';
    if (env) {
        snprintf(rp->path, sizeof(rp->path), "%s", env);
        return;
    }
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (home && (size_t)snprintf(rp->path, sizeof(rp->path), "%s/%s", home,
                                 CLI_HISTORY_FILE) >= sizeof(rp->path))
        rp->path[0] = '\0';
}

/* Writes the history to its file, created (or narrowed) to mode 0600: it
 * records what a person typed about other people. (libedit's H_SAVE_FP
 * narrows it too; this file does not count on that.) */
static void history_save(struct repl *rp)
{
    HistEvent ev;

    if (!rp->path[0])
        return;
    int fd = open(rp->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f && fchmod(fd, 0600) == 0 && history(rp->hist, &ev, H_SAVE_FP, f) >= 0
        && fclose(f) == 0)
        return;
    int e = errno;
    if (f)
        fclose(f);
    else if (fd >= 0)
        close(fd);
    if (!rp->save_warned++)
        fprintf(stderr, "%s: cannot write the history to %s: %s\n", CLI_NAME,
                rp->path, strerror(e));
}

static int repl_open(struct repl *rp)
{
    HistEvent ev;

    rp->el = el_init(CLI_NAME, stdin, stdout, stderr);
    rp->hist = history_init();
    if (!rp->el || !rp->hist) {
        fprintf(stderr, "%s: cannot start line editing\n", CLI_NAME);
        return -1;
    }
    history(rp->hist, &ev, H_SETSIZE, CLI_HISTORY_MAX);
    history(rp->hist, &ev, H_SETUNIQUE, 1);
    el_set(rp->el, EL_CLIENTDATA, rp);
    el_set(rp->el, EL_PROMPT, prompt_fn);
    el_set(rp->el, EL_EDITOR, "emacs");
    el_set(rp->el, EL_HIST, history, rp->hist);
    /* libedit restores the terminal before a signal ends us (Ctrl-C). */
    el_set(rp->el, EL_SIGNAL, 1);
    el_source(rp->el, NULL);            /* ~/.editrc, if there is one */
    history_path(rp);
    if (rp->path[0])
        history(rp->hist, &ev, H_LOAD, rp->path);   /* none yet is fine */
    return 0;
}

static void repl_close(struct repl *rp)
{
    if (rp->el)
        el_end(rp->el);
    if (rp->hist)
        history_end(rp->hist);
}

/* One line typed: into the history unless it is an AUTH, then sent.
 * Returns 1 when the session is over (QUIT answered). */
static int repl_line(struct repl *rp, const char *line, size_t len)
{
    HistEvent ev;
    struct cli_reply r;

    if (len && line[len - 1] == '\n')
        len--;
    if (strspn(line, " \t") >= len)
        return 0;                       /* blank: nothing to send */
    if (!cli_is_auth(line, len)) {
        char copy[PROTO_MAX_LINE + 1];
        size_t n = len < sizeof(copy) - 1 ? len : sizeof(copy) - 1;
        memcpy(copy, line, n);
        copy[n] = '\0';
        history(rp->hist, &ev, H_ENTER, copy);
        history_save(rp);
    }
    int was_open = rp->k.open;
    int rc = cli_conn_request(&rp->k, line, len, stdout, &r);
    if (rc < 0) {
        fprintf(stderr, "%s%s\n", was_open ? "lost the connection: " : "",
                rp->k.err);
        return 0;
    }
    return rc == 0 && r.cmd == PROTO_QUIT;
}

/* A reply late at the prompt: most often the server serves one client at
 * a time and another has its turn (serial's, or coarse's session lock),
 * which looks like a hang to a person who does not know. */
static void late_hint(void *arg)
{
    (void)arg;
    fprintf(stderr, "(no reply after %d s: the server is busy, or serves "
            "one client at a time, as serial and coarse do; Ctrl-C gives "
            "up)\n", CLI_HINT_MS / 1000);
}

int cli_run_repl(const struct cli_opts *o, const char *password)
{
    static struct repl rp;      /* the EditLine's client data: one per run */
    const char *line;
    int len;

    setlocale(LC_CTYPE, "");            /* libedit's multibyte input */
    cli_conn_init(&rp.k, o, password);
    rp.k.hint = late_hint;
    if (cli_conn_open(&rp.k) < 0)
        fprintf(stderr, "%s\n", rp.k.err);
    if (repl_open(&rp) < 0) {
        repl_close(&rp);
        return 1;
    }
    for (;;) {
        set_prompt(&rp);
        line = el_gets(rp.el, &len);
        if (!line || len <= 0)
            break;                      /* Ctrl-D */
        if (repl_line(&rp, line, (size_t)len))
            break;
    }
    if (!line || len <= 0)
        putchar('\n');                  /* the shell's prompt on its own line */
    repl_close(&rp);
    cli_conn_close(&rp.k);
    return 0;
}
