/* journal_switch.c -- a compaction's last step (journal_compact.c has the
 * whole story): a round only the flusher runs. Under j->lock it takes the
 * rewrite buffer's last records and holds appends back; with no lock held
 * it writes them, syncs PATH.compact, renames it over PATH (j->real_path:
 * through a symbolic link, the target is replaced in its own directory)
 * and syncs the directory; under j->lock again it publishes the new file.
 * A failure before the rename abandons the compaction, the old journal
 * whole; after it, the server turns read-only.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "journal.h"
#include "journal_int.h"
#include "server.h"
#include "journal_rec.h"
#include "journal_seams.h"
#include "log.h"
#include "timeutil.h"

/* ---- 3. the switch, by the flusher ------------------------------------ */

void journal_switch_take_locked(struct journal *j, struct jswitch *sw)
{
    memset(sw, 0, sizeof(*sw));
    sw->fd = j->compact_fd;
    sw->reserved_end = j->reserved_end;
    j->compact_state = JCOMPACT_SWITCHING;
    /* The switch marks every record up to hi durable in the new file, so
     * the new file must hold every one of them. A record the rewrite
     * buffer could not take (compact_nomem) is in the old journal only,
     * and may have been acknowledged from there: abandon. The old journal
     * stays, and this round writes the active buffer to it as any round
     * would. A journal broken meanwhile is abandoned too. */
    if (j->compact_nomem || j->broken) {
        sw->err = j->broken ? EROFS : ENOMEM;
        sw->what = j->broken ? "the journal is read-only"
                             : "the rewrite buffer cannot grow";
        return;
    }
    sw->rem = j->compact_buf;
    memset(&j->compact_buf, 0, sizeof(j->compact_buf));
    sw->hi = j->appended_seq;
    sw->off = j->compact_end;
    j->reserved_end = j->accepted_end;  /* appends wait for the switch */
}

/* The directory that holds path, opened for its sync after the rename,
 * and before it, so that nothing that may fail for want of memory is left
 * once the new file has the journal's name. The descriptor, or -errno. */
static int open_dir(const char *path)
{
    char *copy = journal_malloc(JALLOC_SWITCH, strlen(path) + 1);
    if (!copy)
        return -ENOMEM;
    strcpy(copy, path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int err = errno;
    free(copy);
    return fd < 0 ? -err : fd;
}

void journal_switch_io(struct journal *j, struct jswitch *sw)
{
    int dfd = -1;

    if (sw->err) {                      /* abandoned when taken */
        close(sw->fd);
        unlink(j->compact_path);
        return;
    }
    if ((sw->err = journal_pwrite_all(sw->fd, sw->rem.data, sw->rem.len,
                                      (off_t)sw->off))) {
        sw->what = "cannot write the new file";
    } else if (journal_sync_fn(sw->fd)) {
        sw->err = errno;
        sw->what = "cannot sync the new file";
    } else if ((dfd = open_dir(j->real_path)) < 0) {
        sw->err = -dfd;
        sw->what = "cannot open the journal's directory";
    }
    free(sw->rem.data);
    /* Never renamed over a file that is not this server's journal any
     * more (a second server's, since the old one was removed). */
    if (!sw->err)
        sw->err = journal_owner_still(j->fd, j->real_path, 0, &sw->what);
    if (!sw->err) {
        journal_seam_crash(JCRASH_WRITTEN);
        if (rename(j->compact_path, j->real_path)) {
            sw->err = errno;
            sw->what = "cannot rename the new file into place";
        }
    }
    if (sw->err) {                      /* the old journal stays */
        if (dfd >= 0)
            close(dfd);
        close(sw->fd);
        unlink(j->compact_path);
        return;
    }
    sw->renamed = 1;
    journal_seam_crash(JCRASH_RENAMED);
    close(j->fd);                       /* its lock goes: sw->fd's holds */
    j->fd = sw->fd;                     /* only the round under way uses it */
    if (fsync(dfd)) {
        sw->err = errno;
        sw->what = "journal directory sync failed";
    }
    close(dfd);
    sw->rerr = journal_reserve_chunk(j->fd, sw->off + sw->rem.len,
                                     RESERVE_WRITTEN(j), &sw->rlen);
}

void journal_switch_publish_locked(struct journal *j, struct jswitch *sw)
{
    j->reserve_tries++;                 /* appends waiting look again */
    if (!sw->renamed) {
        j->reserved_end = sw->reserved_end;
        journal_compact_finish_locked(j, sw->err, sw->what);
        return;
    }
    uint64_t end = sw->off + sw->rem.len;
    if (sw->hi > j->written_seq && !sw->err) {
        j->written_records += sw->hi - j->written_seq;
        j->writes++;
        j->written_seq = j->synced_seq = sw->hi;
    }
    j->accepted_end = end + j->buf[j->active].len;
    j->written_end = end;
    if (sw->rerr) {
        j->reserved_end = end;
        j->reserve_error = sw->rerr;
    } else {
        j->reserved_end = end + sw->rlen;
        j->reserve_error = 0;
    }
    if (sw->err)                        /* renamed, the name not durable */
        journal_set_broken_locked(j, sw->what, sw->err);
    else
        j->compactions++;
    journal_compact_finish_locked(j, sw->err, sw->what ? sw->what : "");
}
