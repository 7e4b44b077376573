/* auth_source.h -- what wrong passwords from one address cost every AUTH
 * from it. A guesser that hangs up as soon as an answer is late (a wrong
 * guess is answered late, a right one was answered at once) learns
 * nothing once its address has failed a few times: from then on every
 * AUTH answer from that address, right or wrong, waits, so each guess
 * costs that wait whichever connection it comes on (OpenSSH's
 * PerSourcePenalties is the model). A wrong password sent to /metrics
 * counts here as a wrong AUTH, and an answer to credentials there waits
 * alike (metrics_http.c): one score for both ports.
 *
 * An address's score counts its failures and halves every
 * AUTH_SOURCE_HALF_LIFE_S seconds. Up to AUTH_SOURCE_FREE failures cost
 * nothing (a person mistyping); past them the wait is 250 ms, doubling
 * with each AUTH_SOURCE_FREE more, up to AUTH_DELAY_MAX_MS (commands.h).
 * Addresses share AUTH_SOURCE_SLOTS slots by hash: two that collide share
 * a score, which can only make a wait longer, never shorter; the hash is
 * keyed at random (source.h), so no client can tell which ones collide.
 */
#ifndef SSN_AUTH_SOURCE_H
#define SSN_AUTH_SOURCE_H

#include <stdint.h>

#define AUTH_SOURCE_SLOTS       4096
#define AUTH_SOURCE_FREE        6
#define AUTH_SOURCE_HALF_LIFE_S 60

/* The wait, in ns, before any AUTH answer to peer ("addr:port", the port
 * not part of the address), at time_now_ns() now. */
uint64_t auth_source_delay(const char *peer, uint64_t now);

/* peer sent a wrong password at now. */
void auth_source_failed(const char *peer, uint64_t now);

/* Forgets every address (tests). */
void auth_source_reset(void);

#endif
