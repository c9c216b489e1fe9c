/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snowflake layouts (docs/design.md "Snowflake IDs") and the text forms around them: epochs,
 * ISO-8601 times and decimal IDs. Dates are pure arithmetic on the proleptic
 * Gregorian calendar, so nothing here depends on gmtime, the locale or TZ.
 */
#include "idmint.h"
#include "internal.h"

#include <stdint.h>

#define MS_PER_DAY    INT64_C(86400000)
#define MAX_UNIT_MS   UINT32_C(86400000)
#define MAX_ID_BITS   63u
#define MAX_W_BITS    30u
#define MAX_R_BITS    16u
#define MAX_FIELD     63u
#define MIN_YEAR      1970
#define MAX_YEAR      9999
#define ISO8601_LEN   24u /* "YYYY-MM-DDTHH:MM:SS.mmmZ" */
#define TEXT_SHOWN    64  /* longest piece of bad input quoted in a message */
#define DIGITS_MAX_MS 15u /* more digits than any ms before the year 10000 */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned char days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    return m == 2 && is_leap(y) ? 29u : days[m - 1];
}

int64_t idmint__days_from_civil(int64_t y, unsigned m, unsigned d)
{
    /* Count from 0000-03-01 so that the leap day is the last day of a
     * "year"; 400-year eras of 146097 days make the rest exact. */
    int64_t yy = m <= 2 ? y - 1 : y;
    int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
    int64_t yoe = yy - era * 400;                         /* 0..399 */
    int64_t mp = m > 2 ? (int64_t)m - 3 : (int64_t)m + 9; /* March = 0 */
    int64_t doy = (153 * mp + 2) / 5 + (int64_t)d - 1;    /* 0..365 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;  /* 0..146096 */
    return era * 146097 + doe - 719468; /* 719468: days from 0000-03-01 to 1970-01-01 */
}

/* Inverse of idmint__days_from_civil. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t era, doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

/* Unix ms of YYYY-01-01T00:00:00Z. */
static int64_t year_start_ms(int64_t y)
{
    return idmint__days_from_civil(y, 1, 1) * MS_PER_DAY;
}

/* ==== layouts ==== */

void idmint_layout_default(idmint_layout *l)
{
    l->time_bits = 41;
    l->region_bits = 0;
    l->worker_bits = 10;
    l->sequence_bits = 12;
    l->unit_ms = 1;
    l->epoch_ms = IDMINT_DEFAULT_EPOCH_MS;
}

/*
 * The end of the time bits, for a layout whose fields are already in range
 * (T <= 62, epoch >= 0, unit >= 1). Returns 0, or -1 when it overflows int64.
 */
static int end_ms_of(const idmint_layout *l, int64_t *end)
{
    *end = idmint__unit_start_ms(l, UINT64_C(1) << l->time_bits);
    return *end == INT64_MAX ? -1 : 0;
}

int idmint_layout_validate(const idmint_layout *l)
{
    unsigned t, r, w, s, sum;
    int64_t end = 0;

    if (l == NULL)
        return idmint__fail(IDMINT_EINVAL, "layout: NULL");
    t = l->time_bits;
    r = l->region_bits;
    w = l->worker_bits;
    s = l->sequence_bits;
    sum = t + r + w + s;
    if (t < 1)
        return idmint__fail(IDMINT_EINVAL, "layout %u/%u/%u/%u: T = 0, need at least 1", t, r, w,
                            s);
    if (s < 1)
        return idmint__fail(IDMINT_EINVAL, "layout %u/%u/%u/%u: S = 0, need at least 1", t, r, w,
                            s);
    if (sum > MAX_ID_BITS)
        return idmint__fail(IDMINT_EINVAL, "layout %u/%u/%u/%u: T+R+W+S = %u exceeds %u", t, r, w,
                            s, sum, MAX_ID_BITS);
    if (w > MAX_W_BITS)
        return idmint__fail(IDMINT_EINVAL, "layout %u/%u/%u/%u: W = %u exceeds %u", t, r, w, s, w,
                            MAX_W_BITS);
    if (r > MAX_R_BITS)
        return idmint__fail(IDMINT_EINVAL, "layout %u/%u/%u/%u: R = %u exceeds %u", t, r, w, s, r,
                            MAX_R_BITS);
    if (l->unit_ms < 1 || l->unit_ms > MAX_UNIT_MS)
        return idmint__fail(IDMINT_EINVAL, "layout unit %u ms: must be 1..%u", (unsigned)l->unit_ms,
                            (unsigned)MAX_UNIT_MS);
    if (l->epoch_ms < 0 || l->epoch_ms >= year_start_ms(MAX_YEAR + 1))
        return idmint__fail(IDMINT_EINVAL, "layout epoch %lld ms: must be in the years %d..%d",
                            (long long)l->epoch_ms, MIN_YEAR, MAX_YEAR);
    if (end_ms_of(l, &end) != 0)
        return idmint__fail(IDMINT_EINVAL,
                            "layout %u/%u/%u/%u, unit %u ms: end of time bits overflows int64 ms",
                            t, r, w, s, (unsigned)l->unit_ms);
    return 0;
}

/* Parse 1+ digits worth at most @p max at *p; advances *p. 0 or -1. */
static int parse_small(const char **p, unsigned max, unsigned *out)
{
    const char *s = *p;
    unsigned v = 0;

    if (!is_digit(*s))
        return -1;
    while (is_digit(*s)) {
        v = v * 10 + (unsigned)(*s - '0');
        if (v > max)
            return -1;
        s++;
    }
    *p = s;
    *out = v;
    return 0;
}

int idmint_layout_parse(const char *text, idmint_layout *l)
{
    const char *p = text;
    unsigned v[4];

    if (text == NULL || l == NULL)
        return idmint__fail(IDMINT_EINVAL, "layout: NULL");
    for (int i = 0; i < 4; i++) {
        if (parse_small(&p, MAX_FIELD, &v[i]) != 0 || *p != (i < 3 ? '/' : '\0'))
            return idmint__fail(IDMINT_EINVAL, "layout \"%.*s\": want T/R/W/S, each a number 0..%u",
                                TEXT_SHOWN, text, MAX_FIELD);
        if (i < 3)
            p++;
    }
    l->time_bits = (uint8_t)v[0];
    l->region_bits = (uint8_t)v[1];
    l->worker_bits = (uint8_t)v[2];
    l->sequence_bits = (uint8_t)v[3];
    return 0;
}

int idmint_layout_end_ms(const idmint_layout *l, int64_t *end_ms)
{
    int64_t end = 0;
    int rc = idmint_layout_validate(l);

    if (rc != 0)
        return rc;
    if (end_ms == NULL)
        return idmint__fail(IDMINT_EINVAL, "layout end: NULL output");
    (void)end_ms_of(l, &end); /* cannot fail: validate checked it */
    *end_ms = end;
    return 0;
}

/* ==== epochs and ISO-8601 ==== */

/* Exactly @p n digits at *p as a number; advances *p. 0 or -1. */
static int parse_fixed(const char **p, unsigned n, unsigned *out)
{
    unsigned v = 0;

    for (unsigned i = 0; i < n; i++) {
        if (!is_digit((*p)[i]))
            return -1;
        v = v * 10 + (unsigned)((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

/* "YYYY-MM-DD[THH:MM:SS[.m{1,3}][Z]]". 0 or IDMINT_EINVAL with a message. */
static int parse_iso(const char *text, int64_t *out)
{
    const char *p = text;
    unsigned y, mo, d, h = 0, mi = 0, s = 0, ms = 0;

    if (parse_fixed(&p, 4, &y) != 0 || *p++ != '-' || parse_fixed(&p, 2, &mo) != 0 || *p++ != '-' ||
        parse_fixed(&p, 2, &d) != 0)
        goto bad_form;
    if (*p == 'T') {
        p++;
        if (parse_fixed(&p, 2, &h) != 0 || *p++ != ':' || parse_fixed(&p, 2, &mi) != 0 ||
            *p++ != ':' || parse_fixed(&p, 2, &s) != 0)
            goto bad_form;
        if (*p == '.') {
            unsigned n = 0, scale = 100;

            p++;
            while (is_digit(*p) && n < 3) {
                ms += (unsigned)(*p - '0') * scale;
                scale /= 10;
                p++;
                n++;
            }
            if (n == 0)
                goto bad_form;
        }
        if (*p == 'Z')
            p++;
    }
    if (*p != '\0')
        goto bad_form;
    if (y < MIN_YEAR || y > MAX_YEAR)
        return idmint__fail(IDMINT_EINVAL, "epoch \"%.*s\": year %u is outside %d..%d", TEXT_SHOWN,
                            text, y, MIN_YEAR, MAX_YEAR);
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
        return idmint__fail(IDMINT_EINVAL, "epoch \"%.*s\": no such date", TEXT_SHOWN, text);
    if (h > 23 || mi > 59 || s > 59)
        return idmint__fail(IDMINT_EINVAL, "epoch \"%.*s\": no such time of day", TEXT_SHOWN, text);
    *out = idmint__days_from_civil(y, mo, d) * MS_PER_DAY +
           (int64_t)(((h * 60u + mi) * 60u + s) * 1000u + ms);
    return 0;
bad_form:
    return idmint__fail(IDMINT_EINVAL,
                        "epoch \"%.*s\": want YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS[.mmm][Z] or Unix ms",
                        TEXT_SHOWN, text);
}

int idmint_epoch_parse(const char *text, int64_t *epoch_ms)
{
    size_t n = 0;
    int64_t v = 0;

    if (text == NULL || epoch_ms == NULL)
        return idmint__fail(IDMINT_EINVAL, "epoch: NULL");
    while (is_digit(text[n]))
        n++;
    if (n == 0 || text[n] != '\0') {
        if (parse_iso(text, &v) != 0)
            return IDMINT_EINVAL;
    } else {
        if (n > DIGITS_MAX_MS)
            return idmint__fail(IDMINT_EINVAL, "epoch %.*s ms: after the year %d", TEXT_SHOWN, text,
                                MAX_YEAR);
        for (size_t i = 0; i < n; i++)
            v = v * 10 + (text[i] - '0'); /* at most 15 digits: cannot overflow */
        if (v >= year_start_ms(MAX_YEAR + 1))
            return idmint__fail(IDMINT_EINVAL, "epoch %s ms: after the year %d", text, MAX_YEAR);
    }
    *epoch_ms = v;
    return 0;
}

static char *put_digits(char *p, unsigned v, unsigned n)
{
    for (unsigned i = n; i > 0; i--) {
        p[i - 1] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + n;
}

int idmint_format_iso8601(int64_t unix_ms, char *buf, size_t size)
{
    int64_t days, ms_of_day, y;
    unsigned mo, d, t;
    char *p = buf;

    if (buf == NULL || size <= ISO8601_LEN)
        return idmint__fail(IDMINT_EINVAL, "iso8601: buffer of %zu bytes, need %u", size,
                            ISO8601_LEN + 1);
    if (unix_ms < year_start_ms(0) || unix_ms >= year_start_ms(MAX_YEAR + 1))
        return idmint__fail(IDMINT_EINVAL, "iso8601: %lld ms is outside the years 0..%d",
                            (long long)unix_ms, MAX_YEAR);
    /* Floor division: times before 1970 belong to the day that started earlier. */
    days = unix_ms / MS_PER_DAY;
    ms_of_day = unix_ms % MS_PER_DAY;
    if (ms_of_day < 0) {
        days--;
        ms_of_day += MS_PER_DAY;
    }
    civil_from_days(days, &y, &mo, &d);
    t = (unsigned)ms_of_day;
    p = put_digits(p, (unsigned)y, 4);
    *p++ = '-';
    p = put_digits(p, mo, 2);
    *p++ = '-';
    p = put_digits(p, d, 2);
    *p++ = 'T';
    p = put_digits(p, t / 3600000u, 2);
    *p++ = ':';
    p = put_digits(p, t / 60000u % 60u, 2);
    *p++ = ':';
    p = put_digits(p, t / 1000u % 60u, 2);
    *p++ = '.';
    p = put_digits(p, t % 1000u, 3);
    *p++ = 'Z';
    *p = '\0';
    return 0;
}

/* ==== IDs ==== */

int idmint_decode(const idmint_layout *l, uint64_t id, idmint_decoded *out)
{
    unsigned total, s, w, r;
    uint64_t t;
    int rc = idmint_layout_validate(l);

    if (rc != 0)
        return rc;
    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "decode: NULL output");
    s = l->sequence_bits;
    w = l->worker_bits;
    r = l->region_bits;
    total = l->time_bits + r + w + s;
    if (id == 0)
        return idmint__fail(IDMINT_EINVAL, "decode: 0 is never an ID");
    if (id >> 63 != 0)
        return idmint__fail(IDMINT_EINVAL, "decode: %llu has the sign bit set",
                            (unsigned long long)id);
    if (id >> total != 0)
        return idmint__fail(IDMINT_EINVAL, "decode: %llu has bits above the %u of the layout",
                            (unsigned long long)id, total);
    t = id >> (r + w + s);
    out->time_units = t;
    /* t < 2^T and validate proved epoch + 2^T * unit fits in int64. */
    out->unix_ms = idmint__unit_start_ms(l, t);
    out->region = (uint32_t)((id >> (w + s)) & ((UINT64_C(1) << r) - 1));
    out->worker = (uint32_t)((id >> s) & ((UINT64_C(1) << w) - 1));
    /* 64 bits: S may exceed 32 (fuzz/fuzz_layout.c found a cut-short
     * sequence when this was 32; input regress-decode-wide-sequence). */
    out->sequence = id & ((UINT64_C(1) << s) - 1);
    return 0;
}

int idmint_id_parse(const char *text, uint64_t *id)
{
    uint64_t v = 0;
    const char *p;

    if (text == NULL || id == NULL)
        return idmint__fail(IDMINT_EINVAL, "id: NULL");
    if (*text == '\0')
        return idmint__fail(IDMINT_EINVAL, "id: empty");
    for (p = text; *p != '\0'; p++) {
        unsigned digit;

        if (!is_digit(*p))
            return idmint__fail(IDMINT_EINVAL, "id \"%.*s\": digits only", TEXT_SHOWN, text);
        digit = (unsigned)(*p - '0');
        if (v > (IDMINT_MAX_VALUE - digit) / 10)
            return idmint__fail(IDMINT_EINVAL, "id \"%.*s\": above 2^63-1", TEXT_SHOWN, text);
        v = v * 10 + digit;
    }
    if (v == 0)
        return idmint__fail(IDMINT_EINVAL, "id \"%.*s\": 0 is never an ID", TEXT_SHOWN, text);
    *id = v;
    return 0;
}

int idmint__parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (s == NULL || s[0] == '\0')
        return -1;
    for (i = 0; s[i] != '\0'; i++) {
        unsigned d = (unsigned)(s[i] - '0');

        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - d) / 10u)
            return -1;
        v = v * 10u + d;
    }
    *out = v;
    return 0;
}

int idmint__parse_i64(const char *s, int64_t *out)
{
    uint64_t mag;

    if (s == NULL)
        return -1;
    if (s[0] == '-') {
        if (idmint__parse_u64(s + 1, &mag) != 0 || mag > (uint64_t)INT64_MAX + 1u)
            return -1;
        *out = mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag;
        return 0;
    }
    if (idmint__parse_u64(s, &mag) != 0 || mag > (uint64_t)INT64_MAX)
        return -1;
    *out = (int64_t)mag;
    return 0;
}

uint64_t idmint__floor_fence_unit(const idmint_layout *l, uint64_t floor)
{
    return floor >> ((unsigned)l->region_bits + l->worker_bits + l->sequence_bits);
}
