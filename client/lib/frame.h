/* frame.h -- where one reply ends, seen from the client.
 *
 * Every non-blank request gets exactly one reply, in order. Most replies
 * are one line; PRINT's runs from a line of 50 underscores to a line of 50
 * dashes, and STATS's, HELP's and TREE's end at "END". Any reply may
 * instead be one "Error: ..." line. The framer is fed the reply lines of the request at the
 * head of the queue and says when that reply is complete; it also notes an
 * error reply, the reply's kind (replykind.h: ok, not found, exists,
 * error) and a reply whose shape is wrong for its request (garbage from
 * a broken server), without ever losing its place on bad input.
 */
#ifndef SSN_CLIENT_FRAME_H
#define SSN_CLIENT_FRAME_H

#include <stddef.h>

enum frame_state {
    FRAME_IDLE,                 /* between replies */
    FRAME_FIRST,                /* begun: waiting for the first line */
    FRAME_PRINT,                /* inside a PRINT listing */
    FRAME_LIST,                 /* inside a STATS, HELP or TREE list */
};

struct framer {
    enum frame_state state;
    int cmd;                    /* enum proto_cmd of the request answered */
    int error;                  /* this reply is an "Error: " line */
    int kind;                   /* enum replykind, from its first line */
    int bad;                    /* lines of this reply with a wrong shape */
    size_t lines;               /* lines of this reply so far */
};

void frame_init(struct framer *f);

/* Starts the reply to a request of kind cmd (an enum proto_cmd). */
void frame_begin(struct framer *f, int cmd);

/* Feeds one reply line (without '\n'). Returns 1 when this line completes
 * the reply (the framer is idle again), 0 when more lines belong to it. */
int frame_line(struct framer *f, const char *line, size_t len);

/* 1 when line is exactly the head or tail of a PRINT listing. */
int frame_is_print_head(const char *line, size_t len);
int frame_is_print_tail(const char *line, size_t len);

/* Whether line is CHECK's reply for a sound tree, whole: "OK N entries,
 * all invariants hold" ("entry" for 1), not anything that begins "OK". */
int frame_check_ok(const char *line, size_t len);

#endif
