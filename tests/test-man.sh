#!/bin/bash
# test-man.sh -- the manual pages in man/: each passes `mandoc -T lint -W
# warning' without a message, `man -l' renders it without an error, and each
# program's page names every long option its --help lists, so the pages
# cannot quietly fall behind the programs. mandoc and man-db come from
# tools/install-deps.
source "$(dirname "$0")/lib/common.sh"

PAGES=(ssnserver inputgen inclient kill_it ssn-bench ssn-cli)

have_mandoc=1 have_man=1
command -v mandoc >/dev/null 2>&1 || have_mandoc=0
command -v man >/dev/null 2>&1 || have_man=0
check "mandoc is installed (tools/install-deps)" test $have_mandoc = 1
check "man is installed (tools/install-deps)" test $have_man = 1

for p in "${PAGES[@]}"; do
    page=man/$p.1
    if [[ ! -f $page ]]; then
        not_ok "$page exists"
        continue
    fi
    if [[ $have_mandoc = 1 ]]; then
        out=$(mandoc -T lint -W warning "$page" 2>&1); rc=$?
        if [[ $rc -eq 0 && -z $out ]]; then
            ok "$page: mandoc -T lint -W warning is silent"
        else
            not_ok "$page: mandoc -T lint -W warning is silent (rc $rc)"
            sed 's/^/#   /' <<<"$out" | head -n 10
        fi
    fi
    if [[ $have_man = 1 ]]; then
        MANWIDTH=80 MANPAGER=cat PAGER=cat man -l "$page" \
            >"$TEST_TMP/$p.txt" 2>"$TEST_TMP/$p.err"; rc=$?
        if [[ $rc -eq 0 && ! -s $TEST_TMP/$p.err ]] &&
           grep -q '^NAME' "$TEST_TMP/$p.txt" &&
           grep -q '^EXIT STATUS' "$TEST_TMP/$p.txt"; then
            ok "$page: man -l renders it without an error"
        else
            not_ok "$page: man -l renders it without an error (rc $rc)"
            sed 's/^/#   /' "$TEST_TMP/$p.err" | head -n 5
        fi
    fi

    # Every --long option of the program's --help (the lines that start
    # with an option) is an item of its page. An option a ".\" TODO" line
    # of the page names is only noted: the page's owner has it on the list.
    prog=$BIN/$p
    [[ $p == ssnserver ]] && prog=$BIN/ssnserver-buffered
    todo=$(grep -E '^\.\\" TODO' "$page")
    missing=() pending=()
    for opt in $("$prog" --help 2>/dev/null |
                 grep -oE -- '^ +(-[a-zA-Z], )?--[a-z][a-z-]+' |
                 grep -oE -- '--[a-z-]+' | sort -u); do
        if grep -qE "^\.It .*Fl ${opt#-}( |\$)" "$page"; then
            :
        elif [[ " $todo " =~ [^a-z-]$opt[^a-z-] ]]; then
            pending+=("$opt")
        else
            missing+=("$opt")
        fi
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        ok "$page documents every option of $p --help"
    else
        not_ok "$page documents every option of $p --help"
        echo "#   not in the page: ${missing[*]}"
    fi
    [[ ${#pending[@]} -eq 0 ]] ||
        echo "# TODO in $page: ${pending[*]} (named in its TODO line)"
done

finish
