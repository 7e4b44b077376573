/* journal_owner.c -- one server per journal, and a journal only its owner
 * can read: journal_open (journal_open.c) opens the file here, and the
 * compactor (journal_compact.c) locks its new file here before it becomes
 * the journal. No state of its own, no thread, no lock of the journal's.
 *
 * The lock. A server holds an exclusive open file description lock
 * (fcntl F_OFD_SETLK, a write lock on the whole file) on the journal from
 * before it reads a byte until it closes it. The kernel drops it when the
 * last descriptor of that description closes, so kill -9 frees it and a
 * restart after a crash finds the journal free. A second server's
 * F_OFD_SETLK fails, and it refuses to start.
 *
 * Why on the journal itself, and how it survives a compaction. The lock
 * is on an inode, and COMPACT replaces the journal's inode by renaming
 * PATH.compact over PATH. The owner keeps one rule: whatever inode the
 * name leads to, it holds that inode's lock. It locks PATH.compact when
 * it creates it (journal_owner_lock, journal_compact.c), long before the
 * rename, and closes the old journal only after the rename; so before the
 * rename the name leads to the old inode, locked, after it to the new one,
 * locked, and there is no moment in between. A second server may still
 * open the old inode just before the rename and lock it just after the
 * owner closed it: it then holds the lock of a file that is no longer the
 * journal. So a lock counts only once the name, looked up again after it
 * was taken, leads to the locked inode (journal_owner_open); if it does
 * not, the journal was switched meanwhile and the server tries again,
 * and then meets the owner's lock on the new inode. Because of the rule,
 * a name that leads to a locked inode that this server locked means no
 * other server owns the journal. Locking the inode, not a name, also
 * makes two servers meet whatever names they use: a symbolic link, a bind
 * mount, a hard link (until a compaction: the new file does not have it,
 * so it names the old journal from then on). A separate, never renamed
 * PATH.lock would survive the rename by itself, but two names of one
 * journal would get two lock files, and it would be one more file left
 * beside the journal.
 *
 * PATH above is the file's own path, every symbolic link resolved
 * (j->real_path): the one the rename and the check after the lock use.
 * Only the owner removes or writes PATH.compact: journal_open cleans a
 * leftover up only after journal_owner_open returned.
 *
 * The mode. The journal holds SSNs: a file that group or others may read
 * or write (mode & 077) is refused at start-up, as ssh refuses a private
 * key others can read, with the chmod that fixes it. A new journal is
 * created 0600, as is the compaction's new file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "journal_int.h"

#define OWNER_TRIES 8           /* journal switches seen at open before
                                   giving up: only an owner switches it */
#define FDINFO_MAX  4096        /* what is read of one /proc fdinfo file */

int journal_owner_still(int fd, const char *real, uint64_t end,
                        const char **what)
{
    struct stat held, named;

    if (fstat(fd, &held)) {
        *what = "cannot stat the journal";
        return errno;
    }
    if (held.st_nlink == 0 || stat(real, &named) ||
        named.st_dev != held.st_dev || named.st_ino != held.st_ino) {
        *what = "the journal file was removed or replaced while the server "
                "ran";
        return ESTALE;
    }
    if ((uint64_t)held.st_size < end) {     /* reserved space included */
        *what = "the journal file was cut short while the server ran";
        return ESTALE;
    }
    return 0;
}

int journal_owner_clear(const char *cpath)
{
    int fd = open(cpath, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int rc = 0;

    if (fd < 0 && errno == ENOENT)
        return ENOENT;
    /* A file another server holds the lock of is its journal, named as
     * this one's compaction file would be: left alone. */
    if (fd >= 0 && (rc = journal_owner_lock(fd)) != 0 &&
        (rc == EAGAIN || rc == EACCES)) {
        close(fd);
        return EBUSY;
    }
    rc = unlink(cpath) ? errno : 0;
    if (fd >= 0)
        close(fd);
    return rc;
}

int journal_owner_create(const char *cpath)
{
    int rc = journal_owner_clear(cpath);

    if (rc && rc != ENOENT) {
        errno = rc;
        return -1;
    }
    /* O_EXCL: a file or link put there since is never written through. */
    return open(cpath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);
}

int journal_owner_lock(int fd)
{
    struct flock fl = {
        .l_type = F_WRLCK,
        .l_whence = SEEK_SET,
        .l_start = 0,
        .l_len = 0,             /* the whole file, however long */
    };

    while (fcntl(fd, F_OFD_SETLK, &fl) < 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* Whether /proc/PID/fdinfo/FD (opened at dirfd) holds an OFD write lock:
 * a "lock:" line of its own (fdinfo lists only the locks of that open
 * file description), not a waiter's ("->"). */
static int fdinfo_holds_lock(int dirfd, const char *fd)
{
    char buf[FDINFO_MAX];
    int f = openat(dirfd, fd, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return 0;
    ssize_t n = read(f, buf, sizeof(buf) - 1);
    close(f);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    for (char *line = strstr(buf, "lock:"); line;
         line = strstr(line + 1, "lock:")) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        int held = strstr(line, "OFDLCK") && strstr(line, "WRITE") &&
                   !strstr(line, "->");
        if (end)
            *end = '\n';
        if (held)
            return 1;
    }
    return 0;
}

/* The PID of the process whose descriptor holds the lock on the file sb
 * describes, or 0 when none is found. Best effort, and only on the way to
 * refusing to start: F_OFD_GETLK and /proc/locks say -1 for an OFD lock's
 * PID, so each process's descriptors are looked at (/proc/PID/fd, then
 * the fdinfo of the ones on this file); processes of other users cannot
 * be looked into unless we are root. */
static pid_t lock_holder(const struct stat *sb)
{
    pid_t found = 0, self = getpid();
    DIR *proc = opendir("/proc");
    struct dirent *p;

    if (!proc)
        return 0;
    while (!found && (p = readdir(proc))) {
        char *end, path[64];
        long pid = strtol(p->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
        DIR *fds = opendir(path);
        if (!fds)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/fdinfo", pid);
        int info = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *d;
        while (info >= 0 && !found && (d = readdir(fds))) {
            struct stat st;
            if (d->d_name[0] == '.' ||
                fstatat(dirfd(fds), d->d_name, &st, 0) ||
                st.st_dev != sb->st_dev || st.st_ino != sb->st_ino)
                continue;
            if (fdinfo_holds_lock(info, d->d_name))
                found = (pid_t)pid;
        }
        if (info >= 0)
            close(info);
        closedir(fds);
    }
    closedir(proc);
    return found;
}

/* Why fd's lock could not be taken, into err. */
static void say_in_use(int fd, const char *path, int rc,
                       char *err, size_t errlen)
{
    struct stat sb;
    pid_t pid = 0;

    if (rc != EAGAIN && rc != EACCES) {
        snprintf(err, errlen, "cannot lock %s: %s", path, strerror(rc));
        return;
    }
    if (fstat(fd, &sb) == 0)
        pid = lock_holder(&sb);
    if (pid > 0)
        snprintf(err, errlen, "%s is in use by another server, pid %ld "
                 "(one journal, one server)", path, (long)pid);
    else
        snprintf(err, errlen, "%s is in use by another server (one "
                 "journal, one server)", path);
}

int journal_owner_open(const char *path, char **real,
                       char *err, size_t errlen)
{
    struct stat held, named;
    int fd = -1, rc;

    *real = NULL;
    for (int tries = 0;; tries++) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(err, errlen, "cannot open %s: %s", path,
                     strerror(errno));
            return -1;
        }
        if ((rc = journal_owner_lock(fd))) {
            say_in_use(fd, path, rc, err, errlen);
            goto err;
        }
        /* Resolved once, after the lock: renames and the directory sync
         * act on the file itself, a symbolic link left in place. */
        if (!(*real = realpath(path, NULL))) {
            snprintf(err, errlen, "cannot resolve %s: %s", path,
                     strerror(errno));
            goto err;
        }
        if (fstat(fd, &held)) {
            snprintf(err, errlen, "cannot stat %s: %s", path,
                     strerror(errno));
            goto err;
        }
        /* The lock counts only if the name still leads to it (above). */
        if (stat(*real, &named) == 0 && named.st_dev == held.st_dev &&
            named.st_ino == held.st_ino)
            break;
        close(fd);
        free(*real);
        *real = NULL;
        if (tries + 1 == OWNER_TRIES) {
            snprintf(err, errlen, "%s is in use by another server (it was "
                     "replaced %d times while this one opened it)", path,
                     OWNER_TRIES);
            return -1;
        }
    }
    if (held.st_mode & 077) {
        snprintf(err, errlen, "permissions %04o for %s are too open: "
                 "group or others have access, and a journal holds SSNs; "
                 "fix it with: chmod 600 %s",
                 (unsigned)(held.st_mode & 07777), path, path);
        goto err;
    }
    return fd;
err:
    close(fd);
    free(*real);
    *real = NULL;
    return -1;
}
