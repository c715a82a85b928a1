// Debian's libpq (libpq-dev), PostgreSQL's own C client: PostgreSQL destinations and state.
#ifndef APIMACRO_CPOSTGRES_SHIM_H
#define APIMACRO_CPOSTGRES_SHIM_H

#include <libpq-fe.h>

#endif
