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

  tests/lib/fakesrv.py MODE [LIFE]
"""
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
stats_asked = 0
stats_lock = threading.Lock()


def answer(mode, line):
    global stats_asked
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
                if mode == "drip":
                    drip(conn)
                    return
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
