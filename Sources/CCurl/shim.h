// libcurl for Swift, loaded with dlopen on first use: nothing here links libcurl, so a macro
// that never reaches the network does not pay for loading it and its ~32 shared libraries
// (12 M instructions, Benchmarks/SPIKE-transport.md). `ccurl_load` fills a table of the
// functions the transport calls; every call goes through the table. The variadic functions
// (curl_easy_setopt, curl_easy_getinfo, curl_share_setopt), which Swift
// cannot call, get typed wrappers here.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <stddef.h>

typedef struct ccurl_api {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_reset)(CURL *handle);
    void (*easy_cleanup)(CURL *handle);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
    void (*slist_free_all)(struct curl_slist *list);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_setopt)(CURLSH *share, CURLSHoption option, ...);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *multi);
    CURLMcode (*multi_add_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_perform)(CURLM *multi, int *running);
    CURLMcode (*multi_poll)(CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout_ms, int *ready);
    CURLMcode (*multi_wakeup)(CURLM *multi);
    CURLMsg *(*multi_info_read)(CURLM *multi, int *queued);
    curl_version_info_data *(*version_info)(CURLversion age);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *handle);
    CURLUcode (*url_set)(CURLU *handle, CURLUPart what, const char *part, unsigned int flags);
} ccurl_api;

/// Opens `path` (e.g. "libcurl.so.4") and fills `api`. Returns 0, or -1 when the library
/// cannot be opened, or -2 when a function is missing (a libcurl older than 7.68).
/// RTLD_LAZY: the libraries built without BIND_NOW (Kerberos, GMP, RTMP, …: ~1,800 of the
/// ~9,500 function slots) bind a function when it is first called, not all at load; loading
/// goes from 18.2 M to 15.6 M instructions. Those built with BIND_NOW (libcurl, OpenSSL,
/// GnuTLS) bind all at load either way, and keep their read-only GOT.
static inline int ccurl_load(const char *path, ccurl_api *api) {
    void *library = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (library == NULL) return -1;
#define CCURL_LOAD(field, name) \
    api->field = (__typeof__(api->field))dlsym(library, name); \
    if (api->field == NULL) return -2;
    CCURL_LOAD(global_init, "curl_global_init")
    CCURL_LOAD(easy_init, "curl_easy_init")
    CCURL_LOAD(easy_reset, "curl_easy_reset")
    CCURL_LOAD(easy_cleanup, "curl_easy_cleanup")
    CCURL_LOAD(easy_setopt, "curl_easy_setopt")
    CCURL_LOAD(easy_getinfo, "curl_easy_getinfo")
    CCURL_LOAD(easy_strerror, "curl_easy_strerror")
    CCURL_LOAD(slist_append, "curl_slist_append")
    CCURL_LOAD(slist_free_all, "curl_slist_free_all")
    CCURL_LOAD(share_init, "curl_share_init")
    CCURL_LOAD(share_setopt, "curl_share_setopt")
    CCURL_LOAD(multi_init, "curl_multi_init")
    CCURL_LOAD(multi_cleanup, "curl_multi_cleanup")
    CCURL_LOAD(multi_add_handle, "curl_multi_add_handle")
    CCURL_LOAD(multi_remove_handle, "curl_multi_remove_handle")
    CCURL_LOAD(multi_perform, "curl_multi_perform")
    CCURL_LOAD(multi_poll, "curl_multi_poll")
    CCURL_LOAD(multi_wakeup, "curl_multi_wakeup")
    CCURL_LOAD(multi_info_read, "curl_multi_info_read")
    CCURL_LOAD(version_info, "curl_version_info")
    CCURL_LOAD(url, "curl_url")
    CCURL_LOAD(url_cleanup, "curl_url_cleanup")
    CCURL_LOAD(url_set, "curl_url_set")
#undef CCURL_LOAD
    return 0;
}

/// libcurl's version ("7.88.1"), or NULL.
static inline const char *ccurl_version(const ccurl_api *api) {
    curl_version_info_data *info = api->version_info(CURLVERSION_NOW);
    return info == NULL ? NULL : info->version;
}

/// libcurl's feature bits (`CURL_VERSION_LIBZ`, `CURL_VERSION_BROTLI`, ...), or 0.
static inline int ccurl_features(const ccurl_api *api) {
    curl_version_info_data *info = api->version_info(CURLVERSION_NOW);
    return info == NULL ? 0 : info->features;
}

/// The directory of certificate authorities libcurl trusts when CURLOPT_CAPATH is not set
/// (Debian: /etc/ssl/certs), or NULL (also for a libcurl older than 7.70).
static inline const char *ccurl_builtin_capath(const ccurl_api *api) {
    curl_version_info_data *info = api->version_info(CURLVERSION_NOW);
    return info == NULL || info->age < CURLVERSION_SEVENTH ? NULL : info->capath;
}

/// The file of certificate authorities libcurl trusts when CURLOPT_CAINFO is not set (Debian:
/// /etc/ssl/certs/ca-certificates.crt), or NULL (also for a libcurl older than 7.70).
static inline const char *ccurl_builtin_cainfo(const ccurl_api *api) {
    curl_version_info_data *info = api->version_info(CURLVERSION_NOW);
    return info == NULL || info->age < CURLVERSION_SEVENTH ? NULL : info->cainfo;
}

/// Parses `url` into `handle` as libcurl 7.88 parses `CURLOPT_URL` for a transfer
/// (`parseurlandfillconn`: `CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME`, with
/// `CURLOPT_DISALLOW_USERNAME_IN_URL` and `CURLOPT_PATH_AS_IS` left off): 1 when it parsed.
static inline int ccurl_url_parse(const ccurl_api *api, CURLU *handle, const char *url) {
    return api->url_set(handle, CURLUPART_URL, url, CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK;
}

/// The text of the last dlopen/dlsym failure, or NULL.
static inline const char *ccurl_dlerror(void) { return dlerror(); }

static inline CURLcode ccurl_setopt_long(const ccurl_api *api, CURL *handle, CURLoption option, long value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_offset(const ccurl_api *api, CURL *handle, CURLoption option, curl_off_t value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_string(const ccurl_api *api, CURL *handle, CURLoption option, const char *value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_pointer(const ccurl_api *api, CURL *handle, CURLoption option, void *value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_slist(const ccurl_api *api, CURL *handle, CURLoption option, struct curl_slist *value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_write(const ccurl_api *api, CURL *handle, CURLoption option, curl_write_callback value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_prereq(const ccurl_api *api, CURL *handle, curl_prereq_callback value) {
    return api->easy_setopt(handle, CURLOPT_PREREQFUNCTION, value);
}
static inline CURLcode ccurl_getinfo_long(const ccurl_api *api, CURL *handle, CURLINFO info, long *value) {
    return api->easy_getinfo(handle, info, value);
}
static inline CURLcode ccurl_getinfo_offset(const ccurl_api *api, CURL *handle, CURLINFO info, curl_off_t *value) {
    return api->easy_getinfo(handle, info, value);
}
static inline CURLSHcode ccurl_share_setopt_long(const ccurl_api *api, CURLSH *share, CURLSHoption option, long value) {
    return api->share_setopt(share, option, value);
}
static inline CURLSHcode ccurl_share_setopt_pointer(const ccurl_api *api, CURLSH *share, CURLSHoption option, void *value) {
    return api->share_setopt(share, option, value);
}
static inline CURLSHcode ccurl_share_setopt_lock(const ccurl_api *api, CURLSH *share, curl_lock_function lock) {
    return api->share_setopt(share, CURLSHOPT_LOCKFUNC, lock);
}
static inline CURLSHcode ccurl_share_setopt_unlock(const ccurl_api *api, CURLSH *share, curl_unlock_function unlock) {
    return api->share_setopt(share, CURLSHOPT_UNLOCKFUNC, unlock);
}
/// The easy handle and result of a finished transfer's message (CURLMSG_DONE), or 0.
static inline int ccurl_message_done(CURLMsg *message, CURL **handle, CURLcode *result) {
    if (message == NULL || message->msg != CURLMSG_DONE) return 0;
    *handle = message->easy_handle;
    *result = message->data.result;
    return 1;
}
#endif
