// Debian's SQLite (libsqlite3-dev): the HTTP cache, the state file and SQLite destinations,
// on SQLite's own C API (WebAPI's SQLite folder wraps it).
#ifndef APIMACRO_CSQLITE_SHIM_H
#define APIMACRO_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT: SQLite copies a bound text or blob at once (a macro Swift cannot import).
static inline sqlite3_destructor_type apimacro_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/// Double-quoted text is an identifier only, never a string literal (SQLITE_DBCONFIG_DQS_DML and
/// _DDL off, as GRDB had it): `"missing"` in a statement is an error, not the text 'missing'.
/// sqlite3_db_config is variadic, which Swift cannot call.
static inline int apimacro_sqlite_strict_quotes(sqlite3 *db) {
    int code = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (code != SQLITE_OK) return code;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}

#endif
