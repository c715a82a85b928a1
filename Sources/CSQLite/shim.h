// Debian's SQLite (libsqlite3-dev): the HTTP cache, the state file and SQLite destinations,
// on SQLite's own C API (WebAPI's SQLite folder wraps it).
#ifndef APIMACRO_CSQLITE_SHIM_H
#define APIMACRO_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT: SQLite copies a bound text or blob at once (a macro Swift cannot import).
static inline sqlite3_destructor_type apimacro_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
