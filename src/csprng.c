/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library's user-space CSPRNG, for the bits of a UUIDv7 that are neither
 * time nor counter. getrandom(2) costs about 50 ns for 16 bytes on this
 * kernel, more than the rest of a UUID; a block cipher in counter mode
 * (OpenSSL's AES-256-CTR, AES-NI where the CPU has it: about 0.3 ns a byte,
 * twice its ChaCha20 here) costs a few ns per UUID.
 *
 * - Per thread: no lock, no shared stream; each thread keys its own.
 * - Keyed from the kernel (idmint__entropy) at a thread's first draw, then
 *   again after every RESEED_BYTES of output, and in any new copy of the
 *   process (fork(), a raw clone), which the fork gate tells apart by its
 *   fork id: a copy throws the parent's key and unused bytes away before it
 *   gives out a byte, so no two processes share or repeat a stream, even a
 *   child that forks again before it ever calls into the library.
 * - Fast key erasure: each refill runs the cipher over POOL_SIZE + 32 bytes
 *   and keeps the last 32 as the next key, and bytes are wiped from the pool
 *   as they are handed out, so the state in memory never reveals an output
 *   already given.
 */
#include "idmint.h"
#include "internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KEY_SIZE     32u
#define POOL_SIZE    4096u
#define RESEED_BYTES (UINT64_C(1) << 20) /* a kernel key every 1 MiB of output */

/* One per thread (a thread slot: too big for the library's TLS budget). */
struct csprng {
    uint64_t fork_id;    /* idmint__fork_id() when keyed */
    uint64_t since_seed; /* bytes made since the key came from the kernel */
    size_t pos;          /* next unused byte of buf; POOL_SIZE when empty */
    int is_keyed;        /* key holds a key of this copy of the process */
    unsigned char key[KEY_SIZE];
    unsigned char buf[POOL_SIZE + KEY_SIZE];
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *cipher; /* NULL: OpenSSL has no AES-256-CTR */
static const _Atomic uint64_t *csprng_fork_word;

static void csprng_init(void)
{
    cipher = EVP_CIPHER_fetch(NULL, "AES-256-CTR", NULL);
    csprng_fork_word = idmint__fork_word();
}

/* The cipher's key stream under r->key into r->buf; its tail is the next key. */
static int refill(struct csprng *r)
{
    static const unsigned char iv[16]; /* each key is used for one refill only */
    EVP_CIPHER_CTX *ctx;
    int len = 0, ok;

    if (!r->is_keyed || r->since_seed >= RESEED_BYTES) {
        uint64_t id = idmint__fork_id(); /* before the draw: the key is this copy's */
        int rc = idmint__entropy(r->key, sizeof(r->key));

        if (rc != 0)
            return rc;
        r->fork_id = id;
        r->since_seed = 0;
        r->is_keyed = 1;
    }
    if (cipher == NULL || (ctx = EVP_CIPHER_CTX_new()) == NULL)
        return idmint__fail(IDMINT_EUNAVAILABLE, "OpenSSL offers no AES-256-CTR");
    memset(r->buf, 0, sizeof(r->buf));
    ok = EVP_EncryptInit_ex2(ctx, cipher, r->key, iv, NULL) == 1 &&
         EVP_EncryptUpdate(ctx, r->buf, &len, r->buf, (int)sizeof(r->buf)) == 1 &&
         len == (int)sizeof(r->buf);
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        OPENSSL_cleanse(r->buf, sizeof(r->buf));
        return idmint__fail(IDMINT_EUNAVAILABLE, "AES-256-CTR failed in OpenSSL");
    }
    memcpy(r->key, r->buf + POOL_SIZE, KEY_SIZE);
    OPENSSL_cleanse(r->buf + POOL_SIZE, KEY_SIZE);
    r->since_seed += POOL_SIZE;
    r->pos = 0;
    return 0;
}

int idmint__random_fill(void *out, size_t len)
{
    unsigned char *dst = out;
    int is_new;
    struct csprng *r = idmint__thread_slot(IDMINT__SLOT_CSPRNG, sizeof(*r), &is_new);

    if (r == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory for this thread's random stream");
    pthread_once(&init_once, csprng_init);
    if (is_new)
        r->pos = POOL_SIZE;
    /* A copy of the process holds the parent's key and unused bytes: using
     * either would repeat the parent's output bit for bit. */
    if (r->is_keyed && idmint__fork_is_other(csprng_fork_word, r->fork_id)) {
        OPENSSL_cleanse(r, sizeof(*r));
        r->pos = POOL_SIZE;
    }
    while (len > 0) {
        size_t take;

        if (r->pos == POOL_SIZE) {
            int rc = refill(r);

            if (rc != 0)
                return rc;
        }
        take = POOL_SIZE - r->pos < len ? POOL_SIZE - r->pos : len;
        memcpy(dst, r->buf + r->pos, take);
        memset(r->buf + r->pos, 0, take);
        r->pos += take;
        dst += take;
        len -= take;
    }
    return 0;
}
