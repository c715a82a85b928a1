// Debian's libpq (libpq5), PostgreSQL's own C client: PostgreSQL destinations and state, loaded
// with dlopen on the first connection: nothing here links libpq, so a macro that never writes
// to PostgreSQL does not pay for loading it and the ~20 libraries it needs (Kerberos, LDAP,
// GnuTLS: ~12 M instructions at every start, docs/performance.md). The types come from
// libpq-dev's header; `cpq_load` fills a table of the functions Store calls, and each `cpq_`
// wrapper calls through the table it is given.
#ifndef APIMACRO_CPOSTGRES_SHIM_H
#define APIMACRO_CPOSTGRES_SHIM_H

#include <dlfcn.h>
#include <postgresql/libpq-fe.h>
#include <stdio.h>
#include <stddef.h>

typedef struct cpq_api {
    PGconn *(*connectdbParams)(const char *const *keywords, const char *const *values, int expand_dbname);
    PQnoticeProcessor (*setNoticeProcessor)(PGconn *conn, PQnoticeProcessor proc, void *arg);
    ConnStatusType (*status)(const PGconn *conn);
    char *(*errorMessage)(const PGconn *conn);
    void (*finish)(PGconn *conn);
    PGresult *(*execParams)(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                            const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                            int resultFormat);
    void (*clear)(PGresult *res);
    ExecStatusType (*resultStatus)(const PGresult *res);
    char *(*resultErrorField)(const PGresult *res, int fieldcode);
    char *(*resultErrorMessage)(const PGresult *res);
    int (*ntuples)(const PGresult *res);
    int (*nfields)(const PGresult *res);
    int (*getisnull)(const PGresult *res, int tup_num, int field_num);
    char *(*getvalue)(const PGresult *res, int tup_num, int field_num);
    char *(*cmdTuples)(PGresult *res);
} cpq_api;

/// Fills `table` from libpq, loaded now (the caller keeps one table for the process and calls
/// this once): NULL on success, else dlerror's text or the missing symbol's name (static).
static inline const char *cpq_load(cpq_api *table) {
    static char failure[512];
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) library = dlopen("libpq.so", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "%s", reason ? reason : "libpq.so.5 not found");
        return failure;
    }
#define CPQ_SYMBOL(field, name)                                              \
    if ((*(void **)(&table->field) = dlsym(library, name)) == NULL) {        \
        snprintf(failure, sizeof failure, "libpq.so.5 has no %s", name);     \
        return failure;                                                      \
    }
    CPQ_SYMBOL(connectdbParams, "PQconnectdbParams")
    CPQ_SYMBOL(setNoticeProcessor, "PQsetNoticeProcessor")
    CPQ_SYMBOL(status, "PQstatus")
    CPQ_SYMBOL(errorMessage, "PQerrorMessage")
    CPQ_SYMBOL(finish, "PQfinish")
    CPQ_SYMBOL(execParams, "PQexecParams")
    CPQ_SYMBOL(clear, "PQclear")
    CPQ_SYMBOL(resultStatus, "PQresultStatus")
    CPQ_SYMBOL(resultErrorField, "PQresultErrorField")
    CPQ_SYMBOL(resultErrorMessage, "PQresultErrorMessage")
    CPQ_SYMBOL(ntuples, "PQntuples")
    CPQ_SYMBOL(nfields, "PQnfields")
    CPQ_SYMBOL(getisnull, "PQgetisnull")
    CPQ_SYMBOL(getvalue, "PQgetvalue")
    CPQ_SYMBOL(cmdTuples, "PQcmdTuples")
#undef CPQ_SYMBOL
    return NULL;
}

static inline PGconn *cpq_connectdbParams(const cpq_api *api, const char *const *keywords, const char *const *values, int expand) {
    return api->connectdbParams(keywords, values, expand);
}
static inline PQnoticeProcessor cpq_setNoticeProcessor(const cpq_api *api, PGconn *conn, PQnoticeProcessor proc, void *arg) {
    return api->setNoticeProcessor(conn, proc, arg);
}
static inline ConnStatusType cpq_status(const cpq_api *api, const PGconn *conn) { return api->status(conn); }
static inline char *cpq_errorMessage(const cpq_api *api, const PGconn *conn) { return api->errorMessage(conn); }
static inline void cpq_finish(const cpq_api *api, PGconn *conn) { api->finish(conn); }
static inline PGresult *cpq_execParams(const cpq_api *api, PGconn *conn, const char *command, int count, const Oid *types,
                                       const char *const *values, const int *lengths, const int *formats,
                                       int resultFormat) {
    return api->execParams(conn, command, count, types, values, lengths, formats, resultFormat);
}
static inline void cpq_clear(const cpq_api *api, PGresult *res) { api->clear(res); }
static inline ExecStatusType cpq_resultStatus(const cpq_api *api, const PGresult *res) { return api->resultStatus(res); }
static inline char *cpq_resultErrorField(const cpq_api *api, const PGresult *res, int code) { return api->resultErrorField(res, code); }
static inline char *cpq_resultErrorMessage(const cpq_api *api, const PGresult *res) { return api->resultErrorMessage(res); }
static inline int cpq_ntuples(const cpq_api *api, const PGresult *res) { return api->ntuples(res); }
static inline int cpq_nfields(const cpq_api *api, const PGresult *res) { return api->nfields(res); }
static inline int cpq_getisnull(const cpq_api *api, const PGresult *res, int row, int field) { return api->getisnull(res, row, field); }
static inline char *cpq_getvalue(const cpq_api *api, const PGresult *res, int row, int field) { return api->getvalue(res, row, field); }
static inline char *cpq_cmdTuples(const cpq_api *api, PGresult *res) { return api->cmdTuples(res); }

#endif
