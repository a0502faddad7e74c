#!/usr/bin/env python3
"""Instruction counts of each init's own code, with valgrind's callgrind.

    python3 bench/callgrind.py [--vigil PATH] [--inits a,b] [--also 'NAME=PATH [ARGS]']

Timings on a shared machine are noisy; the number of instructions an init
executes in user space is not. For each init, run as PID 1 under
`valgrind --tool=callgrind` (valgrind's process is the namespace's PID 1 and
runs the init's code), this prints:

- start-up + exit: all instructions of `INIT -- /bin/true`;
- first SIGTERM: (`INIT -- helper sigrecv`, stopped by one SIGTERM to the
  init) minus (`INIT -- helper exit`, whose child exits at once): the
  reading and forwarding of a fresh init's first stop signal, as `docker
  stop` sends it;
- per forwarded signal: (run with 1,000 SIGUSR1, each waited for) minus
  (run with none), divided by 1,000;
- per reaped zombie: (a burst of 2,000 zombies) minus (a burst of 0), / 2,000.

Kernel time (system calls, context switches) is not counted: compare the
system calls with strace. Needs valgrind. The callgrind files are left in
bench/results/callgrind/ for callgrind_annotate (build vigil with
CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=1 for names).
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as B  # noqa: E402


def callgrind(init, cmd, out, signals=0):
    vinit = B.Init(init.name, shutil.which("valgrind"),
                   ["--tool=callgrind", f"--callgrind-out-file={out}", init.path] + init.prefix)
    r = B.NsRun(vinit, cmd, stdout_pipe=True)
    try:
        if cmd[-1] == "sigrecv":
            pid = r.ready(timeout=60)
            for _ in range(signals):
                os.kill(pid, signal.SIGUSR1)
                if B.read_line(r.rfd, 10) is None:
                    raise RuntimeError("a signal did not arrive")
            os.kill(pid, signal.SIGTERM)  # forwarded: the child dies, the init exits
        try:
            r.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise RuntimeError("did not exit")
        err = r.stderr()
    finally:
        r.kill()
    m = re.findall(r"Collected : (\d+)", err)
    if not m:
        raise RuntimeError("no callgrind total: " + err[-300:])
    return int(m[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vigil", default=os.environ.get("VIGIL_BIN", B.DEFAULT_VIGIL))
    ap.add_argument("--inits")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--signals", type=int, default=1000)
    ap.add_argument("--zombies", type=int, default=2000)
    ap.add_argument("--write-docs", action="store_true",
                    help="replace the generated instruction-count table in docs/benchmarks.md")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("bench: valgrind is needed (apt-get install valgrind)")
    helper = B.build_helper(os.path.join(B.BENCH_DIR, ".build"))
    out = os.path.join(B.BENCH_DIR, "results", "callgrind")
    os.makedirs(out, exist_ok=True)
    wanted = set(args.inits.split(",")) if args.inits else None
    inits = [i for i in B.candidate_inits(os.path.abspath(args.vigil))
             if (wanted is None or i.name in wanted) and os.access(i.path, os.X_OK)]
    for spec in args.also:
        name, path, extra = B.parse_also(spec)
        inits.append(B.Init(name, os.path.abspath(path), extra + ["--"]))
    lines = ["| init | start-up + exit (instructions) | first SIGTERM | per forwarded signal | per reaped zombie |",
             "|---|---:|---:|---:|---:|"]
    for line in lines:
        print(line)
    for init in inits:
        f = lambda what: os.path.join(out, f"{init.name}.{what}")
        try:
            t0 = time.monotonic()
            start = callgrind(init, ["/bin/true"], f("true"))
            base = callgrind(init, [helper, "exit"], f("exit"))
            s0 = callgrind(init, [helper, "sigrecv"], f("sig0"), 0)
            s1 = callgrind(init, [helper, "sigrecv"], f(f"sig{args.signals}"), args.signals)
            z0 = callgrind(init, [helper, "burst", "0"], f("burst0"))
            z1 = callgrind(init, [helper, "burst", str(args.zombies)], f(f"burst{args.zombies}"))
            lines.append(f"| {init.name} | {start:,} | {s0 - base:,} | {(s1 - s0) / args.signals:,.0f} | "
                         f"{(z1 - z0) / args.zombies:,.0f} |")
            print(lines[-1], flush=True)
            B.log(f"  {init.name}: {time.monotonic() - t0:.0f} s")
        except (RuntimeError, OSError) as e:
            lines.append(f"| {init.name} | error: {e} | | | |")
            print(lines[-1], flush=True)
    if args.write_docs:
        import datetime
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        ver = B.version_of(os.path.abspath(args.vigil))
        B.write_docs(os.path.join(B.REPO, "docs", "benchmarks.md"),
                     f"`python3 bench/callgrind.py`, {date}, {ver}:\n\n" + "\n".join(lines) + "\n",
                     tag="INSTRUCTIONS")
        B.log("bench: updated docs/benchmarks.md")


if __name__ == "__main__":
    main()
