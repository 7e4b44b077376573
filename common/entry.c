/* entry.c -- validation, construction, ordering and formatting of one
 * person (entry.h). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "bytewords.h"
#include "entry.h"
#include "utf8.h"

_Static_assert(ENTRY_NAME_MAX <= UINT8_MAX, "last_len is a uint8_t");
_Static_assert(ENTRY_AGE_MAX <= UINT8_MAX, "age is a uint8_t");

/* Eight bytes at a time (bytewords.h: the words of a name, then its last
 * 8 bytes, or a short name padded with 'a'): every request that names
 * someone has its names checked, and an ADD's measured, and a byte at a
 * time took 7 to 10 instructions a byte. Only whether a byte is there
 * counts here, not where. */
static uint64_t load_word(const char *s, size_t n)     /* n <= 8 */
{
    uint64_t w = BYTES_ONES * 'a';

    memcpy(&w, s, n);
    return w;
}

/* A byte no name may hold: a control or space (<= 0x20), DEL, or 0xfe and
 * 0xff, never in UTF-8 (0xff is telnet's IAC and is never echoed). */
static inline uint64_t word_refused(uint64_t w)
{
    return bytes_below(w, 0x21) | bytes_below(w ^ (BYTES_ONES * 0x7f), 1) |
           bytes_below(~w, 2);
}

int entry_name_check(const char *s, size_t len)
{
    uint64_t bad = 0, high = 0;
    size_t i = 0;

    if (len == 0 || len > ENTRY_NAME_MAX)
        return 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = load_word(s + i, 8);
        bad |= word_refused(w);
        high |= w;
    }
    if (i < len) {      /* the tail: the last 8 bytes again, or padded */
        uint64_t w = len >= 8 ? load_word(s + len - 8, 8)
                              : load_word(s, len);
        bad |= word_refused(w);
        high |= w;
    }
    if (bad)
        return 0;
    return high & BYTES_HIGHS ? 2 : 1;
}

int entry_name_ok(const char *s, size_t len)
{
    return entry_name_check(s, len) != 0;
}

int entry_name_unsafe(const char *s, size_t len)
{
    return utf8_unshown(s, len) < len;
}

void entry_unsafe_mask(char *s, size_t n)
{
    utf8_mask(s, n, s);
}

const char *entry_name_shown(const char *name, char *buf)
{
    size_t len = strnlen(name, ENTRY_NAME_MAX);

    if (!entry_name_unsafe(name, len))
        return name;
    memcpy(buf, name, len);
    buf[len] = '\0';
    entry_unsafe_mask(buf, len);
    return buf;
}

int entry_age_parse(const char *s, size_t len, int *age)
{
    int v = 0;

    if (len == 0 || len > 3)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    if (v > ENTRY_AGE_MAX)
        return 0;
    *age = v;
    return 1;
}

int entry_ssn_ok(const char *s, size_t len)
{
    if (len != ENTRY_SSN_LEN)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (i == 3 || i == 6) {
            if (s[i] != '-')
                return 0;
        } else if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
    }
    return 1;
}

uint32_t entry_ssn_pack(const char *text)
{
    uint32_t v = 0;

    for (size_t i = 0; i < ENTRY_SSN_LEN; i++)
        if (i != 3 && i != 6)
            v = v * 10 + (uint32_t)(text[i] - '0');
    return v;
}

/* "00" to "99": an SSN is written two digits at a time (each FIND's reply
 * and PRINT's lines), a digit at a time took 158 instructions. */
static const char two_digits[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static void put2(char *at, uint32_t v)              /* v < 100 */
{
    memcpy(at, two_digits + 2 * v, 2);
}

char *entry_ssn_unpack(uint32_t ssn, char buf[ENTRY_SSN_LEN + 1])
{
    assert(ssn <= 999999999u);
    uint32_t area = ssn / 1000000, rest = ssn % 1000000;
    uint32_t group = rest / 10000, serial = rest % 10000;

    buf[0] = (char)('0' + area / 100);
    put2(buf + 1, area % 100);
    buf[3] = '-';
    put2(buf + 4, group);
    buf[6] = '-';
    put2(buf + 7, serial / 100);
    put2(buf + 9, serial % 100);
    buf[ENTRY_SSN_LEN] = '\0';
    return buf;
}

/* The characters of s[0..n) as UTF-8 counts them: every byte but the
 * continuation bytes (0x80 to 0xBF). *high gets the bytes or'ed together. */
static size_t utf8_chars(const char *s, size_t n, unsigned char *high)
{
    size_t chars = 0, i = 0;

    for (; i + 8 <= n; i += 8) {    /* ASCII words: 8 characters */
        uint64_t w = load_word(s + i, 8);
        if (w & BYTES_HIGHS)
            break;
        chars += 8;
    }
    for (; i < n; i++) {
        chars += ((unsigned char)s[i] & 0xC0) != 0x80;
        *high |= (unsigned char)s[i];
    }
    return chars;
}

/* The characters of two names as PRINT pads them. */
static size_t names_shown_chars(const char *last, const char *first)
{
    unsigned char high = 0;

    return utf8_chars(last, strlen(last), &high) +
           utf8_chars(first, strlen(first), &high);
}

/* e's chars: its names' characters, and ENTRY_UNSHOWN when one holds a
 * byte a terminal could act on (looked for only past ASCII: one pass over
 * the names, on an ADD's path, and the UTF-8 test only when needed). */
static uint8_t names_chars(const char *last, size_t last_len,
                           const char *first, size_t first_len)
{
    unsigned char high = 0;
    uint8_t chars = (uint8_t)(utf8_chars(last, last_len, &high) +
                              utf8_chars(first, first_len, &high));

    if ((high & 0x80) && (entry_name_unsafe(last, last_len) ||
                          entry_name_unsafe(first, first_len)))
        chars |= ENTRY_UNSHOWN;
    return chars;
}

struct entry *entry_new(const char *last, size_t last_len,
                        const char *first, size_t first_len,
                        uint32_t ssn, int age)
{
    assert(last_len >= 1 && last_len <= ENTRY_NAME_MAX);
    assert(first_len >= 1 && first_len <= ENTRY_NAME_MAX);
    assert(ssn <= 999999999u && age >= 0 && age <= ENTRY_AGE_MAX);

    /* The header, then exactly the names: no padding is asked for at the
     * end (malloc rounds the chunk up anyway). */
    struct entry *e = malloc(offsetof(struct entry, names) + last_len + 1 +
                             first_len + 1);
    if (!e)
        return NULL;
    memset(&e->node, 0, sizeof(e->node));
    e->ssn = ssn;
    e->age = (uint8_t)age;
    e->last_len = (uint8_t)last_len;
    e->chars = names_chars(last, last_len, first, first_len);
    memcpy(e->names, last, last_len);
    e->names[last_len] = '\0';
    memcpy(e->names + last_len + 1, first, first_len);
    e->names[last_len + 1 + first_len] = '\0';
    return e;
}

struct entry *entry_from_person(const struct person *p)
{
    return entry_new(p->last, strnlen(p->last, ENTRY_NAME_MAX),
                     p->first, strnlen(p->first, ENTRY_NAME_MAX),
                     entry_ssn_pack(p->ssn), p->age);
}

void entry_free(struct entry *e)
{
    if (!e)
        return;
    explicit_bzero(&e->ssn, sizeof(e->ssn));
    free(e);
}

/* strcmp compares bytewise, as unsigned char: the order entry.h states. */
static int names_cmp(const char *last_a, const char *first_a,
                     const char *last_b, const char *first_b)
{
    int c = strcmp(last_a, last_b);

    return c ? c : strcmp(first_a, first_b);
}

int entry_cmp(const struct rb_node *a, const struct rb_node *b)
{
    const struct entry *x = RB_ENTRY(a, struct entry, node);
    const struct entry *y = RB_ENTRY(b, struct entry, node);

    return names_cmp(entry_last(x), entry_first(x),
                     entry_last(y), entry_first(y));
}

int entry_key_cmp(const void *key, const struct rb_node *n)
{
    const struct entry_key *k = key;
    const struct entry *y = RB_ENTRY(n, struct entry, node);

    return names_cmp(k->last, k->first, entry_last(y), entry_first(y));
}

int person_cmp(const struct person *a, const struct person *b)
{
    return names_cmp(a->last, a->first, b->last, b->first);
}

/* Builders for the two line forms below, which run under the store lock
 * for FIND (one per request) and PRINT (one per person): snprintf and its
 * helpers were a visible part of a FIND profile (docs/PERFORMANCE.md).
 * These build the same bytes, which tests/check_entry.c checks against
 * printf's. */
static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s);

    memcpy(p, s, n);
    return p + n;
}

static char *put_pad(char *p, size_t have, size_t width)
{
    if (have < width) {
        memset(p, ' ', width - have);
        p += width - have;
    }
    return p;
}

/* v in decimal, right-aligned in width columns (printf's %*d). An age
 * (0 to 999) in 4 columns, PRINT's and FIND's, in one store. */
static char *put_int(char *p, int v, size_t width)
{
    if (width == 4 && v >= 0 && v < 1000) {
        char t[4] = { ' ', v >= 100 ? (char)('0' + v / 100) : ' ',
                      v >= 10 ? (char)('0' + v / 10 % 10) : ' ',
                      (char)('0' + v % 10) };
        memcpy(p, t, 4);
        return p + 4;
    }

    char digits[12];
    char *d = digits + sizeof(digits);
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;

    do
        *--d = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--d = '-';
    size_t n = (size_t)(digits + sizeof(digits) - d);
    p = put_pad(p, n, width);
    memcpy(p, d, n);
    return p + n;
}

/* The one formatter of each line, for both forms: the bytes cannot differ.
 * PRINT's is printf's "%-30s -- %11s %4d\n" of "last, first", the ssn and
 * the age, the name padded to 30 characters, not bytes, so that UTF-8
 * names keep the columns; the dump's "%s %s %d %s\n" of last, first, age
 * and ssn. The longest line is under 180 bytes (two 63-byte names; or a
 * 29-character name of 4-byte characters and its padding), under
 * ENTRY_LINE_MAX. */
static size_t format_print(const char *last, size_t ll, const char *first,
                           size_t fl, size_t chars, const char *ssn,
                           int age, char *buf)
{
    static const char spaces[30] = "                              ";
    /* The padding is copied whole, then written over: it must fit after
     * two names of the longest and their ", ". */
    _Static_assert(2 * ENTRY_NAME_MAX + 2 + sizeof(spaces) <= ENTRY_LINE_MAX,
                   "PRINT's padding is copied past the names");
    size_t sl = strlen(ssn);
    char *p = buf;

    memcpy(p, last, ll);
    p += ll;
    memcpy(p, ", ", 2);
    p += 2;
    memcpy(p, first, fl);
    p += fl;
    if (chars + 2 < sizeof(spaces)) {   /* the names' and ", " */
        memcpy(p, spaces, sizeof(spaces));  /* room: ENTRY_LINE_MAX */
        p += sizeof(spaces) - (chars + 2);
    }
    memcpy(p, " -- ", 4);
    p += 4;
    p = put_pad(p, sl, ENTRY_SSN_LEN);
    memcpy(p, ssn, sl);
    p += sl;
    *p++ = ' ';
    p = put_int(p, age, 4);
    *p++ = '\n';
    *p = '\0';
    return (size_t)(p - buf);
}

static size_t format_dump(const char *last, const char *first,
                          const char *ssn, int age, char *buf)
{
    char *p = put_str(buf, last);

    *p++ = ' ';
    p = put_str(p, first);
    *p++ = ' ';
    p = put_int(p, age, 0);
    *p++ = ' ';
    p = put_str(p, ssn);
    *p++ = '\n';
    *p = '\0';
    return (size_t)(p - buf);
}

size_t entry_format_print(const struct entry *e, char *buf)
{
    char ssn[ENTRY_SSN_LEN + 1];

    if (entry_unshown(e)) {             /* its '?'s are characters too */
        char last[ENTRY_NAME_MAX + 1], first[ENTRY_NAME_MAX + 1];
        const char *l = entry_name_shown(entry_last(e), last);
        const char *f = entry_name_shown(entry_first(e), first);
        return format_print(l, strlen(l), f, strlen(f),
                            names_shown_chars(l, f), entry_ssn_text(e, ssn),
                            entry_age(e), buf);
    }
    const char *first = entry_first(e);
    return format_print(entry_last(e), e->last_len, first, strlen(first),
                        e->chars, entry_ssn_text(e, ssn), entry_age(e), buf);
}

size_t person_format_print(const struct person *p, char *buf)
{
    return format_print(p->last, strlen(p->last), p->first, strlen(p->first),
                        names_shown_chars(p->last, p->first), p->ssn, p->age,
                        buf);
}

size_t entry_format_dump(const struct entry *e, char *buf)
{
    char ssn[ENTRY_SSN_LEN + 1];

    return format_dump(entry_last(e), entry_first(e),
                       entry_ssn_text(e, ssn), entry_age(e), buf);
}

size_t person_format_dump(const struct person *p, char *buf)
{
    return format_dump(p->last, p->first, p->ssn, p->age, buf);
}
