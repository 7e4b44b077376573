#!/bin/bash
# test-bench-smoke.sh -- make check's quick run of the issue-5 benchmarks
# (tools/bench-hash, bench-log, bench-wakeup) at smoke sizes, a few syncs
# of tools/fsync-rate, and tools/bench-compare --self-test (ssnserver and
# the echo floor, no Redis).
# It asserts real results, not just exit codes: the cross-variant digest
# check passes (and a deliberately corrupted run fails it), every JSON
# document parses and holds the expected rows, each table has its rows, bench-log wrote exactly the lines
# asked for and cleaned up, and bench-wakeup reports how many threads it used.
# Exits 0 when all pass, 1 otherwise. About a minute, most of it
# bench-guard.sh --smoke.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-bin}
fails=0
tmp=$(mktemp -d /tmp/bench-smoke.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

ok()   { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# check DESCRIPTION COMMAND...: passes when COMMAND exits 0.
check() { local d=$1; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }
has()  { grep -Eq -- "$2" "$1"; }

for t in bench-hash bench-log bench-wakeup; do
    if [ ! -x "$BIN/$t" ]; then
        make --no-print-directory -s "$BIN/$t" >/dev/null || { fail "build $t"; continue; }
    fi
    check "$t --help exits 0 and prints usage" \
        bash -c "'$BIN/$t' --help | grep -q '^usage: $t'"
    check "$t rejects a bad option" bash -c "! '$BIN/$t' --no-such-option 2>/dev/null"
done

# ---- bench-hash ----------------------------------------------------------
out=$tmp/hash.txt
if "$BIN/bench-hash" --count 20000 --threads 1,2,3 --repeat 2 >"$out" 2>&1; then
    ok "bench-hash table run exits 0"
else
    fail "bench-hash table run exits 0"; cat "$out"
fi
for v in locked newctx perthread oneshot oneshot-fetched; do
    check "bench-hash table has row $v" \
        has "$out" "^$v +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+$"
done
check "bench-hash reports identical digests" has "$out" '^digests: identical'

"$BIN/bench-hash" --count 5000 --threads 1,4 --repeat 1 --json >"$tmp/hash.json" 2>&1
check "bench-hash JSON parses with 5 variants x 2 thread counts, digest ok" \
    python3 - "$tmp/hash.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
assert d["digest_ok"] is True and len(d["combined_sha256"]) == 64
assert len(r) == 10, len(r)
assert {x["threads"] for x in r} == {1, 4}
assert all(x["hashes_per_s"] > 0 and len(x["runs_s"]) == 1 for x in r)
EOF

if "$BIN/bench-hash" --count 5000 --threads 2 --repeat 1 --corrupt perthread \
        >"$tmp/corrupt.txt" 2>&1; then
    fail "bench-hash fails when one variant's digests differ"
else
    check "bench-hash fails when one variant's digests differ" \
        has "$tmp/corrupt.txt" 'DIGEST MISMATCH: perthread'
fi

# ---- bench-log -----------------------------------------------------------
out=$tmp/log.txt
mkdir "$tmp/logdir"
if "$BIN/bench-log" --lines 20000 --slow-lines 300 --threads 1,3 --repeat 1 \
        --dir "$tmp/logdir" >"$out" 2>&1; then
    ok "bench-log table run exits 0"
else
    fail "bench-log table run exits 0"; cat "$out"
fi
for row in '\(a\) direct.* 1 +20000 ' '\(b\) .* 3 +20000 ' \
           '\(c\) .*per line +300\* ' '\(d\) .*per line +300\* ' \
           '\(e\) .* 3 +20000 .* 20001$' '\(f\) .* 3 +20000 '; do
    check "bench-log table has row /$row/" has "$out" "$row"
done
check "bench-log removed its file from --dir" \
    test -z "$(ls -A "$tmp/logdir")"

"$BIN/bench-log" --lines 5000 --slow-lines 200 --threads 2 --repeat 2 --json \
    >"$tmp/log.json" 2>&1
check "bench-log JSON parses, all six variants wrote their lines" \
    python3 - "$tmp/log.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["variant"]: x for x in d["results"]}
assert d["lines_ok"] is True
assert set(r) == {"direct", "mutex", "thread-mutex", "thread-spin", "queue", "dbuf"}
for v in ("direct", "mutex", "queue", "dbuf"):
    assert r[v]["lines"] == 5000, v
for v in ("thread-mutex", "thread-spin"):
    assert r[v]["lines"] == 200, v
assert r["queue"]["signals"] == 5001            # one per line, plus stop
assert 1 <= r["dbuf"]["signals"] < 100          # one per buffer, not per line
assert all(x["lines_per_s"] > 0 and len(x["runs_s"]) == 2 for x in r.values())
EOF

if "$BIN/bench-log" --lines 2000 --slow-lines 50 --threads 2 --repeat 1 \
        --variants direct,dbuf --corrupt dbuf >"$tmp/logbad.txt" 2>&1; then
    fail "bench-log fails when a variant's file has a torn line"
else
    check "bench-log fails when a variant's file has a torn line" \
        has "$tmp/logbad.txt" 'dbuf: WRONG LINE COUNT'
fi

# ---- bench-wakeup --------------------------------------------------------
out=$tmp/wakeup.txt
if "$BIN/bench-wakeup" --threads 300 --repeat 3 >"$out" 2>&1; then
    ok "bench-wakeup table run exits 0"
else
    fail "bench-wakeup table run exits 0"; cat "$out"
fi
check "bench-wakeup reports the threads it started" \
    has "$out" '^threads: 300 started of 300 requested'
for v in broadcast signal signal-shared-mutex; do
    check "bench-wakeup table has row $v" \
        has "$out" "^$v +300 +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+$"
done

"$BIN/bench-wakeup" --threads 100 --repeat 2 --variants broadcast,signal \
    --json >"$tmp/wakeup.json" 2>&1
check "bench-wakeup JSON parses and reports threads used" \
    python3 - "$tmp/wakeup.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["threads_requested"] == 100 and d["threads_started"] == 100
r = d["results"]
assert [x["variant"] for x in r] == ["broadcast", "signal"]
for x in r:
    assert x["threads_started"] == 100 and len(x["last_awake_ms"]) == 2
    # the last waiter cannot wake before the first one
    assert x["median_last_awake_ms"] >= x["median_first_awake_ms"] >= 0
EOF

# Under a 200 MB address-space limit 5,000 threads with 64 KiB stacks cannot
# all exist: the tool must fall back and report how many it really started.
(ulimit -v 200000 && "$BIN/bench-wakeup" --threads 5000 --repeat 1 \
    --variants signal --json) >"$tmp/fewer.json" 2>"$tmp/fewer.err"
check "bench-wakeup falls back to fewer threads and reports the number" \
    python3 - "$tmp/fewer.json" "$tmp/fewer.err" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
n = d["threads_started"]
assert d["threads_requested"] == 5000 and 0 < n < 5000, n
assert d["results"][0]["threads_started"] == n
assert "fell back to %d threads" % n in open(sys.argv[2]).read()
EOF

# ---- fsync-rate --------------------------------------------------------------
# A few syncs of every variant in a scratch directory: each reports a rate
# and its p50 <= p99, the files are gone after, and a missing directory or
# a bad value is refused with the documented status.
if [ ! -x "$BIN/fsync-rate" ]; then
    make --no-print-directory -s "$BIN/fsync-rate" >/dev/null || fail "build fsync-rate"
fi
check "fsync-rate --help exits 0 and prints usage" \
    bash -c "'$BIN/fsync-rate' --help | grep -q '^usage: fsync-rate'"
mkdir -p "$tmp/fr"
# (direct needs O_DIRECT, which tmpfs refuses: it runs where it can, and
# otherwise must fail on that call and say so.)
if "$BIN/fsync-rate" --dir "$tmp/fr" --count 20 --rounds 2 --json \
        --variants append,keep-size,falloc,zeros \
        >"$tmp/fr.json" 2>"$tmp/fr.err"; then
    ok "fsync-rate runs the variants and exits 0"
else
    fail "fsync-rate runs the variants and exits 0"; cat "$tmp/fr.err"
fi
"$BIN/fsync-rate" --dir "$tmp/fr" --count 10 --variants direct \
    >"$tmp/fr.direct" 2>&1
check "fsync-rate direct runs, or says O_DIRECT failed" \
    bash -c "grep -Eq '^direct +[0-9]+ ' '$tmp/fr.direct' || grep -q 'fcntl O_DIRECT' '$tmp/fr.direct'"
check "fsync-rate JSON has every variant with a rate and p50 <= p99" \
    python3 - "$tmp/fr.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["variants"]
assert [x["variant"] for x in v] == ["append", "keep-size", "falloc", "zeros"], v
for x in v:
    assert "error" not in x, x
    assert x["syncs_per_s"] > 0 and 0 < x["p50_us"] <= x["p99_us"], x
    assert x["round_min"] <= x["round_max"], x
EOF
check "fsync-rate leaves no file behind" test -z "$(ls -A "$tmp/fr")"
"$BIN/fsync-rate" --dir "$tmp/none" --count 5 >/dev/null 2>"$tmp/fr.err"
rc=$?
check "fsync-rate refuses a missing directory (exit 1, says why)" \
    bash -c "[ $rc = 1 ] && grep -q 'No such file or directory' '$tmp/fr.err'"
"$BIN/fsync-rate" --count 0 >/dev/null 2>&1
rc=$?
check "fsync-rate refuses a bad value (exit 2)" test "$rc" = 2

# ---- bench-compare --self-test --------------------------------------------
# ssnserver (--io events and --io threads) and the echo floor only, two
# half-second cells each (inserts of new keys, and the 1:8:1 mix) from one
# client thread, no Redis or memcached: every server answered at a real
# rate with its CPU measured, no insert was refused, and each was stopped.
# About 12 runs of a second or two.
out=$tmp/compare.txt
if BIN=$BIN tools/bench-compare --self-test >"$out" 2>&1; then
    ok "bench-compare --self-test exits 0"
else
    fail "bench-compare --self-test exits 0"; cat "$out"
fi
check "bench-compare prints the table of one client thread" \
    has "$out" "^ssn-bench -t 1 \(1 client thread\):$"
for w in insert mix; do
    for s in ssn-events ssn-threads ssn-thr-batch1 ssn-thr-unfair echo echo-threads; do
        check "bench-compare table has row $w $s" \
            has "$out" "^$w +16 +$s +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+"
    done
done

# ---- bench-guard.sh --smoke -------------------------------------------------
# issue 22's attacks at toy sizes (tools/bench-limits/bench-guard.sh), both
# I/O models: every row of its table is there with a figure, and the one
# connection's wrong AUTHs got exactly 3 answers. About 30 s.
for t in ssnserver-buffered ssnserver-coarse; do
    [ -x "$BIN/$t" ] || make --no-print-directory -s "$BIN/$t" >/dev/null ||
        fail "build $t"
done
out=$tmp/guard.txt
if BIN=$BIN tools/bench-limits/bench-guard.sh --smoke >"$out" 2>"$tmp/guard.err"; then
    ok "bench-guard.sh --smoke exits 0"
else
    fail "bench-guard.sh --smoke exits 0"; cat "$out" "$tmp/guard.err"
fi
for io in threads events; do
    check "bench-guard table: $io idle connection's cost" \
        has "$out" "^\\| conn \\| $io \\| .*\\| [0-9]+ KiB a connection \\|"
    for b in 1m 0; do
        check "bench-guard table: $io memory, --max-output-total $b" \
            has "$out" "^\\| memory \\| $io \\| --max-output-total $b.*\\| peak [0-9.]+ MiB above base"
    done
    check "bench-guard table: $io one connection, 3 answers" \
        has "$out" "^\\| guess \\| $io \\| one connection.*: 3 answered"
    for k in '3 wrong AUTHs each' 'one wrong AUTH each'; do
        check "bench-guard table: $io guessers, $k" \
            has "$out" "^\\| guess \\| $io \\| [0-9]+ connections of one address, $k.*\\| [0-9]+ guesses/s"
    done
    for m in coarse buffered; do
        check "bench-guard table: $io $m admits the password among the unauthenticated" \
            has "$out" "^\\| unauth \\| $io \\| $m, 64 idle.*\\| AUTH: OK after [0-9]+ ms; COUNT: [0-9]+ ms"
    done
done

[ "$fails" -eq 0 ] && echo "bench smoke: all passed" || echo "bench smoke: $fails failed"
[ "$fails" -eq 0 ]
