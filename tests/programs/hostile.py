#!/usr/bin/env python3
"""A server that misbehaves in one chosen way, for tests/it/hostile.rs.

    python3 hostile.py MODE ADDRESS

ADDRESS is HOST:PORT (TCP) or an absolute path (a Unix socket; a file
already there is replaced). Every connection gets MODE:

    silence         reads the request, never answers
    trickle         a status line that never ends, one byte a second
    endless-status  `HTTP/1.1 200 OKOKOK...` without a newline, fast
    interim-100     `HTTP/1.1 100 Continue` answers without end, fast
    interim-103     `HTTP/1.1 103 Early Hints` answers without end, fast
    garbage         bytes that are not HTTP, without end, fast
    flood-headers   an interim answer whose header lines never end, fast
    reset           a reset instead of an answer (TCP: SO_LINGER 0;
                    a Unix socket: closed with the request unread)
    no-read         never reads the request, never answers, with the
                    smallest receive buffer the kernel allows
    healthy         `HTTP/1.1 200 OK`, the control

On stdout, flushed line by line: `ready` once it listens, `accepted N`
when connection N is taken, `misbehaving N` once its misbehaviour is under
way (the first bytes of the answer handed to the kernel, the request read
and left unanswered, the reset about to go). A peer that goes away ends
its connection quietly. Standard library only: CI's Debian python3.
"""

import itertools
import os
import select
import socket
import struct
import sys
import threading
import time

BLOCK = 64 * 1024

say_lock = threading.Lock()


def say(line):
    with say_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def read_request(conn):
    """Reads until the request's empty line (or the peer's end)."""
    got = b""
    while b"\r\n\r\n" not in got and len(got) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            break
        got += chunk


def flood(first, piece):
    """An answer that starts with `first` and repeats `piece` forever, in
    blocks large enough that the sender is never the slow side."""
    block = piece * (BLOCK // len(piece) + 1)

    def serve(conn, n):
        read_request(conn)
        conn.sendall(first + block)
        say(f"misbehaving {n}")
        while True:
            conn.sendall(block)

    return serve


def silence(conn, n):
    read_request(conn)
    say(f"misbehaving {n}")
    # Held open until the peer closes.
    while conn.recv(4096):
        pass


def trickle(conn, n):
    read_request(conn)
    line = itertools.chain(b"HTTP/1.1 200 OK", itertools.repeat(ord("K")))
    for i, byte in enumerate(line):
        conn.sendall(bytes([byte]))
        if i == 0:
            say(f"misbehaving {n}")
        time.sleep(1)


def garbage():
    # Not HTTP from its first byte; the rest is random, one block of it
    # sent over and over (fresh randomness would only cost the server).
    block = b"\x00" + os.urandom(BLOCK - 1)

    def serve(conn, n):
        read_request(conn)
        conn.sendall(block)
        say(f"misbehaving {n}")
        while True:
            conn.sendall(block)

    return serve


def reset(conn, n):
    if conn.family == socket.AF_UNIX:
        # A Unix socket closed with unread data is what resets its peer:
        # wait for the request to be there, unread.
        select.select([conn], [], [], 5)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    say(f"misbehaving {n}")
    conn.close()


def no_read(conn, n):
    say(f"misbehaving {n}")
    # Neither read nor closed: the peer's end decides (the process's end).
    threading.Event().wait()


def healthy(conn, n):
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
    say(f"misbehaving {n}")


MODES = {
    "silence": silence,
    "trickle": trickle,
    "endless-status": flood(b"HTTP/1.1 200 ", b"OK"),
    "interim-100": flood(b"", b"HTTP/1.1 100 Continue\r\n\r\n"),
    "interim-103": flood(
        b"", b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n"
    ),
    "garbage": garbage(),
    "flood-headers": flood(b"HTTP/1.1 100 Continue\r\n", b"X-Flood: 0123456789abcdef\r\n"),
    "reset": reset,
    "no-read": no_read,
    "healthy": healthy,
}


def listen(address, mode):
    if address.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.lexists(address):
            os.unlink(address)
        where = address
    else:
        host, _, port = address.rpartition(":")
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        where = (host.strip("[]"), int(port))
    if mode == "no-read":
        # Set before listen(2): accepted sockets inherit it. The kernel
        # raises 1 to its minimum.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    s.bind(where)
    s.listen(64)
    return s


def handle(serve, conn, n):
    try:
        serve(conn, n)
    except OSError:
        # The peer went away (a reset, a broken pipe): that ends it.
        pass
    finally:
        conn.close()


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MODES:
        sys.exit(f"usage: hostile.py {'|'.join(MODES)} HOST:PORT|/PATH")
    mode, address = sys.argv[1], sys.argv[2]
    s = listen(address, mode)
    say("ready")
    for n in itertools.count(1):
        conn, _ = s.accept()
        say(f"accepted {n}")
        threading.Thread(target=handle, args=(MODES[mode], conn, n), daemon=True).start()


if __name__ == "__main__":
    main()
