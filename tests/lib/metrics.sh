# metrics.sh -- scraping --metrics-port in tests: test-metrics.sh and
# test-server-limits.sh source it (after common.sh, for SRV_OUT).

# scrape PORT PATH OUT [HEADER]: one HTTP/1.0 GET, with one more header
# line when given; the whole answer into OUT.
scrape() {
    local extra=""
    [[ -n ${4:-} ]] && extra="$4"$'\r\n'
    timeout 5 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 97
        printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n%s\r\n" "$2" "$4" >&3
        cat <&3 >"$3"' _ "$1" "$2" "$3" "$extra" 2>/dev/null
}

# metrics_port: the port the started server's --metrics-port 0 got (the
# second line of its output).
metrics_port() {
    sed -n '2s/^metrics on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$SRV_OUT"
}

# body FILE: the answer's body (after the blank line ending the headers).
body() {
    sed '1,/^\r\{0,1\}$/d' "$1"
}

# sample FILE NAME: the value of the sample NAME (with its labels, if any).
sample() {
    body "$1" | awk -v k="$2" '$1 == k { print $2 }'
}
