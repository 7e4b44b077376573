/* auth_source.c -- wrong passwords counted per address (auth_source.h).
 * slots_lock protects the slots; it is held for a hash's slot and a few
 * arithmetic steps, never with another lock taken under it. */
#include <pthread.h>
#include <string.h>
#include "auth_source.h"
#include "commands.h"
#include "source.h"
#include "timeutil.h"

struct source_score {
    uint32_t score;             /* failures, halved every half-life */
    uint64_t since_s;           /* the second score was last halved to */
};

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct source_score slots[AUTH_SOURCE_SLOTS];   /* by slots_lock */

static struct source_score *slot_of(const char *peer)
{
    return &slots[source_hash(peer) % AUTH_SOURCE_SLOTS];
}

/* Halves the score once per half-life gone by; slots_lock held. */
static void decay_locked(struct source_score *sc, uint64_t now)
{
    uint64_t sec = now / TIME_NS_PER_SEC;
    uint64_t lives = (sec - sc->since_s) / AUTH_SOURCE_HALF_LIFE_S;

    if (sec < sc->since_s || lives == 0)
        return;
    sc->score = lives >= 32 ? 0 : sc->score >> lives;
    sc->since_s += lives * AUTH_SOURCE_HALF_LIFE_S;
}

uint64_t auth_source_delay(const char *peer, uint64_t now)
{
    struct source_score *sc = slot_of(peer);
    uint64_t max = (uint64_t)AUTH_DELAY_MAX_MS * TIME_NS_PER_MS;
    uint64_t d = (uint64_t)AUTH_DELAY_FIRST_MS * TIME_NS_PER_MS;
    uint32_t score;

    pthread_mutex_lock(&slots_lock);
    decay_locked(sc, now);
    score = sc->score;
    pthread_mutex_unlock(&slots_lock);
    if (score <= AUTH_SOURCE_FREE)
        return 0;
    for (uint32_t over = score - AUTH_SOURCE_FREE - 1;
         over >= AUTH_SOURCE_FREE && d < max; over -= AUTH_SOURCE_FREE)
        d *= 2;
    return d < max ? d : max;
}

void auth_source_failed(const char *peer, uint64_t now)
{
    struct source_score *sc = slot_of(peer);

    pthread_mutex_lock(&slots_lock);
    if (sc->score == 0)
        sc->since_s = now / TIME_NS_PER_SEC;
    decay_locked(sc, now);
    if (sc->score < UINT32_MAX)
        sc->score++;
    pthread_mutex_unlock(&slots_lock);
}

void auth_source_reset(void)
{
    pthread_mutex_lock(&slots_lock);
    memset(slots, 0, sizeof(slots));
    pthread_mutex_unlock(&slots_lock);
}
