#!/usr/bin/env python3
"""What one forwarded signal touches: instructions, and the distinct cache
lines and pages of code and of data, between one wait for a signal and
the next: one entry to `read` (catatonit, the reference inits) or to
the function the init waits in (`NAME=PATH@SYMBOL`: vigil takes each
signal with rt_sigtimedwait through musl's `syscall`). Counted with
valgrind's lackey (`--trace-mem=yes`), so the figures do not depend on
the machine's load.

Why: on a machine whose caches and TLBs other processes have emptied
between two signals (every wake-up of an idle init), each line and page
the path touches is fetched again, and in a virtual machine a TLB miss
walks two page tables. Those fetches, not the instructions, are most of
what an init's wake-up costs beyond the kernel's part
(docs/benchmarks.md, "Instruction counts").

    python3 bench/footprint.py [--signals N] NAME=PATH[@SYMBOL] ...

Each PATH must keep its symbols (the symbol is looked up with nm): for
vigil, a build with CARGO_PROFILE_RELEASE_STRIP=false. Prints, per init,
the median over the signals of each figure.
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as B  # noqa: E402


def symbol(path, name):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name and parts[1] in "Tt":
            return int(parts[0], 16)
    sys.exit(f"footprint: no symbol {name} in {path} (a stripped build?)")


def trace(path, helper, signals, log):
    """Runs PATH -- helper sigrecv as PID 1 under lackey, sends `signals`
    SIGUSR1 (each waited for), then SIGTERM."""
    argv = B.UNSHARE + [shutil.which("valgrind"), "--tool=lackey", "--trace-mem=yes",
                        f"--log-file={log}", path, "--", helper, "sigrecv"]
    rfd, wfd = os.pipe()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=wfd, stderr=subprocess.DEVNULL)
    os.close(wfd)
    try:
        if (B.read_line(rfd, 120) or "").strip() != "R":
            sys.exit(f"footprint: {path}: the child did not start")
        pid = B.wait_init_pid(proc.pid)
        for _ in range(signals):
            os.kill(pid, signal.SIGUSR1)
            if B.read_line(rfd, 30) is None:
                sys.exit(f"footprint: {path}: a signal did not arrive")
        os.kill(pid, signal.SIGTERM)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(rfd)


def turns(log, read_at):
    """The trace cut at each entry to the wait: one list of (kind, address)
    per turn of the init's loop."""
    cur, out = None, []
    with open(log) as f:
        for line in f:
            if len(line) < 4 or line[0] == "=":
                continue
            kind = line[:2].strip()
            if kind not in ("I", "L", "S", "M"):
                continue
            addr = int(line[3:].split(",")[0], 16)
            if kind == "I" and addr == read_at:
                if cur is not None:
                    out.append(cur)
                cur = []
            if cur is not None:
                cur.append((kind, addr))
    return out


def figures(turn):
    code = [a for k, a in turn if k == "I"]
    data = [a for k, a in turn if k != "I"]
    return {
        "instructions": len(code),
        "code lines": len({a >> 6 for a in code}),
        "code pages": len({a >> 12 for a in code}),
        "data lines": len({a >> 6 for a in data}),
        "data pages": len({a >> 12 for a in data}),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--signals", type=int, default=20)
    ap.add_argument("inits", nargs="+", metavar="NAME=PATH[@SYMBOL]")
    args = ap.parse_args()
    helper = B.build_helper(os.path.join(B.BENCH_DIR, ".build"))
    tmp = tempfile.mkdtemp(prefix="vigil-fp-")
    keys = ["instructions", "code lines", "code pages", "data lines", "data pages"]
    print(f"| init | {' | '.join(keys)} |")
    print("|---|" + "---:|" * len(keys))
    try:
        for spec in args.inits:
            name, _, path = spec.partition("=")
            path, _, wait = path.partition("@")
            log = os.path.join(tmp, name + ".lackey")
            trace(path, helper, args.signals, log)
            # The last turns are the signals: the very last is the SIGTERM's
            # (cut off by the exit), the one before the last SIGUSR1's.
            per = [figures(t) for t in turns(log, symbol(path, wait or "read"))[-(args.signals + 1):-1]]
            med = {k: statistics.median(p[k] for p in per) for k in keys}
            print(f"| {name} | " + " | ".join(f"{med[k]:g}" for k in keys) + " |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
