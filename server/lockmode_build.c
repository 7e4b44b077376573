/* lockmode_build.c -- which row of the policy table this binary runs. The
 * Makefile compiles this file once per mode with -DSSN_LOCK_MODE=LOCK_MODE_x
 * and links one of them into each ssnserver-MODE; nothing else differs
 * between the five binaries. */
#include "lockmode.h"

#ifndef SSN_LOCK_MODE
#error "build with -DSSN_LOCK_MODE=LOCK_MODE_<name> (see the Makefile)"
#endif

const struct lock_policy *const lock_policy_built = &lock_policies[SSN_LOCK_MODE];
