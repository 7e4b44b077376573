/* fuzz_telnet.c -- the telnet filter (common/telnet.c) on any bytes, whole
 * and cut into chunks.
 *
 * The first input byte seeds the chunk sizes (1 to 16 bytes each, or the
 * whole rest when it is 0); the rest is the stream a client sends. The
 * oracle:
 *   - one call's output is no longer than its input (the filter works in
 *     place), but by the one byte of room past it when an IAC ended the
 *     call before (a stray IAC and its byte both stay), and the whole
 *     stream's output is a subsequence of the input;
 *   - every answer is 3 bytes: IAC, then WONT or DONT, then an option, and
 *     there are never more answers than IAC bytes in the stream;
 *   - a stream without IAC comes out unchanged and unanswered;
 *   - cutting the stream into chunks changes nothing: the output and the
 *     answers are those of one call over the whole stream (a command split
 *     across reads is completed by the next one);
 *   - neither does a fresh filter put in place between chunks wherever
 *     telnet_between says the old one is between commands, as an event
 *     connection parks its session there (server/session_park.c).
 */
#include <string.h>
#include "fuzz.h"
#include "telnet.h"

/* Everything one pass produced. */
struct result {
    uint8_t *out;               /* the filtered bytes */
    size_t out_len;
    uint8_t *answers;           /* every answer, back to back */
    size_t answers_len;
};

static void on_answer(void *arg, const unsigned char *seq, size_t len)
{
    struct result *r = arg;

    FUZZ_CHECK(len == TELNET_ANSWER_MAX, "an answer is 3 bytes");
    FUZZ_CHECK(seq[0] == TELNET_IAC, "an answer starts with IAC");
    FUZZ_CHECK(seq[1] == TELNET_WONT || seq[1] == TELNET_DONT,
               "an answer is WONT or DONT");
    memcpy(r->answers + r->answers_len, seq, len);
    r->answers_len += len;
}

/* Filters in[0..n) in chunks (chunk 0: all at once) into r; park: a
 * fresh filter wherever the one before is between commands. */
static void run(const uint8_t *in, size_t n, uint8_t seed, int park,
                struct result *r)
{
    struct telnet t;
    uint8_t *buf = malloc(n + 1);       /* a chunk, and the byte after it */
    size_t done = 0;
    unsigned x = seed;

    FUZZ_CHECK(buf != NULL, "memory for the copy");
    telnet_init(&t);
    r->out_len = r->answers_len = 0;
    while (done < n) {
        size_t k = n - done;
        if (park && telnet_between(&t))
            telnet_init(&t);
        if (seed) {
            x = x * 1103515245u + 12345u;
            size_t want = 1 + (x >> 16) % 16;
            if (want < k)
                k = want;
        }
        size_t before = r->answers_len;
        int was_iac = done > 0 && in[done - 1] == TELNET_IAC;
        memcpy(buf, in + done, k);
        size_t got = telnet_filter(&t, (char *)buf, k, k + 1, on_answer, r);
        FUZZ_CHECK(got <= k || (got == k + 1 && was_iac),
                   "the output grows only by a stray IAC from the call before");
        FUZZ_CHECK(r->answers_len - before <= k * TELNET_ANSWER_MAX,
                   "at most one answer per input byte");
        memcpy(r->out + r->out_len, buf, got);
        r->out_len += got;
        done += k;
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t *in = data + 1;
    size_t n = size - 1, iacs = 0;
    struct result whole, cut, parked;

    for (size_t i = 0; i < n; i++)
        iacs += in[i] == TELNET_IAC;
    whole.out = malloc(n + 1);
    cut.out = malloc(n + 1);
    parked.out = malloc(n + 1);
    whole.answers = malloc(n * TELNET_ANSWER_MAX + 1);
    cut.answers = malloc(n * TELNET_ANSWER_MAX + 1);
    parked.answers = malloc(n * TELNET_ANSWER_MAX + 1);
    FUZZ_CHECK(whole.out && cut.out && parked.out && whole.answers &&
               cut.answers && parked.answers, "memory for the results");

    run(in, n, 0, 0, &whole);
    run(in, n, data[0], 0, &cut);
    run(in, n, data[0] ? data[0] : 1, 1, &parked);

    FUZZ_CHECK(whole.answers_len <= iacs * TELNET_ANSWER_MAX,
               "no more answers than IAC bytes");
    if (iacs == 0)
        FUZZ_CHECK(whole.out_len == n && memcmp(whole.out, in, n) == 0 &&
                   whole.answers_len == 0,
                   "a stream without IAC passes unchanged and unanswered");
    size_t j = 0;               /* the output is a subsequence of the input */
    for (size_t i = 0; i < n && j < whole.out_len; i++)
        j += in[i] == whole.out[j];
    FUZZ_CHECK(j == whole.out_len, "the output is a subsequence of the input");
    FUZZ_CHECK(cut.out_len == whole.out_len &&
               memcmp(cut.out, whole.out, whole.out_len) == 0,
               "chunks give the same output as one call");
    FUZZ_CHECK(cut.answers_len == whole.answers_len &&
               memcmp(cut.answers, whole.answers, whole.answers_len) == 0,
               "chunks give the same answers as one call");
    FUZZ_CHECK(parked.out_len == whole.out_len &&
               memcmp(parked.out, whole.out, whole.out_len) == 0 &&
               parked.answers_len == whole.answers_len &&
               memcmp(parked.answers, whole.answers, whole.answers_len) == 0,
               "a fresh filter where telnet_between says so changes nothing");
    free(whole.out);
    free(cut.out);
    free(parked.out);
    free(whole.answers);
    free(cut.answers);
    free(parked.answers);
    return 0;
}
