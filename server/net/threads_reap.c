/* threads_reap.c -- the ended list of session threads and the main
 * thread's joins (threads_reap.h). ended_lock, a leaf, protects the list
 * and each tconn's ended_next.
 */
#include <pthread.h>
#include <stdlib.h>
#include "threads.h"
#include "threads_reap.h"

static pthread_mutex_t ended_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tconn *ended;     /* protected by ended_lock */

void threads_note_ended(struct tconn *t)
{
    pthread_mutex_lock(&ended_lock);
    t->ended_next = ended;
    ended = t;
    pthread_mutex_unlock(&ended_lock);
}

/* Joins the ended threads: all of them (wait), or those already gone,
 * the others put back for the next reap. */
static void reap(int wait)
{
    struct tconn *busy = NULL, **tail = &busy;

    pthread_mutex_lock(&ended_lock);
    struct tconn *list = ended;
    ended = NULL;
    pthread_mutex_unlock(&ended_lock);
    while (list) {
        struct tconn *t = list;
        list = t->ended_next;
        if (wait ? pthread_join(t->tid, NULL)
                 : pthread_tryjoin_np(t->tid, NULL)) {
            *tail = t;                  /* still returning */
            tail = &t->ended_next;
            continue;
        }
        free(t);
    }
    if (busy) {
        pthread_mutex_lock(&ended_lock);
        *tail = ended;
        ended = busy;
        pthread_mutex_unlock(&ended_lock);
    }
}

void threads_reap(void)
{
    reap(0);
}

void threads_reap_all(void)
{
    reap(1);
}
