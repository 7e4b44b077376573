/* source.h -- a client's source address as a number, for the tables that
 * charge what one address does (log_source.c, auth_source.c, conns.c):
 * SipHash-1-3 of "addr" of "addr:port" or "[v6addr]:port", the port left
 * out, so every connection of one address hashes alike. Keyed at random
 * once a process (source.c): the tables' slots are shared by addresses
 * that collide, and with a hash anyone can compute, a client holding many
 * addresses (an IPv6 prefix) could pick one that shares a victim's slot,
 * and with it the victim's AUTH wait or its count of connections. */
#ifndef SSN_SOURCE_H
#define SSN_SOURCE_H

#include <stdint.h>

uint32_t source_hash(const char *peer);

#endif
