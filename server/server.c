/* server.c -- the one struct server (server.h) and what reads it whole. Kept
 * out of main.c so the unit tests can link every server object but main(). */
#include "server.h"

struct server srv;
_Thread_local int srv_on_event_loop;

long server_uptime(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - srv.started.tv_sec);
}
