/* options.h -- the command line of ssnserver-MODE. */
#ifndef SSN_OPTIONS_H
#define SSN_OPTIONS_H

#include "server.h"

struct lock_policy;

/* Fills opt from argv. Prints --help or --version (naming policy, the lock
 * mode of this build) and exits 0 for those; prints one line on stderr and
 * exits 2 for a bad argument. */
void options_parse(int argc, char **argv, struct options *opt,
                   const struct lock_policy *policy);

#endif
