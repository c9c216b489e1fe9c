/* SPDX-License-Identifier: Apache-2.0 */
/*
 * This host's witness of the places its stores are (src/witness.c, the
 * bindings; src/authority_restore.c, binding_step and fence_rebind;
 * src/store/location.c, the keys): a store deleted and made anew at the
 * place a store this host used was, is refused before it grants anything;
 * a fence here accepts it; another place is independent; a folder an older
 * idmint kept (no bindings) still works; a damaged binding is never read as
 * none. On SQLite files in a folder of each test's own, with a witness
 * folder of its own (IDMINT_WITNESS_DIR).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "store.h"
#include "testsupport.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fx {
    char *dir;          /* the test's folder: stores and the witness */
    char witness[1024]; /* dir/witness */
    char url[1100];     /* sqlite:dir/a.db */
    char path[1024];    /* dir/a.db */
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL || (f->dir = ts_tempdir()) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->witness, sizeof(f->witness), "%s/witness", f->dir);
    snprintf(f->path, sizeof(f->path), "%s/a.db", f->dir);
    snprintf(f->url, sizeof(f->url), "sqlite:%s", f->path);
    setenv("IDMINT_WITNESS_DIR", f->witness, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    unsetenv("IDMINT_WITNESS_DIR");
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

/* Create range namespace @p ns at @p url (a new store there if none). */
static void make_range(const char *url, const char *ns)
{
    idmint_authority *a = NULL;
    idmint_ns_info info;

    assert_int_equal(idmint_authority_open(&a, url, 0), 0);
    idmint_ns_info_init_v2(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", ns);
    info.block = 10;
    assert_int_equal(idmint_ns_create(a, &info), 0);
    idmint_authority_close(a);
}

/* Open a handle on @p ns at @p url and mint one ID into *id: the handle's result. */
static int mint_one(const char *url, const char *ns, uint64_t *id)
{
    idmint *m = NULL;
    int rc = idmint_open(&m, url, ns, NULL);

    if (rc == 0) {
        rc = idmint_next(m, id);
        idmint_close(m);
    }
    return rc;
}

/* The store id of the store at @p url. */
static void store_id_of(const char *url, char out[33])
{
    struct idmint__history_state hs;
    struct store *st = NULL;

    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    assert_int_equal(idmint__store_history_check(st, 0, &hs), 0);
    memcpy(out, hs.store_id, 33);
    idmint__store_close(st);
}

/* Remove the SQLite store at @p path, as an operator who took it for a cache. */
static void delete_store(const char *path)
{
    char side[4400];

    assert_int_equal(unlink(path), 0);
    snprintf(side, sizeof(side), "%s-wal", path);
    (void)unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    (void)unlink(side);
}

/* Fence range namespace @p ns of the store at @p url above @p above. */
static void fence_above(const char *url, const char *ns, uint64_t above)
{
    idmint_fence_range r = {ns, 0, above};
    idmint_authority *a = NULL;

    assert_int_equal(idmint_authority_open_existing(&a, url, 0), 0);
    assert_int_equal(idmint_authority_fence(a, &r, 1, 0), 0);
    idmint_authority_close(a);
}

/* Copy the file @p from to @p to, as an operator's cp of a quiet store. */
static void copy_file(const char *from, const char *to)
{
    char buf[65536];
    size_t n;
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");

    assert_non_null(in);
    assert_non_null(out);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    assert_int_equal(fclose(in), 0);
    assert_int_equal(fclose(out), 0);
}

/* Remove every "location-*" file of @p dir (the bindings an older idmint never wrote). */
static int drop_bindings(const char *dir)
{
    char path[4400];
    struct dirent *e;
    DIR *d = opendir(dir);
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "location-", 9) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        assert_int_equal(unlink(path), 0);
        n++;
    }
    closedir(d);
    return n;
}

/* How many files of @p dir end in @p suffix. */
static int count_entries(const char *dir, const char *suffix)
{
    size_t len = strlen(suffix);
    struct dirent *e;
    DIR *d = opendir(dir);
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t name_len = strlen(e->d_name);

        n += name_len >= len && strcmp(e->d_name + name_len - len, suffix) == 0;
    }
    closedir(d);
    return n;
}

/* ==== the files ==== */

static void test_witness__a_binding_reads_back_and_a_place_never_used_has_none(void **state)
{
    struct fx *f = *state;
    const char *odd = "sqlite:/srv/a b/100%\n/x.db"; /* spaces, '%', a newline */
    char sid[33], path[4300];

    assert_int_equal(idmint__witness_dir(f->witness, sizeof(f->witness)), 0);
    assert_int_equal(idmint__witness_location_read(f->witness, odd, sid, path, sizeof(path)), 1);
    assert_int_equal(idmint__witness_location_write(f->witness, odd,
                                                    "0123456789abcdef0123456789abcdef", "a note"),
                     0);
    assert_int_equal(idmint__witness_location_read(f->witness, odd, sid, path, sizeof(path)), 0);
    assert_string_equal(sid, "0123456789abcdef0123456789abcdef");
    /* Another place has its own file. */
    assert_int_equal(
        idmint__witness_location_read(f->witness, "sqlite:/srv/b.db", sid, path, sizeof(path)), 1);
    /* A store id that is not one is never written. */
    assert_int_equal(idmint__witness_location_write(f->witness, odd, "not-an-id", NULL),
                     IDMINT_ESTORE);
}

static void test_witness__a_damaged_binding_is_an_error_never_none(void **state)
{
    static const char *const bodies[] = {
        "",                                                             /* empty */
        "idmint-witness-location 1 0123\nsqlite:/x.db\n",               /* short id */
        "idmint-witness-location 9 0123456789abcdef0123456789abcdef\n", /* other version */
        "idmint-witness-location 1 0123456789abcdef0123456789abcdef\n", /* no place */
        "idmint-witness-location 1 0123456789abcdef0123456789abcdef\nsqlite:/other.db\n",
        "idmint-witness-location 1 0123456789abcdef0123456789abcdef\nsqlite:/x.dbX\n", /* longer */
        /* the store id on a line of its own */
        "idmint-witness-location 1\n0123456789abcdef0123456789abcdef\nsqlite:/x.db\n",
        /* a key longer than the reader keeps: cut, it is still another place's */
        "idmint-witness-location 1 0123456789abcdef0123456789abcdef\nsqlite:/x.db"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "\n",
    };
    struct fx *f = *state;
    char sid[33], path[4300];
    FILE *out;

    assert_int_equal(idmint__witness_dir(f->witness, sizeof(f->witness)), 0);
    assert_int_equal(idmint__witness_location_write(f->witness, "sqlite:/x.db",
                                                    "0123456789abcdef0123456789abcdef", NULL),
                     0);
    assert_int_equal(
        idmint__witness_location_read(f->witness, "sqlite:/x.db", sid, path, sizeof(path)), 0);
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        out = fopen(path, "w");
        assert_non_null(out);
        fputs(bodies[i], out);
        fclose(out);
        assert_int_equal(
            idmint__witness_location_read(f->witness, "sqlite:/x.db", sid, path, sizeof(path)),
            IDMINT_ESTORE);
        assert_non_null(strstr(idmint_errmsg(), "damaged or names another place"));
    }
    /* A place's line without its newline (a file cut after it) is still that place. */
    out = fopen(path, "w");
    assert_non_null(out);
    fputs("idmint-witness-location 1 00112233445566778899aabbccddeeff\nsqlite:/x.db", out);
    fclose(out);
    assert_int_equal(
        idmint__witness_location_read(f->witness, "sqlite:/x.db", sid, path, sizeof(path)), 0);
    assert_string_equal(sid, "00112233445566778899aabbccddeeff");
}

/*
 * A store's history witness is written aside and renamed the first time, in
 * place after: each write reads back whole, a longer or shorter counter
 * leaves no trace of the line before, an older idmint's unpadded line is read
 * and then overwritten, and nothing is left aside.
 */
static void test_witness__history_rewritten_in_place_reads_back_whole(void **state)
{
    static const char sid[] = "00112233445566778899aabbccddeeff";
    struct fx *f = *state;
    struct idmint__history h = {"0123456789abcdef0123456789abcdef", 1, 7}, got;
    const uint64_t seqs[] = {1, 99999999999ULL, 2, UINT64_MAX, 3};
    char path[4300];
    FILE *out;

    assert_int_equal(idmint__witness_dir(f->witness, sizeof(f->witness)), 0);
    assert_int_equal(idmint__witness_read(f->witness, sid, &got, path, sizeof(path)), 1);
    for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
        h.seq = seqs[i];
        h.tip = UINT64_MAX - seqs[i];
        assert_int_equal(idmint__witness_write(f->witness, sid, &h), 0);
        assert_int_equal(idmint__witness_read(f->witness, sid, &got, path, sizeof(path)), 0);
        assert_string_equal(got.id, h.id);
        assert_true(got.seq == h.seq && got.tip == h.tip);
    }
    /* An older idmint's line (counters unpadded) reads, then is replaced. */
    out = fopen(path, "w");
    assert_non_null(out);
    fprintf(out, "idmint-witness 1 %s %s 42 17\n", sid, h.id);
    fclose(out);
    assert_int_equal(idmint__witness_read(f->witness, sid, &got, path, sizeof(path)), 0);
    assert_true(got.seq == 42 && got.tip == 17);
    /* Only the first line is the witness: a line split in two is damaged. */
    out = fopen(path, "w");
    assert_non_null(out);
    fprintf(out, "idmint-witness 1 %s %s\n42 17\n", sid, h.id);
    fclose(out);
    assert_int_equal(idmint__witness_read(f->witness, sid, &got, path, sizeof(path)),
                     IDMINT_ESTORE);
    out = fopen(path, "w");
    assert_non_null(out);
    fprintf(out, "idmint-witness 1 %s %s 42 17\n", sid, h.id);
    fclose(out);
    h.seq = 43;
    h.tip = 5;
    assert_int_equal(idmint__witness_write(f->witness, sid, &h), 0);
    assert_int_equal(idmint__witness_read(f->witness, sid, &got, path, sizeof(path)), 0);
    assert_true(got.seq == 43 && got.tip == 5);
    /* Nothing left aside. */
    assert_int_equal(count_entries(f->witness, ".tmp"), 0);
}

/* ==== the keys ==== */

static void test_witness__one_place_one_key(void **state)
{
    static const struct store_ops etcd_like = {.version = STORE_OPS_V6, .scheme = "etcd"};
    const struct store fake = {&etcd_like};
    struct fx *f = *state;
    char k1[IDMINT__LOCATION_MAX], k2[IDMINT__LOCATION_MAX], link[1100], rel[1200];
    struct store *st = NULL;

    /* etcd: order, case, the default port and a trailing '/' do not matter. */
    assert_int_equal(
        idmint__store_location(&fake, "etcd://B.example:2379,a:2380/pfx/", k1, sizeof(k1)), 0);
    assert_int_equal(idmint__store_location(&fake, "etcd://a:2380,b.example/pfx", k2, sizeof(k2)),
                     0);
    assert_string_equal(k1, "etcd://a:2380,b.example:2379/pfx");
    assert_string_equal(k1, k2);
    assert_int_equal(idmint__store_location(&fake, "etcd://a:2380", k2, sizeof(k2)), 0);
    assert_string_equal(k2, "etcd://a:2380/idmint");
    assert_int_equal(idmint__store_location(&fake, "etcd://a:2380/other", k2, sizeof(k2)), 0);
    assert_string_not_equal(k1, k2);

    /* SQLite: the file itself, reached through a symbolic link or a relative path. */
    make_range(f->url, "rg");
    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    assert_int_equal(idmint__store_location(st, f->url, k1, sizeof(k1)), 0);
    idmint__store_close(st);
    snprintf(k2, sizeof(k2), "sqlite:%s", f->path);
    assert_string_equal(k1, k2);
    snprintf(link, sizeof(link), "%s/link.db", f->dir);
    assert_int_equal(symlink(f->path, link), 0);
    snprintf(rel, sizeof(rel), "sqlite:%s", link);
    assert_int_equal(idmint__store_open(rel, NULL, &st), 0);
    assert_int_equal(idmint__store_location(st, rel, k2, sizeof(k2)), 0);
    idmint__store_close(st);
    assert_string_equal(k1, k2);
}

/* ==== the judgement ==== */

static void test_witness__a_store_made_anew_in_place_is_refused_until_fenced(void **state)
{
    struct fx *f = *state;
    char old_id[33], new_id[33];
    uint64_t id = 0, high = 0;
    const char *msg;

    make_range(f->url, "rg");
    for (int i = 0; i < 25; i++) {
        assert_int_equal(mint_one(f->url, "rg", &id), 0);
        high = id > high ? id : high;
    }
    store_id_of(f->url, old_id);

    delete_store(f->path);
    make_range(f->url, "rg"); /* made anew: it would start at 1 again */
    store_id_of(f->url, new_id);
    assert_string_not_equal(old_id, new_id);
    assert_int_equal(mint_one(f->url, "rg", &id), IDMINT_ERESTORED);
    msg = idmint_errmsg();
    assert_non_null(strstr(msg, f->path));
    assert_non_null(strstr(msg, old_id));
    assert_non_null(strstr(msg, new_id));
    assert_non_null(strstr(msg, "deleted and created anew"));
    assert_non_null(strstr(msg, "idmint authority fence --above NS=N"));
    /* Refused again: nothing moved the binding. */
    assert_int_equal(mint_one(f->url, "rg", &id), IDMINT_ERESTORED);

    fence_above(f->url, "rg", high);
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    assert_true(id > high);
}

static void test_witness__another_place_is_independent(void **state)
{
    struct fx *f = *state;
    char other[4400];
    uint64_t id = 0;

    snprintf(other, sizeof(other), "sqlite:%s/b.db", f->dir);
    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    delete_store(f->path);
    make_range(f->url, "rg");
    make_range(other, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), IDMINT_ERESTORED);
    assert_int_equal(mint_one(other, "rg", &id), 0); /* its own place, its own binding */
    assert_int_equal(mint_one(other, "rg", &id), 0);
}

static void test_witness__a_binding_without_evidence_is_moved(void **state)
{
    struct fx *f = *state;
    char old_id[33], path[4400];
    uint64_t id = 0;

    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    store_id_of(f->url, old_id);
    /* The operator moved this host's evidence of the old store away (the
     * binding alone proves no history): the new store is bound instead. */
    snprintf(path, sizeof(path), "%s/%s", f->witness, old_id);
    assert_int_equal(unlink(path), 0);
    delete_store(f->path);
    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    assert_int_equal(id, 1);
    /* ... and held to it from then on. */
    delete_store(f->path);
    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), IDMINT_ERESTORED);
}

static void test_witness__an_old_witness_folder_without_bindings_still_works(void **state)
{
    struct fx *f = *state;
    uint64_t id = 0;

    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    /* As an idmint before bindings left the folder: the store's witness only. */
    assert_true(drop_bindings(f->witness) >= 1);
    assert_int_equal(mint_one(f->url, "rg", &id), 0); /* accepted, and bound again */
    delete_store(f->path);
    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), IDMINT_ERESTORED);
}

static void test_witness__a_damaged_binding_refuses_and_a_fence_repairs_it(void **state)
{
    struct fx *f = *state;
    char sid[33], path[4300], key[IDMINT__LOCATION_MAX];
    uint64_t id = 0;
    FILE *out;

    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    snprintf(key, sizeof(key), "sqlite:%s", f->path);
    assert_int_equal(idmint__witness_location_read(f->witness, key, sid, path, sizeof(path)), 0);
    out = fopen(path, "w");
    assert_non_null(out);
    fputs("garbage\n", out);
    fclose(out);
    assert_int_equal(mint_one(f->url, "rg", &id), IDMINT_ESTORE);
    fence_above(f->url, "rg", 1000);
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    assert_true(id > 1000);
}

/* Found by tests/sim: the same copy put back twice, fenced each time. The
 * host saw the first fence's history, which the second fence did not
 * replace; the fence must make the fenced history this host's, or its
 * processes are refused forever. */
static void test_witness__a_copy_put_back_twice_serves_after_each_fence(void **state)
{
    struct fx *f = *state;
    char copy[1100];
    uint64_t id = 0, high = 0;

    snprintf(copy, sizeof(copy), "%s/copy.db", f->dir);
    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    copy_file(f->path, copy);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 15; i++) {
            assert_int_equal(mint_one(f->url, "rg", &id), 0);
            high = id > high ? id : high;
        }
        delete_store(f->path);
        copy_file(copy, f->path);
        assert_int_equal(mint_one(f->url, "rg", &id), IDMINT_ERESTORED);
        fence_above(f->url, "rg", high + 1000);
        assert_int_equal(mint_one(f->url, "rg", &id), 0);
        assert_true(id > high + 1000);
        high = id;
    }
}

static void test_witness__off_binds_nothing(void **state)
{
    struct fx *f = *state;
    uint64_t id = 0;

    setenv("IDMINT_WITNESS_DIR", "off", 1);
    make_range(f->url, "rg");
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    delete_store(f->path);
    make_range(f->url, "rg");
    /* A host without a witness cannot tell (docs/operations.md): it mints from 1 again. */
    assert_int_equal(mint_one(f->url, "rg", &id), 0);
    assert_int_equal(id, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_witness__a_binding_reads_back_and_a_place_never_used_has_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness__a_damaged_binding_is_an_error_never_none,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness__history_rewritten_in_place_reads_back_whole,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness__one_place_one_key, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_witness__a_store_made_anew_in_place_is_refused_until_fenced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness__another_place_is_independent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_witness__a_binding_without_evidence_is_moved, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_witness__an_old_witness_folder_without_bindings_still_works, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_witness__a_damaged_binding_refuses_and_a_fence_repairs_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness__a_copy_put_back_twice_serves_after_each_fence,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness__off_binds_nothing, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
