/* listener.h -- the accept side: a libevent evconnlistener on the main
 * thread applies --max-clients and the lock policy's admission, then hands
 * each connection to the thread-per-connection driver (threads.h). */
#ifndef SSN_LISTENER_H
#define SSN_LISTENER_H

#include <event2/event.h>

/* Binds srv.opt.bind:port and prints "listening on ADDR:PORT" on stdout.
 * Returns 0, or -1 after printing why on stderr. */
int listener_start(struct event_base *base);

/* Accepts again after the policy paused admission (any thread may call
 * it; a no-op when not paused or after listener_stop). */
void listener_resume(void);

/* srv.opt.bind with port, resolved for a listening socket, into *ai
 * (freeaddrinfo it), once protected mode allows it: an address beyond
 * loopback only with --password-file or --unprotected. Returns 0, or -1
 * after one line on stderr (what names the port in it: NULL for the main
 * one, "--metrics-port"). The main port and --metrics-port both bind
 * through it. */
struct addrinfo;
int listener_address(const char *what, int port, struct addrinfo **ai);

/* Prints "WHAT ADDR:PORT" ("[ADDR]:PORT" for IPv6) of the socket fd is
 * bound to, on its own line on stdout, flushed. */
void listener_print_address(const char *what, int fd);

/* "addr:port" or "[v6addr]:port" of sa, for the log (SSN_PEER_MAX). */
struct sockaddr;
void listener_format_peer(const struct sockaddr *sa, char *out, size_t cap);

/* Stops accepting; connections already accepted go on. */
void listener_stop(void);

#endif
