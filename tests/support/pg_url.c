/* SPDX-License-Identifier: Apache-2.0 */
/* Where the PostgreSQL or etcd of a test or benchmark run is (pg_url.h). */
#include "pg_url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* $url_var, else the first line of the file $env_var. */
static char *url_from(const char *url_var, const char *env_var)
{
    const char *url = getenv(url_var);
    const char *env = getenv(env_var);
    char line[1024];
    FILE *fp;

    if (url != NULL && url[0] != '\0')
        return strdup(url);
    if (env == NULL || env[0] == '\0' || (fp = fopen(env, "r")) == NULL)
        return NULL;
    if (fgets(line, sizeof(line), fp) == NULL)
        line[0] = '\0';
    fclose(fp);
    line[strcspn(line, "\r\n")] = '\0';
    return line[0] != '\0' ? strdup(line) : NULL;
}

char *ts_pg_url(void)
{
    return url_from("IDMINT_TEST_PG_URL", "IDMINT_PG_ENV");
}

char *ts_etcd_url(void)
{
    return url_from("IDMINT_TEST_ETCD_URL", "IDMINT_ETCD_ENV");
}
