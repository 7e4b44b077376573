/* findpid.h -- which local process listens on a TCP port (findpid.c), for
 * kill_it's hang verdict and bench-limits' memory readings.
 */
#ifndef SSN_FINDPID_H
#define SSN_FINDPID_H

#include <sys/types.h>

/* The pid of the local process listening on TCP port, found through /proc;
 * 0 when unknown (another user's process, or none). */
pid_t find_listener_pid(unsigned port);

#endif
