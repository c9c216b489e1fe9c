/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading the module: the settings, the shared supply and the background
 * worker that holds the server's leases. Nothing here opens a handle: the
 * postmaster forks every backend, and a handle opened before a fork must
 * not mint after it, so only the worker (worker.c), after its own fork, ever
 * opens one.
 */
#include "postgres.h"

#include <string.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "settings.h"
#include "supply.h"

PG_MODULE_MAGIC;

char *idmint_pg_authority;
int idmint_pg_region;
int idmint_pg_lease_ms;
int idmint_pg_renew_ms;
int idmint_pg_max_borrow_ms;
int idmint_pg_max_namespaces;
int idmint_pg_max_leases;
char *idmint_pg_namespaces;
int idmint_pg_wait_ms;
int idmint_pg_max_age_ms;

/* idmint.max_borrow_ms's default (README.md, "Speed and order"). */
#define BORROW_DEFAULT_MS 0

static shmem_request_hook_type prev_shmem_request_hook;
static shmem_startup_hook_type prev_shmem_startup_hook;

void _PG_init(void);

bool idmint_pg_namespace_allowed(const char *ns)
{
    const char *list = idmint_pg_namespaces;
    size_t len = strlen(ns);
    if (list == NULL || strcmp(list, "*") == 0) {
        return true;
    }
    while (*list != '\0') {
        const char *end = strchr(list, ',');
        size_t item;
        while (*list == ' ') {
            list++;
        }
        item = end != NULL ? (size_t)(end - list) : strlen(list);
        while (item > 0 && list[item - 1] == ' ') {
            item--;
        }
        if (item == len && strncmp(list, ns, len) == 0) {
            return true;
        }
        if (end == NULL) {
            break;
        }
        list = end + 1;
    }
    return false;
}

static void request_shmem(void)
{
    if (prev_shmem_request_hook != NULL) {
        prev_shmem_request_hook();
    }
    supply_shmem_request(idmint_pg_max_namespaces);
}

static void startup_shmem(void)
{
    if (prev_shmem_startup_hook != NULL) {
        prev_shmem_startup_hook();
    }
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    supply_shmem_init(idmint_pg_max_namespaces);
    LWLockRelease(AddinShmemInitLock);
}

static void define_settings(void)
{
    DefineCustomStringVariable(
        "idmint.authority", "The idmint authority this server mints from.",
        "Any URL libidmint takes (sqlite:PATH, postgres://..., etcd://..., http://...). "
        "Empty: $IDMINT_AUTHORITY of the server's environment, else the library's default.",
        &idmint_pg_authority, "", PGC_POSTMASTER, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
    DefineCustomIntVariable("idmint.region", "The region this server mints in.", NULL,
                            &idmint_pg_region, 0, 0, 65535, PGC_POSTMASTER, 0, NULL, NULL, NULL);
    DefineCustomIntVariable("idmint.lease_ms", "Worker-id lease length; 0: the library's default.",
                            NULL, &idmint_pg_lease_ms, 0, 0, 86400000, PGC_POSTMASTER, GUC_UNIT_MS,
                            NULL, NULL, NULL);
    DefineCustomIntVariable("idmint.renew_ms", "Lease renewal interval; 0: the library's default.",
                            NULL, &idmint_pg_renew_ms, 0, 0, 86400000, PGC_POSTMASTER, GUC_UNIT_MS,
                            NULL, NULL, NULL);
    DefineCustomIntVariable(
        "idmint.max_borrow_ms",
        "How far ahead of the clock a snowflake namespace may mint when a time unit is used up.",
        NULL, &idmint_pg_max_borrow_ms, BORROW_DEFAULT_MS, 0, 1000, PGC_POSTMASTER, GUC_UNIT_MS,
        NULL, NULL, NULL);
    DefineCustomIntVariable(
        "idmint.max_namespaces", "How many namespaces this server can mint from at once.", NULL,
        &idmint_pg_max_namespaces, 16, 1, 1024, PGC_POSTMASTER, 0, NULL, NULL, NULL);
    DefineCustomIntVariable(
        "idmint.max_leases",
        "How many worker ids the server may hold on one snowflake namespace at once.",
        "A namespace whose sessions take IDs faster than one worker id makes them takes another, "
        "up to this many, and gives them back when it is quiet again.",
        &idmint_pg_max_leases, 4, 1, MAX_LEASES_LIMIT, PGC_POSTMASTER, 0, NULL, NULL, NULL);
    DefineCustomStringVariable(
        "idmint.namespaces", "The namespaces sessions of this server may mint from.",
        "\"*\" for any, or a comma-separated list of names.", &idmint_pg_namespaces, "*",
        PGC_SIGHUP, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
    DefineCustomIntVariable("idmint.wait_ms", "How long a call waits for IDs before it fails.",
                            NULL, &idmint_pg_wait_ms, 5000, 1, 3600000, PGC_USERSET, GUC_UNIT_MS,
                            NULL, NULL, NULL);
    DefineCustomIntVariable(
        "idmint.max_age_ms",
        "Snowflake IDs minted ahead and not taken within this long are dropped.", NULL,
        &idmint_pg_max_age_ms, MAX_AGE_DEFAULT_MS, 1, 60000, PGC_SUSET, GUC_UNIT_MS, NULL, NULL,
        NULL);
    MarkGUCPrefixReserved("idmint");
}

static void register_worker(void)
{
    BackgroundWorker worker;
    memset(&worker, 0, sizeof worker);
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
    /* After recovery, so that a postgres:// authority on this same server is reachable. */
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
    worker.bgw_restart_time = 1;
    strlcpy(worker.bgw_library_name, "idmint", BGW_MAXLEN);
    strlcpy(worker.bgw_function_name, "idmint_pg_worker_main", BGW_MAXLEN);
    strlcpy(worker.bgw_name, "idmint supply", BGW_MAXLEN);
    strlcpy(worker.bgw_type, "idmint supply", BGW_MAXLEN);
    RegisterBackgroundWorker(&worker);
}

void _PG_init(void)
{
    define_settings();
    if (!process_shared_preload_libraries_in_progress) {
        /* idmint_uuid7() works anyway; the rest says how to load the module. */
        return;
    }
    prev_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = request_shmem;
    prev_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = startup_shmem;
    register_worker();
}
