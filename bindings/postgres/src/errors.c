/* SPDX-License-Identifier: Apache-2.0 */
#include "errors.h"

#include "utils/elog.h"

#include "idmint.h"

int idmint_pg_sqlstate(int code)
{
    switch (code) {
    case IDMINT_EINVAL:
        return ERRCODE_INVALID_PARAMETER_VALUE; /* 22023 */
    case IDMINT_ENOMEM:
        return ERRCODE_OUT_OF_MEMORY; /* 53200 */
    case IDMINT_ENOTFOUND:
        return ERRCODE_UNDEFINED_OBJECT; /* 42704 */
    case IDMINT_EEXHAUSTED:
        return ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED; /* 2200H, as nextval past its end */
    case IDMINT_ENOWORKER:
        return ERRCODE_CONFIGURATION_LIMIT_EXCEEDED; /* 53400 */
    case IDMINT_EDISABLED:
    case IDMINT_ELEASELOST:
    case IDMINT_ECLOCK:
    case IDMINT_ERESTORED:
    case IDMINT_ECONFLICT:
        return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE; /* 55000 */
    case IDMINT_EUNAVAILABLE:
    case IDMINT_ETIMEDOUT:
        return ERRCODE_CONNECTION_FAILURE; /* 08006: the authority cannot be reached */
    case IDMINT_EACCESS:
        return ERRCODE_INSUFFICIENT_PRIVILEGE; /* 42501 */
    default:                                   /* ESTORE, EFORKED and codes of a newer library */
        return ERRCODE_SYSTEM_ERROR;           /* 58000 */
    }
}

void idmint_pg_raise_text(int code, const char *message)
{
    ereport(ERROR,
            (errcode(idmint_pg_sqlstate(code)),
             errmsg("idmint: %s",
                    message != NULL && message[0] != '\0' ? message : idmint_strerror(code))));
    pg_unreachable();
}

void idmint_pg_raise(int code)
{
    idmint_pg_raise_text(code, idmint_errmsg());
}

void idmint_pg_raise_timeout(const char *ns, int wait_ms)
{
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE),
                    errmsg("idmint: no IDs of namespace \"%s\" arrived within idmint.wait_ms "
                           "(%d ms)",
                           ns, wait_ms),
                    errhint("The idmint background worker may be starting, or its authority "
                            "slow: see the server log.")));
    pg_unreachable();
}

void idmint_pg_raise_not_loaded(void)
{
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("idmint: the server did not load idmint at start"),
                    errhint("Add idmint to shared_preload_libraries in postgresql.conf and restart "
                            "the server.")));
    pg_unreachable();
}
