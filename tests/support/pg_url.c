/* SPDX-License-Identifier: Apache-2.0 */
/* Where the PostgreSQL of a test or benchmark run is (pg_url.h). */
#include "pg_url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ts_pg_url(void)
{
    const char *url = getenv("IDMINT_TEST_PG_URL");
    const char *env = getenv("IDMINT_PG_ENV");
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
