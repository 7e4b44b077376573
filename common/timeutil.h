/* timeutil.h -- the monotonic clock in nanoseconds, absolute deadlines for
 * timed waits and a sleep that survives signals. Header only, no state:
 * clients time requests with it, and the server uses it for its own timings.
 */
#ifndef SSN_TIMEUTIL_H
#define SSN_TIMEUTIL_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#define TIME_NS_PER_SEC  1000000000ull    /* nanoseconds in a second */
#define TIME_NS_PER_MS   1000000ull       /* nanoseconds in a millisecond */

/* Nanoseconds on CLOCK_MONOTONIC: only differences mean anything. */
static inline uint64_t time_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * TIME_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline double time_ns_to_s(uint64_t ns)
{
    return (double)ns / (double)TIME_NS_PER_SEC;
}

static inline double time_ns_to_ms(uint64_t ns)
{
    return (double)ns / (double)TIME_NS_PER_MS;
}

/* Seconds (may be fractional, negative counts as 0) to nanoseconds. */
static inline uint64_t time_s_to_ns(double s)
{
    return s > 0 ? (uint64_t)(s * (double)TIME_NS_PER_SEC) : 0;
}

/* The CLOCK_MONOTONIC time ns nanoseconds from now, as the absolute
 * timespec that pthread_cond_timedwait wants (with a condition variable
 * set to CLOCK_MONOTONIC by pthread_condattr_setclock). */
static inline struct timespec time_mono_after_ns(uint64_t ns)
{
    uint64_t t = time_now_ns() + ns;
    struct timespec ts = {
        .tv_sec = (time_t)(t / TIME_NS_PER_SEC),
        .tv_nsec = (long)(t % TIME_NS_PER_SEC),
    };
    return ts;
}

/* Sleeps ns nanoseconds in full, resuming after signal interruptions. */
static inline void time_sleep_ns(uint64_t ns)
{
    struct timespec ts = {
        .tv_sec = (time_t)(ns / TIME_NS_PER_SEC),
        .tv_nsec = (long)(ns % TIME_NS_PER_SEC),
    };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

#endif
