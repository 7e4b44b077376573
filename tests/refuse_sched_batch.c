/* refuse_sched_batch.c -- an LD_PRELOAD helper for the integration tests:
 * pthread_setschedparam refuses SCHED_BATCH with EPERM, as a container's
 * system-call filter may, and passes every other call on to libc. A test
 * uses it to show what ssnserver --sched batch does when refused: one
 * warning, sessions served, STATS and /metrics saying "normal"
 * (test-server-lifecycle.sh, case_sched_refused). Never installed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>

int pthread_setschedparam(pthread_t thread, int policy,
                          const struct sched_param *param)
{
    static int (*real)(pthread_t, int, const struct sched_param *);

    if (policy == SCHED_BATCH)
        return EPERM;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pthread_setschedparam");
    return real(thread, policy, param);
}
