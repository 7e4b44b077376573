/* findpid.c -- which local process listens on a TCP port, so kill_it can
 * name the server it found hung (findpid.h). Reads /proc/net/tcp{,6} for a
 * listening socket's inode, then looks for that inode among the open file
 * descriptors in /proc/PID/fd. Best effort: other users' processes are not
 * readable, and then the answer is 0.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "findpid.h"

#define TCP_LISTEN_STATE 0x0A   /* st column of a listening socket */

static unsigned long listen_inode(const char *table, unsigned port)
{
    FILE *f = fopen(table, "r");
    char line[512];
    unsigned long found = 0;

    if (!f)
        return 0;
    if (!fgets(line, sizeof(line), f)) {        /* the header */
        fclose(f);
        return 0;
    }
    while (!found && fgets(line, sizeof(line), f)) {
        char local[64];
        unsigned lport, st;
        unsigned long inode;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*s %63[0-9A-Fa-f]:%x %*s %x %*s %*s %*s %*u %*u "
                   "%lu", local, &lport, &st, &inode) == 4 &&
            lport == port && st == TCP_LISTEN_STATE && inode)
            found = inode;
    }
    fclose(f);
    return found;
}

static int has_socket(const char *pid, const char *want)
{
    char dir[300], path[600], link[64];
    snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
    DIR *d = opendir(dir);
    struct dirent *e;
    int yes = 0;

    if (!d)
        return 0;
    while (!yes && (e = readdir(d))) {
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n > 0) {
            link[n] = '\0';
            yes = strcmp(link, want) == 0;
        }
    }
    closedir(d);
    return yes;
}

pid_t find_listener_pid(unsigned port)
{
    unsigned long inode = listen_inode("/proc/net/tcp", port);
    if (!inode)
        inode = listen_inode("/proc/net/tcp6", port);
    if (!inode)
        return 0;

    char want[48];
    snprintf(want, sizeof(want), "socket:[%lu]", inode);
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t pid = 0;
    if (!d)
        return 0;
    while (!pid && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (has_socket(e->d_name, want))
            pid = (pid_t)atol(e->d_name);
    }
    closedir(d);
    return pid;
}
