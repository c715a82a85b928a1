// Debian's hiredis (libhiredis-dev), the C client for Redis: the synchronous API only.
#ifndef APIMACRO_CHIREDIS_SHIM_H
#define APIMACRO_CHIREDIS_SHIM_H

#include <sys/time.h>
#include <stdlib.h>
#include <hiredis/hiredis.h>

static const int apimacro_REDIS_REPLY_STRING = REDIS_REPLY_STRING;
static const int apimacro_REDIS_REPLY_ARRAY = REDIS_REPLY_ARRAY;
static const int apimacro_REDIS_REPLY_INTEGER = REDIS_REPLY_INTEGER;
static const int apimacro_REDIS_REPLY_NIL = REDIS_REPLY_NIL;
static const int apimacro_REDIS_REPLY_STATUS = REDIS_REPLY_STATUS;
static const int apimacro_REDIS_REPLY_ERROR = REDIS_REPLY_ERROR;

/// The most elements an array reply may declare. hiredis 0.14 allocates an array of the
/// declared size at once and walks all of it when freed, so a hostile `*2000000000` costs
/// seconds of CPU whatever the bytes that follow; apimacro's replies are a few elements.
static const int apimacro_REDIS_MAX_ELEMENTS = 4096;

/// hiredis's own `createArrayObject` (hiredis.c, 0.14: calloc, free), refusing a declared
/// size over `apimacro_REDIS_MAX_ELEMENTS` (NULL: the reader fails with "Out of memory").
static inline void *apimacro_create_array(const redisReadTask *task, int elements) {
    if (elements < 0 || elements > apimacro_REDIS_MAX_ELEMENTS) return NULL;
    redisReply *reply = (redisReply *)calloc(1, sizeof(redisReply));
    if (reply == NULL) return NULL;
    reply->type = REDIS_REPLY_ARRAY;
    if (elements > 0) {
        reply->element = (redisReply **)calloc((size_t)elements, sizeof(redisReply *));
        if (reply->element == NULL) {
            free(reply);
            return NULL;
        }
    }
    reply->elements = (size_t)elements;
    if (task->parent != NULL) {
        redisReply *parent = (redisReply *)task->parent->obj;
        parent->element[task->idx] = reply;
    }
    return reply;
}

/// Makes `reader` build arrays through `apimacro_create_array`; `storage` (owned by the
/// caller, alive as long as the reader) holds the reader's functions with that one replaced.
static inline void apimacro_bound_reader(redisReader *reader, redisReplyObjectFunctions *storage) {
    if (reader == NULL || reader->fn == NULL) return;
    *storage = *reader->fn;
    storage->createArray = apimacro_create_array;
    reader->fn = storage;
}

#endif
