/* server.c -- the one struct server (server.h) and what reads it whole. Kept
 * out of main.c so the unit tests can link every server object but main(). */
#include "server.h"

struct server srv;

long server_uptime(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - srv.started.tv_sec);
}
