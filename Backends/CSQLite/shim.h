// The system SQLite 3 library (libsqlite3-dev on Debian/Ubuntu, part of the SDK on Apple
// platforms), exposed to Swift as the module CSQLite.
#ifndef ANYDEFAULTS_CSQLITE_SHIM_H
#define ANYDEFAULTS_CSQLITE_SHIM_H

#include <sqlite3.h>

#endif
