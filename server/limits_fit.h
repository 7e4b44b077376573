/* limits_fit.h -- start-up's fitting of the connection limits to the
 * open-file limit (docs/LIMITS.md, "descriptors at start"). */
#ifndef SSN_LIMITS_FIT_H
#define SSN_LIMITS_FIT_H

/* Raises the open-file limit as far as --max-clients (and --metrics-port's
 * connections) need and the system allows, else lowers --max-clients to
 * fit, logging it. Returns 0, or -1 after one line on stderr when not even
 * one client fits. */
int limits_fit_fds(void);

/* --max-unauth: a quarter of --max-clients by default, always below it.
 * Returns 0, or -1 after a line on stderr when --max-clients was lowered
 * to 1 with a password: no room below it. */
int limits_fit_max_unauth(void);

#endif
