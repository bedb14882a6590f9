#ifndef ANYDEFAULTS_CLMDB_SHIM_H
#define ANYDEFAULTS_CLMDB_SHIM_H

#include <lmdb.h>

#endif
