/* check_proto.c -- unit tests for common/proto.c: every command word in any
 * case, blanks and tabs, and the exact text of every error reply. String in,
 * parsed request (or reply) out; nothing here does I/O. */
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "proto.h"

#define SENTINEL 0xA5           /* fills an entry to see what parse wrote */

static struct proto_req req;
static struct person e;

static void setup(void)
{
    memset(&req, 0, sizeof(req));
    memset(&e, SENTINEL, sizeof(e));
}

static enum proto_cmd parse(const char *line)
{
    return proto_parse(line, strlen(line), &req, &e);
}

/* Parses line and expects PROTO_INVALID with exactly err as the reply. */
#define ck_assert_parse_error(line, want_err) do {                      \
        setup();                                                        \
        ck_assert_int_eq(parse(line), PROTO_INVALID);                   \
        ck_assert_int_eq(req.cmd, PROTO_INVALID);                       \
        ck_assert_str_eq(req.err, (want_err));                          \
    } while (0)

static int entry_untouched(void)
{
    const unsigned char *p = (const unsigned char *)&e;

    for (size_t i = 0; i < sizeof(e); i++)
        if (p[i] != SENTINEL)
            return 0;
    return 1;
}

static const struct {
    const char *line;
    enum proto_cmd cmd;
} simple_commands[] = {
    { "PRINT", PROTO_PRINT }, { "print", PROTO_PRINT }, { "PrInT", PROTO_PRINT },
    { "COUNT", PROTO_COUNT }, { "count", PROTO_COUNT }, { "cOUNT", PROTO_COUNT },
    { "CHECK", PROTO_CHECK }, { "check", PROTO_CHECK }, { "Check", PROTO_CHECK },
    { "DIGEST", PROTO_DIGEST }, { "digest", PROTO_DIGEST },
    { "DiGeSt", PROTO_DIGEST },
    { "STATS", PROTO_STATS }, { "stats", PROTO_STATS }, { "sTATs", PROTO_STATS },
    { "TRACE", PROTO_TRACE }, { "TRACE START", PROTO_TRACE_START },
    { "trace start", PROTO_TRACE_START }, { "Trace Stop", PROTO_TRACE_STOP },
    { "TRACE  STOP ", PROTO_TRACE_STOP },
    { "HELP", PROTO_HELP }, { "help", PROTO_HELP }, { "hElP", PROTO_HELP },
    { "DONE", PROTO_QUIT }, { "done", PROTO_QUIT }, { "Done", PROTO_QUIT },
    { "QUIT", PROTO_QUIT }, { "quit", PROTO_QUIT }, { "qUiT", PROTO_QUIT },
};

/* ---- core ------------------------------------------------------------- */

START_TEST(test_proto_simple_commands_any_case)
{
    for (size_t i = 0; i < sizeof(simple_commands) / sizeof(simple_commands[0]);
         i++) {
        setup();
        ck_assert_msg(parse(simple_commands[i].line) == simple_commands[i].cmd,
                      "'%s' parsed as %d", simple_commands[i].line, req.cmd);
        ck_assert_int_eq(req.cmd, simple_commands[i].cmd);
        /* "for other commands *e is untouched" */
        ck_assert_msg(entry_untouched(), "'%s' wrote into the entry",
                      simple_commands[i].line);
    }
}
END_TEST

START_TEST(test_proto_add_fills_entry)
{
    static const char *const lines[] = {
        "ADD John Doe 42 123-45-6789",
        "add John Doe 42 123-45-6789",
        "aDd John Doe 042 123-45-6789",
    };

    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        setup();
        ck_assert_int_eq(parse(lines[i]), PROTO_ADD);
        ck_assert_int_eq(req.cmd, PROTO_ADD);
        ck_assert_str_eq(e.first, "John");
        ck_assert_str_eq(e.last, "Doe");
        ck_assert_int_eq(e.age, 42);
        ck_assert_str_eq(e.ssn, "123-45-6789");
    }
}
END_TEST

START_TEST(test_proto_delete_and_find_fill_names)
{
    setup();
    ck_assert_int_eq(parse("DELETE Ann Smith"), PROTO_DELETE);
    ck_assert_str_eq(e.first, "Ann");
    ck_assert_str_eq(e.last, "Smith");
    setup();
    ck_assert_int_eq(parse("delete Ann Smith"), PROTO_DELETE);
    ck_assert_str_eq(e.first, "Ann");
    setup();
    ck_assert_int_eq(parse("FIND Bob Jones"), PROTO_FIND);
    ck_assert_str_eq(e.first, "Bob");
    ck_assert_str_eq(e.last, "Jones");
    setup();
    ck_assert_int_eq(parse("fInD Bob Jones"), PROTO_FIND);
    ck_assert_str_eq(e.last, "Jones");
}
END_TEST

START_TEST(test_proto_tabs_and_spaces_separate)
{
    setup();
    ck_assert_int_eq(parse("\tADD\t John \t\tDoe  7\t000-00-0000 \t"),
                     PROTO_ADD);
    ck_assert_str_eq(e.first, "John");
    ck_assert_str_eq(e.last, "Doe");
    ck_assert_int_eq(e.age, 7);
    ck_assert_str_eq(e.ssn, "000-00-0000");
    setup();
    ck_assert_int_eq(parse("  COUNT  "), PROTO_COUNT);
    setup();
    ck_assert_int_eq(parse("\tFIND\tA\tB"), PROTO_FIND);
    ck_assert_str_eq(e.first, "A");
    ck_assert_str_eq(e.last, "B");
}
END_TEST

START_TEST(test_proto_blank_lines)
{
    static const char *const blanks[] = { "", " ", "\t", "  \t \t  " };

    for (size_t i = 0; i < sizeof(blanks) / sizeof(blanks[0]); i++) {
        setup();
        ck_assert_int_eq(parse(blanks[i]), PROTO_BLANK);
        ck_assert_int_eq(req.cmd, PROTO_BLANK);
        ck_assert(entry_untouched());
    }
}
END_TEST

START_TEST(test_proto_uses_len_not_nul)
{
    /* The line needs no terminator: only len bytes are read. */
    setup();
    ck_assert_int_eq(proto_parse("COUNTXYZ", 5, &req, &e), PROTO_COUNT);
    setup();
    ck_assert_int_eq(proto_parse("FIND a b c", 8, &req, &e), PROTO_FIND);
    ck_assert_str_eq(e.last, "b");
    setup();
    ck_assert_int_eq(proto_parse("   COUNT", 3, &req, &e), PROTO_BLANK);
}
END_TEST

START_TEST(test_proto_help_text_ends_with_end)
{
    size_t n = strlen(proto_help_text);

    ck_assert_uint_ge(n, 4);
    ck_assert_str_eq(proto_help_text + n - 4, "END\n");
    ck_assert_ptr_nonnull(strstr(proto_help_text, "ADD first last age ssn"));
    ck_assert_ptr_nonnull(strstr(proto_help_text, "DIGEST"));
}
END_TEST

/* ---- errors ----------------------------------------------------------- */

START_TEST(test_proto_usage_errors)
{
    ck_assert_parse_error("ADD", "Error: usage: ADD first last age ssn");
    ck_assert_parse_error("ADD a b 1", "Error: usage: ADD first last age ssn");
    ck_assert_parse_error("add a b 1 123-45-6789 extra",
                          "Error: usage: ADD first last age ssn");
    ck_assert_parse_error("ADD a b c d e f g h i j k",
                          "Error: usage: ADD first last age ssn");
    ck_assert_parse_error("DELETE", "Error: usage: DELETE first last");
    ck_assert_parse_error("DELETE a", "Error: usage: DELETE first last");
    ck_assert_parse_error("delete a b c", "Error: usage: DELETE first last");
    ck_assert_parse_error("FIND", "Error: usage: FIND first last");
    ck_assert_parse_error("find a", "Error: usage: FIND first last");
    ck_assert_parse_error("FIND a b c", "Error: usage: FIND first last");
    ck_assert_parse_error("PRINT x", "Error: usage: PRINT");
    ck_assert_parse_error("COUNT x", "Error: usage: COUNT");
    ck_assert_parse_error("check x y", "Error: usage: CHECK");
    ck_assert_parse_error("DIGEST x", "Error: usage: DIGEST");
    ck_assert_parse_error("STATS x", "Error: usage: STATS [RESET]");
    ck_assert_parse_error("TRACE RESET", "Error: usage: TRACE [START|STOP]");
    ck_assert_parse_error("TRACE START /tmp/x",
                          "Error: usage: TRACE [START|STOP]");
    ck_assert_parse_error("STATS START", "Error: usage: STATS [RESET]");
    ck_assert_parse_error("HELP ADD", "Error: usage: HELP");
    ck_assert_parse_error("done now", "Error: usage: DONE");
    ck_assert_parse_error("QUIT now", "Error: usage: QUIT");
}
END_TEST

START_TEST(test_proto_add_bad_first_name)
{
    const char *msg = "Error: bad first name: 1 to 63 bytes, "
                      "no spaces or control characters";

    ck_assert_parse_error("ADD J\x01hn Doe 42 123-45-6789", msg);
    ck_assert_parse_error("ADD J\x7fhn Doe 42 123-45-6789", msg);
    ck_assert_parse_error("DELETE J\x1bhn Doe", msg);
    ck_assert_parse_error("FIND \x7f Doe", msg);
}
END_TEST

START_TEST(test_proto_add_bad_last_name)
{
    const char *msg = "Error: bad last name: 1 to 63 bytes, "
                      "no spaces or control characters";

    ck_assert_parse_error("ADD John D\x02oe 42 123-45-6789", msg);
    ck_assert_parse_error("DELETE John D\x7f", msg);
    ck_assert_parse_error("FIND John D\x0boe", msg);
}
END_TEST

START_TEST(test_proto_add_bad_age)
{
    const char *msg = "Error: bad age: a whole number from 0 to 150";

    ck_assert_parse_error("ADD John Doe 151 123-45-6789", msg);
    ck_assert_parse_error("ADD John Doe -1 123-45-6789", msg);
    ck_assert_parse_error("ADD John Doe 1e2 123-45-6789", msg);
    ck_assert_parse_error("ADD John Doe 0150 123-45-6789", msg);
    ck_assert_parse_error("ADD John Doe forty 123-45-6789", msg);
}
END_TEST

START_TEST(test_proto_add_bad_ssn)
{
    const char *msg = "Error: bad SSN: must be DDD-DD-DDDD";

    ck_assert_parse_error("ADD John Doe 42 123456789", msg);
    ck_assert_parse_error("ADD John Doe 42 123-45-678", msg);
    ck_assert_parse_error("ADD John Doe 42 123-45-67890", msg);
    ck_assert_parse_error("ADD John Doe 42 abc-de-fghi", msg);
}
END_TEST

START_TEST(test_proto_add_errors_first_field_wins)
{
    /* Fields are checked left to right; the first bad one is reported. */
    ck_assert_parse_error("ADD \x01 \x01 999 x",
                          "Error: bad first name: 1 to 63 bytes, "
                          "no spaces or control characters");
    ck_assert_parse_error("ADD a \x01 999 x",
                          "Error: bad last name: 1 to 63 bytes, "
                          "no spaces or control characters");
    ck_assert_parse_error("ADD a b 999 x",
                          "Error: bad age: a whole number from 0 to 150");
    /* The argument count is checked before any field. */
    ck_assert_parse_error("ADD \x01 b 999",
                          "Error: usage: ADD first last age ssn");
}
END_TEST

START_TEST(test_proto_add_invalid_is_not_add)
{
    /* The header allows an invalid ADD to write part of *e, but the
     * request must never come back as an ADD, whichever field fails. */
    static const char *const lines[] = {
        "ADD John Doe 42 123-45-678",       /* names and age are fine */
        "ADD John Doe 151 123-45-6789",
        "ADD John D\x7f 42 123-45-6789",
        "ADD John Doe 42 123-45-6789 x",
    };

    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        setup();
        ck_assert_int_eq(parse(lines[i]), PROTO_INVALID);
        ck_assert_int_eq(req.cmd, PROTO_INVALID);
        ck_assert_int_eq(strncmp(req.err, "Error: ", 7), 0);
    }
}
END_TEST

START_TEST(test_proto_bad_command)
{
    ck_assert_parse_error("FOO", "Error: Bad command: FOO");
    ck_assert_parse_error("foo bar baz", "Error: Bad command: foo");
    ck_assert_parse_error("  \tXYZZY  ", "Error: Bad command: XYZZY");
    /* Near misses are not commands. */
    ck_assert_parse_error("ADDX a b 1 123-45-6789",
                          "Error: Bad command: ADDX");
    ck_assert_parse_error("AD a b", "Error: Bad command: AD");
    ck_assert_parse_error("PRINTS", "Error: Bad command: PRINTS");
    ck_assert_parse_error("COUN", "Error: Bad command: COUN");
    ck_assert_parse_error("\xc3\xa9", "Error: Bad command: \xc3\xa9");
}
END_TEST

START_TEST(test_proto_bad_command_controls_replaced)
{
    ck_assert_parse_error("F\x01O\x1b", "Error: Bad command: F?O?");
    ck_assert_parse_error("\x7f" "DEL", "Error: Bad command: ?DEL");
    ck_assert_parse_error("COUNT\r", "Error: Bad command: COUNT?");
    ck_assert_parse_error("\x0b", "Error: Bad command: ?");
    setup();
    ck_assert_int_eq(proto_parse("A\0B", 3, &req, &e), PROTO_INVALID);
    ck_assert_str_eq(req.err, "Error: Bad command: A?B");
}
END_TEST

/* ---- limits ----------------------------------------------------------- */

START_TEST(test_proto_bad_command_long_word_truncated)
{
    char line[300], want[PROTO_ERR_MAX];

    /* 32 bytes are echoed whole, 33 are cut to 32 plus "...". */
    memset(line, 'W', 32);
    line[32] = '\0';
    snprintf(want, sizeof(want), "Error: Bad command: %.32s", line);
    ck_assert_parse_error(line, want);

    memset(line, 'W', 33);
    line[33] = '\0';
    snprintf(want, sizeof(want), "Error: Bad command: %.32s...", line);
    ck_assert_parse_error(line, want);

    memset(line, 'W', 299);
    line[299] = '\0';
    ck_assert_parse_error(line, want);
    ck_assert_uint_lt(strlen(req.err), PROTO_ERR_MAX);

    /* Control characters within the echoed part are still replaced. */
    memset(line, '\x01', 299);
    snprintf(want, sizeof(want), "Error: Bad command: %s...",
             "????????????????????????????????");
    ck_assert_parse_error(line, want);
}
END_TEST

START_TEST(test_proto_name_length_limits)
{
    char line[256], name[ENTRY_NAME_MAX + 2];

    memset(name, 'n', sizeof(name));
    name[ENTRY_NAME_MAX] = '\0';                        /* 63 bytes */
    snprintf(line, sizeof(line), "ADD %s %s 150 999-99-9999", name, name);
    setup();
    ck_assert_int_eq(parse(line), PROTO_ADD);
    ck_assert_str_eq(e.first, name);
    ck_assert_str_eq(e.last, name);
    ck_assert_int_eq(e.age, 150);

    name[ENTRY_NAME_MAX] = 'n';
    name[ENTRY_NAME_MAX + 1] = '\0';                    /* 64 bytes */
    snprintf(line, sizeof(line), "ADD %s b 1 999-99-9999", name);
    ck_assert_parse_error(line, "Error: bad first name: 1 to 63 bytes, "
                                "no spaces or control characters");
    snprintf(line, sizeof(line), "FIND a %s", name);
    ck_assert_parse_error(line, "Error: bad last name: 1 to 63 bytes, "
                                "no spaces or control characters");
}
END_TEST

START_TEST(test_proto_age_limits)
{
    setup();
    ck_assert_int_eq(parse("ADD a b 0 123-45-6789"), PROTO_ADD);
    ck_assert_int_eq(e.age, 0);
    setup();
    ck_assert_int_eq(parse("ADD a b 150 123-45-6789"), PROTO_ADD);
    ck_assert_int_eq(e.age, 150);
    setup();
    ck_assert_int_eq(parse("ADD a b 007 123-45-6789"), PROTO_ADD);
    ck_assert_int_eq(e.age, 7);
    ck_assert_parse_error("ADD a b 151 123-45-6789",
                          "Error: bad age: a whole number from 0 to 150");
}
END_TEST

START_TEST(test_proto_utf8_names)
{
    setup();
    ck_assert_int_eq(parse("ADD Zo\xc3\xab M\xc3\xbcller 30 123-45-6789"),
                     PROTO_ADD);
    ck_assert_str_eq(e.first, "Zo\xc3\xab");
    ck_assert_str_eq(e.last, "M\xc3\xbcller");
}
END_TEST

/* Tokens of every length from 1 to 20 between runs of spaces and tabs
 * of every kind below, at every place in the line, so that each
 * separator falls at every offset of the 8-byte words split reads: the
 * names are FIND's exactly, and one more token is one too many. */
START_TEST(test_proto_separators_at_every_offset)
{
    static const char *const seps[] = { " ", "\t", "  ", " \t", "\t\t " };
    const size_t nseps = sizeof(seps) / sizeof(seps[0]);
    char line[128], first[24], last[24];

    for (size_t l1 = 1; l1 <= 20; l1++) {
        for (size_t l2 = 1; l2 <= 20; l2++) {
            for (size_t i = 0; i < l1; i++)
                first[i] = (char)('a' + i);
            first[l1] = '\0';
            for (size_t i = 0; i < l2; i++)
                last[i] = (char)('M' + i % 12);
            last[l2] = '\0';
            for (size_t a = 0; a < nseps; a++)
                for (size_t b = 0; b < nseps; b++)
                    for (size_t c = 0; c < nseps; c++) {
                        int n = snprintf(line, sizeof(line), "%sFIND%s%s%s%s%s",
                                         seps[a], seps[b], first, seps[c],
                                         last, seps[(a + b) % nseps]);
                        setup();
                        ck_assert_int_eq(proto_parse(line, (size_t)n, &req, &e),
                                         PROTO_FIND);
                        ck_assert_str_eq(e.first, first);
                        ck_assert_str_eq(e.last, last);
                        n += snprintf(line + n, sizeof(line) - (size_t)n, "x");
                        ck_assert_int_eq(proto_parse(line, (size_t)n, &req, &e),
                                         PROTO_INVALID);
                    }
        }
    }
}
END_TEST

static Suite *proto_suite(void)
{
    Suite *s = suite_create("proto");
    TCase *core = tcase_create("core");
    TCase *errors = tcase_create("errors");
    TCase *limits = tcase_create("limits");

    tcase_add_test(core, test_proto_simple_commands_any_case);
    tcase_add_test(core, test_proto_add_fills_entry);
    tcase_add_test(core, test_proto_delete_and_find_fill_names);
    tcase_add_test(core, test_proto_tabs_and_spaces_separate);
    tcase_add_test(core, test_proto_separators_at_every_offset);
    tcase_add_test(core, test_proto_blank_lines);
    tcase_add_test(core, test_proto_uses_len_not_nul);
    tcase_add_test(core, test_proto_help_text_ends_with_end);
    tcase_add_test(core, test_proto_utf8_names);

    tcase_add_test(errors, test_proto_usage_errors);
    tcase_add_test(errors, test_proto_add_bad_first_name);
    tcase_add_test(errors, test_proto_add_bad_last_name);
    tcase_add_test(errors, test_proto_add_bad_age);
    tcase_add_test(errors, test_proto_add_bad_ssn);
    tcase_add_test(errors, test_proto_add_errors_first_field_wins);
    tcase_add_test(errors, test_proto_add_invalid_is_not_add);
    tcase_add_test(errors, test_proto_bad_command);
    tcase_add_test(errors, test_proto_bad_command_controls_replaced);

    tcase_add_test(limits, test_proto_bad_command_long_word_truncated);
    tcase_add_test(limits, test_proto_name_length_limits);
    tcase_add_test(limits, test_proto_age_limits);

    suite_add_tcase(s, core);
    suite_add_tcase(s, errors);
    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(proto_suite)
