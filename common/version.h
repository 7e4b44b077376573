/* version.h -- the one place the project's version lives. Every program
 * of the suite (the servers, the load clients, the benchmarks) prints it
 * for --version and -V, on one line in one form:
 *
 *     PROGRAM SSN_VERSION (SSN_SUITE)       e.g. "inputgen 0.3.0 (ssnserver-suite)"
 *
 * (the server may add its lock mode after a comma). Change the number here
 * and nowhere else.
 */
#ifndef SSN_COMMON_VERSION_H
#define SSN_COMMON_VERSION_H

#define SSN_VERSION "0.3.0"             /* the version of the whole suite */
#define SSN_SUITE   "ssnserver-suite"   /* the name every --version line ends with */

#endif
