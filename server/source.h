/* source.h -- a client's source address as a number, for the tables that
 * charge what one address does (log_source.c, auth_source.c, conns.c):
 * FNV-1a over "addr" of "addr:port" or "[v6addr]:port", the port left out,
 * so every connection of one address hashes alike. */
#ifndef SSN_SOURCE_H
#define SSN_SOURCE_H

#include <stdint.h>
#include <string.h>

static inline uint32_t source_hash(const char *peer)
{
    const char *colon = strrchr(peer, ':');
    size_t n = colon ? (size_t)(colon - peer) : strlen(peer);
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)peer[i]) * 16777619u;
    return h;
}

#endif
