#!/usr/bin/env python3
"""fakesrv.py -- a broken ssnserver for the clients' tests: it listens on
127.0.0.1 (port 0), prints "PORT n" and answers every request line the
way MODE says, for at most LIFE seconds (default 20), then exits.

  extra   COUNT gets "3" and an extra "7": one line more than asked for
  hello   every request gets "hello", a reply of no shape
  escape  every request gets an error reply full of terminal escapes
          (C0, an OSC title, C1 CSI in UTF-8, a lone 8-bit CSI)
  drip    the first request gets "1" and then a digit every 0.2 s, a
          reply that never ends
  stats   STATS gets a block with a mode and lock figures: counts (0) the
          first time, then -1 and a number of 23 digits, which are none;
          every other request gets "OK"
  stats-escape
          STATS gets a block whose mode, on its second line, is terminal
          escapes (an OSC title, a screen clear, a lone 8-bit CSI) and
          whose figures are 0;
          every other request gets "OK"
  nodone  COUNT gets "0", and DONE nothing at all: no Bye, no close
  driprun COUNT gets "0", STATS a block of zeros, STATS RESET "OK"; any
          other request (kill_it's run) a reply that drips in as drip's
  liar    a little store that keeps ADD, DELETE, PRINT and DIGEST right,
          but answers COUNT with "N lost?" and CHECK with "OKAY? NO: red
          node with red child": replies that only begin as a sound one
  oddstats
          the same store, sound in COUNT and CHECK, whose STATS has more
          contended acquisitions than acquisitions, a p99 past the longest
          wait

  tests/lib/fakesrv.py MODE [LIFE]
"""
import hashlib
import socket
import sys
import threading
import time

ESCAPES = (b"Error: \x1b]0;pwned\x07\x1b[2J\xc2\x9b31m\x9b1mred\x1b[0m"
           b" Zo\xc3\xab")
STATS_GOOD = (b"mode buffered\nlock_acquisitions 0\nlock_contended 0\n"
              b"lock_wait_us 0\nlock_hold_us 0\nEND\n")
STATS_BAD = (b"mode buffered\nlock_acquisitions -1\nlock_contended 0\n"
             b"lock_wait_us 12345678901234567890123\nlock_hold_us 0\nEND\n")
STATS_ESCAPE = (b"version 0.3.0\nmode \x1b]0;pwned\x07\x1b[2J\x9b31m\n"
                b"lock_acquisitions 0\nlock_contended 0\nlock_wait_us 0\n"
                b"lock_hold_us 0\nEND\n")
HEAD = b"_" * 50 + b"\n"
TAIL = b"-" * 50 + b"\n"
store = {}                      # (last, first) -> (age, ssn); liar's
STATS_ODD = (b"mode buffered\nlock_acquisitions 3\nlock_contended 7\n"
             b"lock_wait_us 10\nlock_hold_us 10\nlock_wait_max_us 5\n"
             b"lock_hold_max_us 5\nlock_wait_p99_us 9\nlock_hold_p99_us 1\n"
             b"END\n")
stats_asked = 0
stats_lock = threading.Lock()


def liar(line, honest):
    w = line.split()
    cmd = w[0].upper() if w else b""
    with stats_lock:
        if cmd == b"ADD" and len(w) == 5:
            if (w[2], w[1]) in store:
                return b"Error: %s %s already exists\n" % (w[1], w[2])
            store[(w[2], w[1])] = (int(w[3]), w[4])
            return b"OK\n"
        if cmd == b"DELETE" and len(w) == 3:
            if store.pop((w[2], w[1]), None) is None:
                return b"Error: %s %s not found\n" % (w[1], w[2])
            return b"OK\n"
        people = sorted(store.items())
        if cmd == b"PRINT":
            return HEAD + b"".join(b"%-30s -- %11s %4d\n" % (l + b", " + f, n, a)
                                   for (l, f), (a, n) in people) + TAIL
        if cmd == b"DIGEST":
            dump = b"".join(b"%s %s %d %s\n" % (l, f, a, n)
                            for (l, f), (a, n) in people)
            return hashlib.sha256(dump).hexdigest().encode() + b"\n"
        if cmd == b"COUNT":
            return b"%d%s\n" % (len(store), b"" if honest else b" lost?")
        if cmd == b"CHECK" and honest:
            return b"OK %d entries, all invariants hold\n" % len(store)
        if cmd == b"CHECK":
            return b"OKAY? NO: red node with red child\n"
        if cmd == b"STATS" and len(w) == 1:
            return STATS_ODD if honest else STATS_GOOD
    return b"OK\n"


def answer(mode, line):
    global stats_asked
    if mode in ("liar", "oddstats"):
        return liar(line, mode == "oddstats")
    if mode == "extra":
        return b"3\n7\n"
    if mode == "hello":
        return b"hello\n"
    if mode == "stats-escape":
        return STATS_ESCAPE if line.strip().upper() == b"STATS" else b"OK\n"
    if mode == "nodone":
        return b"0\n"
    if mode == "stats":
        if line.strip().upper() != b"STATS":
            return b"OK\n"
        with stats_lock:
            stats_asked += 1
            return STATS_GOOD if stats_asked == 1 else STATS_BAD
    return ESCAPES + b"\n"


def drip(conn):
    try:
        while True:
            conn.sendall(b"1")
            time.sleep(0.2)
    except OSError:
        pass


def serve(conn, mode):
    buf = b""
    with conn:
        while True:
            try:
                data = conn.recv(4096)
            except OSError:
                return
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if mode == "nodone" and line.strip().upper() == b"DONE":
                    continue
                if line.strip().upper() in (b"QUIT", b"DONE"):
                    conn.sendall(b"Bye\n")
                    return
                word = line.strip().upper()
                if mode == "drip" or (mode == "driprun" and word not in
                                      (b"COUNT", b"STATS", b"STATS RESET")):
                    drip(conn)
                    return
                if mode == "driprun":
                    conn.sendall(b"0\n" if word == b"COUNT" else
                                 STATS_GOOD if word == b"STATS" else b"OK\n")
                    continue
                conn.sendall(answer(mode, line))


def main():
    mode = sys.argv[1]
    life = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    print("PORT", srv.getsockname()[1], flush=True)
    srv.settimeout(0.2)
    end = time.time() + life
    while time.time() < end:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn, mode), daemon=True).start()


main()
