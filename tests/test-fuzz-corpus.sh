#!/bin/bash
# test-fuzz-corpus.sh -- the fuzz targets' seed corpus (tests/fuzz/corpus/)
# replayed through the same targets, built with gcc, ASan and UBSan around
# a plain main() (make fuzz-replay; no clang, no libFuzzer): every seed,
# and every crash a fuzzing run ever kept there, must pass each target's
# oracle without a sanitizer report. docs/FUZZING.md says how to fuzz for
# real (make fuzz).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

TARGETS=(proto linereader telnet jrec session http)
REPLAY=${BUILD:-build}/fuzz-replay

if ! env -u MAKEFLAGS -u MAKELEVEL make -s fuzz-replay >"$TEST_TMP/make.out" 2>&1; then
    not_ok "make fuzz-replay builds the replay drivers"
    sed 's/^/#   /' "$TEST_TMP/make.out" | tail -n 10
    finish
fi
check "make fuzz-replay builds without a warning" \
    bash -c "! grep -q 'warning:' '$TEST_TMP/make.out'"

# Sanitizer reports end the run with a failure status, whatever the
# environment asks for.
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# why ERR_FILE: the input that failed (the driver names each before it
# runs it) and what the oracle or the sanitizer said.
why() {
    grep 'replay:' "$1" | tail -n 1 | sed 's/^/#   /'
    grep -E 'oracle|ERROR|runtime error|^    #[0-4] ' "$1" | head -n 8 |
        sed 's/^/#   /'
}

for t in "${TARGETS[@]}"; do
    dir=tests/fuzz/corpus/$t
    n=$(find "$dir" -maxdepth 1 -type f 2>/dev/null | wc -l)
    check "$t: a seed corpus of at least 15 files ($n)" test "$n" -ge 15
    { "$REPLAY/fuzz_$t" "$dir" >"$TEST_TMP/$t.out" 2>"$TEST_TMP/$t.err"; } 2>/dev/null
    rc=$?
    if [[ $rc -eq 0 && $(cat "$TEST_TMP/$t.out") == "replay: $n inputs" ]]; then
        ok "$t: all $n corpus files pass the oracle under ASan and UBSan"
    else
        not_ok "$t: all $n corpus files pass the oracle under ASan and UBSan (status $rc)"
        why "$TEST_TMP/$t.err"
    fi
done

# Each target also takes the other targets' seeds: more shapes of input for
# free, and no input may crash any of them.
for t in "${TARGETS[@]}"; do
    others=()
    for o in "${TARGETS[@]}"; do
        [[ $o == "$t" ]] || others+=("tests/fuzz/corpus/$o")
    done
    if { "$REPLAY/fuzz_$t" "${others[@]}" >"$TEST_TMP/$t-x.out" \
            2>"$TEST_TMP/$t-x.err"; } 2>/dev/null; then
        ok "$t: the other targets' seeds pass too ($(cat "$TEST_TMP/$t-x.out"))"
    else
        not_ok "$t: the other targets' seeds pass too"
        why "$TEST_TMP/$t-x.err"
    fi
done

# A corpus file that cannot be read fails the replay: it never passes
# unseen.
"$REPLAY/fuzz_proto" "$TEST_TMP/no-such-input" >/dev/null 2>&1
expect_eq "the replay driver fails on an input it cannot read" "$?" 1

finish
