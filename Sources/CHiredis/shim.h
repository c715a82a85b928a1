// Debian's hiredis (libhiredis-dev), the C client for Redis: the synchronous API only.
#ifndef APIMACRO_CHIREDIS_SHIM_H
#define APIMACRO_CHIREDIS_SHIM_H

#include <sys/time.h>
#include <hiredis/hiredis.h>

static const int apimacro_REDIS_REPLY_STRING = REDIS_REPLY_STRING;
static const int apimacro_REDIS_REPLY_ARRAY = REDIS_REPLY_ARRAY;
static const int apimacro_REDIS_REPLY_INTEGER = REDIS_REPLY_INTEGER;
static const int apimacro_REDIS_REPLY_NIL = REDIS_REPLY_NIL;
static const int apimacro_REDIS_REPLY_STATUS = REDIS_REPLY_STATUS;
static const int apimacro_REDIS_REPLY_ERROR = REDIS_REPLY_ERROR;

#endif
