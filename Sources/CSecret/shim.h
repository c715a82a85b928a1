// The system keyring (the Secret Service: GNOME Keyring, KeePassXC) through Debian's libsecret,
// loaded with dlopen when a token is stored or read: nothing here links libsecret or GLib, so
// the binary starts where they are absent, and a command that touches no stored token never
// loads them. The few GLib and libsecret types used are declared here (their ABI is stable:
// SecretSchema and GError are public structs), so no -dev package is needed either.
//
// Every call runs on a thread of its own with a deadline: libsecret's sync calls talk D-Bus,
// and a keyring that never answers (a stopped daemon, a prompt nobody can see) must not hang
// apimacro. At the deadline the call's GCancellable is cancelled; if the thread still has not
// returned a moment later it is left behind (its job is freed by whichever side finishes last).
#ifndef CSECRET_SHIM_H
#define CSECRET_SHIM_H
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct csecret_schema_attribute {
    const char *name;
    int type;  // SECRET_SCHEMA_ATTRIBUTE_STRING = 0
} csecret_schema_attribute;

typedef struct csecret_schema {
    const char *name;
    int flags;  // SECRET_SCHEMA_NONE = 0
    csecret_schema_attribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
} csecret_schema;

typedef struct csecret_gerror {
    unsigned int domain;
    int code;
    char *message;
} csecret_gerror;

typedef struct csecret_api {
    void *(*hash_table_new)(unsigned int (*hash)(const void *), int (*equal)(const void *, const void *));
    int (*hash_table_insert)(void *table, void *key, void *value);
    void (*hash_table_unref)(void *table);
    unsigned int (*str_hash)(const void *);
    int (*str_equal)(const void *, const void *);
    void *(*cancellable_new)(void);
    void (*cancellable_cancel)(void *cancellable);
    void (*object_unref)(void *object);
    void (*error_free)(csecret_gerror *error);
    int (*storev_sync)(const csecret_schema *schema, void *attributes, const char *collection, const char *label,
                       const char *password, void *cancellable, csecret_gerror **error);
    char *(*lookupv_sync)(const csecret_schema *schema, void *attributes, void *cancellable, csecret_gerror **error);
    int (*clearv_sync)(const csecret_schema *schema, void *attributes, void *cancellable, csecret_gerror **error);
    void (*password_free)(char *password);
} csecret_api;

/// The library's functions, or NULL when libsecret-1.so.0 (or a symbol) is missing; loaded once.
static inline const csecret_api *csecret_load(void) {
    static csecret_api api;
    static int state = 0;  // 0: not tried, 1: loaded, 2: failed
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (state == 0) {
        void *library = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
        state = 2;
        if (library != NULL) {
#define CSECRET_SYMBOL(field, name) *(void **)(&api.field) = dlsym(library, name)
            CSECRET_SYMBOL(hash_table_new, "g_hash_table_new");
            CSECRET_SYMBOL(hash_table_insert, "g_hash_table_insert");
            CSECRET_SYMBOL(hash_table_unref, "g_hash_table_unref");
            CSECRET_SYMBOL(str_hash, "g_str_hash");
            CSECRET_SYMBOL(str_equal, "g_str_equal");
            CSECRET_SYMBOL(cancellable_new, "g_cancellable_new");
            CSECRET_SYMBOL(cancellable_cancel, "g_cancellable_cancel");
            CSECRET_SYMBOL(object_unref, "g_object_unref");
            CSECRET_SYMBOL(error_free, "g_error_free");
            CSECRET_SYMBOL(storev_sync, "secret_password_storev_sync");
            CSECRET_SYMBOL(lookupv_sync, "secret_password_lookupv_sync");
            CSECRET_SYMBOL(clearv_sync, "secret_password_clearv_sync");
            CSECRET_SYMBOL(password_free, "secret_password_free");
#undef CSECRET_SYMBOL
            void **fields = (void **)&api;
            int complete = 1;
            for (size_t index = 0; index < sizeof(api) / sizeof(void *); index++) {
                if (fields[index] == NULL) complete = 0;
            }
            if (complete) state = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return state == 1 ? &api : NULL;
}

enum { CSECRET_STORE = 0, CSECRET_LOOKUP = 1, CSECRET_CLEAR = 2 };

/// One keyring call: what it asks, and, once `done`, what came back.
typedef struct csecret_job {
    int operation;
    char *names[8];
    char *values[8];
    int count;
    char *label;
    char *secret;  // in: the secret to store; out: the secret found
    int ok;        // store and clear: whether it succeeded
    char *error;   // the keyring's message, or NULL
    int done;
    int references;
    void *cancellable;
    pthread_mutex_t lock;
    pthread_cond_t finished;
} csecret_job;

static inline void csecret_release(csecret_job *job) {
    pthread_mutex_lock(&job->lock);
    int left = --job->references;
    pthread_mutex_unlock(&job->lock);
    if (left > 0) return;
    const csecret_api *api = csecret_load();
    for (int index = 0; index < job->count; index++) {
        free(job->names[index]);
        free(job->values[index]);
    }
    free(job->label);
    if (job->secret != NULL) {
        memset(job->secret, 0, strlen(job->secret));
        free(job->secret);
    }
    free(job->error);
    if (api != NULL && job->cancellable != NULL) api->object_unref(job->cancellable);
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->finished);
    free(job);
}

static inline void *csecret_worker(void *argument) {
    csecret_job *job = (csecret_job *)argument;
    const csecret_api *api = csecret_load();
    static const csecret_schema schema = {
        "org.apimacro.Token", 0,
        {{"application", 0}, {"home", 0}, {"client", 0}, {"account", 0}, {"kind", 0}, {NULL, 0}},
        0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    void *attributes = api->hash_table_new(api->str_hash, api->str_equal);
    for (int index = 0; index < job->count; index++) {
        api->hash_table_insert(attributes, job->names[index], job->values[index]);
    }
    csecret_gerror *error = NULL;
    char *found = NULL;
    int ok = 0;
    switch (job->operation) {
    case CSECRET_STORE:
        ok = api->storev_sync(&schema, attributes, "default", job->label, job->secret, job->cancellable, &error);
        break;
    case CSECRET_LOOKUP:
        found = api->lookupv_sync(&schema, attributes, job->cancellable, &error);
        ok = error == NULL;
        break;
    default:
        ok = api->clearv_sync(&schema, attributes, job->cancellable, &error);
        if (error == NULL) ok = 1;  // nothing to clear is not a failure
        break;
    }
    api->hash_table_unref(attributes);
    pthread_mutex_lock(&job->lock);
    job->ok = ok;
    if (error != NULL) {
        job->error = strdup(error->message != NULL ? error->message : "unknown error");
        api->error_free(error);
    }
    if (job->operation == CSECRET_LOOKUP) {
        if (job->secret != NULL) free(job->secret);
        job->secret = found != NULL ? strdup(found) : NULL;
        if (found != NULL) {
            memset(found, 0, strlen(found));
            api->password_free(found);
        }
    }
    job->done = 1;
    pthread_cond_broadcast(&job->finished);
    pthread_mutex_unlock(&job->lock);
    csecret_release(job);
    return NULL;
}

/// What `csecret_call` returns: 0 done (see ok, secret, error), 1 no libsecret, 2 timed out,
/// 3 no thread could be started.
typedef struct csecret_result {
    int status;
    int ok;
    char *secret;  // malloc'd, or NULL; the caller frees it (csecret_free)
    char *error;   // malloc'd, or NULL; the caller frees it (csecret_free)
} csecret_result;

static inline void csecret_free(char *text) {
    if (text == NULL) return;
    memset(text, 0, strlen(text));
    free(text);
}

/// Runs one keyring call with the attributes `names`/`values` (`count` of them, at most 8),
/// giving up `seconds` after it started (the call is cancelled then).
static inline csecret_result csecret_call(
    int operation, const char **names, const char **values, int count, const char *label, const char *secret,
    double seconds) {
    csecret_result result = {0, 0, NULL, NULL};
    const csecret_api *api = csecret_load();
    if (api == NULL) {
        result.status = 1;
        return result;
    }
    csecret_job *job = (csecret_job *)calloc(1, sizeof(csecret_job));
    if (job == NULL) {
        result.status = 3;
        return result;
    }
    job->operation = operation;
    job->count = count > 8 ? 8 : count;
    for (int index = 0; index < job->count; index++) {
        job->names[index] = strdup(names[index]);
        job->values[index] = strdup(values[index]);
    }
    job->label = strdup(label != NULL ? label : "apimacro");
    job->secret = secret != NULL ? strdup(secret) : NULL;
    job->references = 2;
    job->cancellable = api->cancellable_new();
    pthread_mutex_init(&job->lock, NULL);
    pthread_cond_init(&job->finished, NULL);
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attributes, csecret_worker, job) != 0) {
        pthread_attr_destroy(&attributes);
        job->references = 1;
        csecret_release(job);
        result.status = 3;
        return result;
    }
    pthread_attr_destroy(&attributes);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    double whole = seconds < 0 ? 0 : seconds;
    deadline.tv_sec += (time_t)whole;
    deadline.tv_nsec += (long)((whole - (double)(time_t)whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&job->lock);
    int cancelled = 0;
    while (!job->done) {
        int waited = pthread_cond_timedwait(&job->finished, &job->lock, &deadline);
        if (waited == ETIMEDOUT) {
            if (cancelled) break;
            // Cancelled, then a last second for the call to return with its cancellation.
            cancelled = 1;
            api->cancellable_cancel(job->cancellable);
            deadline.tv_sec += 1;
        }
    }
    if (job->done && !cancelled) {
        result.ok = job->ok;
        result.secret = job->secret != NULL ? strdup(job->secret) : NULL;
        result.error = job->error != NULL ? strdup(job->error) : NULL;
    } else {
        result.status = 2;
    }
    pthread_mutex_unlock(&job->lock);
    csecret_release(job);
    return result;
}

#endif
