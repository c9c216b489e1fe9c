/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the PostgreSQL or etcd of a test or benchmark run is. No cmocka:
 * the benchmarks use it too, in builds without tests.
 */
#ifndef IDMINT_TESTS_PG_URL_H
#define IDMINT_TESTS_PG_URL_H

/*
 * $IDMINT_TEST_PG_URL, else the first line of the file $IDMINT_PG_ENV
 * (written by tests/support/pg-start.sh). malloc'd; NULL when neither is set.
 */
char *ts_pg_url(void);
/*
 * $IDMINT_TEST_ETCD_URL, else the first line of the file $IDMINT_ETCD_ENV
 * (written by tests/support/etcd-start.sh). malloc'd; NULL when neither is set.
 */
char *ts_etcd_url(void);

#endif
