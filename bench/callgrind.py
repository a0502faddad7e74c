#!/usr/bin/env python3
"""Instruction counts of each init's hot paths, with valgrind's callgrind,
and the instruction budgets that CI holds vigil to.

    python3 bench/callgrind.py [--vigil PATH] [--inits a,b] [--also 'NAME=PATH [ARGS]'] [--write-docs]
    python3 bench/callgrind.py --check bench/budgets.json        # CI: vigil only, about 1 s
    python3 bench/callgrind.py --set-budgets bench/budgets.json --reason '...'

Timings on a shared machine are noisy; the number of instructions an init
executes in user space is not. Each init runs as PID 1 of its own PID
namespace under `valgrind --tool=callgrind` (valgrind's process is the
namespace's PID 1 and runs the init's code), and these paths are measured
(docs/benchmarks.md, "Instruction counts" and "Budgets", says why each is
shaped as it is):

- start-up + exit: all instructions of `INIT -- /bin/true`;
- first SIGTERM forwarded: (`INIT -- helper sigrecv`, stopped by one
  SIGTERM to the init) minus (`INIT -- helper exitnow`), both with
  VIGIL_VERBOSITY=0, so that vigil's exit report is not part of it;
- exit with the report due: the same SIGTERM run with VIGIL_VERBOSITY=1
  (the default, so the report is formatted and written) minus the run with
  VIGIL_VERBOSITY=0: the report alone (a C init writes none: shown as —);
- per forwarded signal: (1,000 SIGUSR1, each waited for, then the SIGTERM)
  minus (the SIGTERM alone), / 1,000;
- per reaped orphan: (a burst of 2,000 zombies) minus (a burst of 0000), / 2,000.

Kernel time (system calls, context switches) is not counted: compare the
system calls with strace. Needs valgrind, root and unshare. The callgrind
files stay in bench/results/callgrind/ for callgrind_annotate and
bench/cgdiff.py (build vigil with CARGO_PROFILE_RELEASE_STRIP=false
CARGO_PROFILE_RELEASE_DEBUG=1 for names).
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as B  # noqa: E402

# The paths, in the order they are printed: key (in bench/budgets.json),
# label, whether the figure is per event (printed with a decimal).
PATHS = [
    ("startup", "start-up + exit", False),
    ("first_sigterm", "first SIGTERM forwarded", False),
    ("report_exit", "exit with the report due", False),
    ("forward", "per forwarded signal", True),
    ("reap", "per reaped orphan", True),
]
LABEL = {key: label for key, label, _ in PATHS}

# --set-budgets: budget = figure + max(HEADROOM × figure, MIN_MARGIN). The
# relative headroom leaves room for small changes that are not regressions;
# the absolute floor keeps a few instructions of difference in a small
# per-event figure (a compiler's different inlining) from failing CI.
HEADROOM = 0.25
MIN_MARGIN = {"startup": 1000, "first_sigterm": 100, "report_exit": 500, "forward": 20, "reap": 10}

# Everything the init sees is fixed, so that a count depends on the code
# alone (docs/benchmarks.md, "Instruction counts"): this environment and
# nothing else (valgrind adds its own few variables, always the same, and
# PWD), `/` as the working directory, and the binaries copied to paths of
# a fixed length.
FIXED_PATH = "/usr/bin:/bin"
QUIET = {"VIGIL_VERBOSITY": "0"}
LOUD = {"VIGIL_VERBOSITY": "1"}


class Failure(RuntimeError):
    pass


# --------------------------------------------------------------------------- the memory cgroup

def memory_hierarchy():
    """(mount point of the memory hierarchy, this process's cgroup path in
    it, whether it is v1), or None."""
    try:
        with open("/proc/self/cgroup") as f:
            cgroups = f.read()
        with open("/proc/self/mountinfo") as f:
            mountinfo = f.read()
    except OSError:
        return None

    def mount(wanted):
        for line in mountinfo.splitlines():
            left, _, right = line.partition(" - ")
            left, right = left.split(" "), right.split(" ")
            if len(left) > 4 and len(right) > 2 and wanted(right[0], right[2]):
                return left[3], left[4]  # root of the hierarchy shown, mount point
        return None

    for line in cgroups.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and "memory" in parts[1].split(","):
            m = mount(lambda fs, opts: fs == "cgroup" and "memory" in opts.split(","))
            return (m[1], parts[2], True) if m else None
    for line in cgroups.splitlines():
        if line.startswith("0::"):
            m = mount(lambda fs, opts: fs == "cgroup2")
            return (m[1], line[3:], False) if m else None
    return None


class Cgroup:
    """A memory cgroup of its own for the measured inits, made for the run
    and removed after it. vigil reads its cgroup's OOM-kill counter at exit
    and, as PID 1, reports any count as OOM kills in its container: in the
    CI's own cgroup, the test suite's OOM tests (which count up the tree
    on cgroup v2) would change the report and so the count. Made at the
    root of the memory hierarchy when possible, so that the path vigil
    reads (and whose length it costs) is the same on every machine;
    else under this process's cgroup; else the run stays where it is, and
    says so."""

    def __init__(self):
        self.dir = None
        self.where = "this process's own cgroup (no memory cgroup could be made)"
        h = memory_hierarchy()
        if h is None:
            return
        point, own, v1 = h
        counter = "memory.oom_control" if v1 else "memory.events"
        name = f"vigil-callgrind-{os.getpid():07d}"  # fixed length: pids have at most 7 digits
        for parent in (point, os.path.join(point, own.lstrip("/"))):
            d = os.path.join(parent, name)
            try:
                os.mkdir(d)
            except OSError:
                continue
            if os.path.exists(os.path.join(d, counter)) and self._can_enter(d):
                self.dir = d
                self.where = f"{d} ({'v1' if v1 else 'v2'})"
                return
            self._rmdir(d)

    @staticmethod
    def _can_enter(d):
        """Whether a process can be moved there (cgroup v2 may refuse, by
        its delegation rules, what mkdir allowed)."""
        def enter():
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        try:
            subprocess.run(["true"], preexec_fn=enter, check=True)
            return True
        except (OSError, subprocess.SubprocessError):
            return False

    def enter(self):
        """In the forked child before exec: move it into the cgroup."""
        if self.dir:
            with open(os.path.join(self.dir, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    @staticmethod
    def _rmdir(d):
        end = time.monotonic() + 5
        while True:
            try:
                os.rmdir(d)
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > end:
                    B.log(f"bench: could not remove {d}")
                    return
                time.sleep(0.05)

    def remove(self):
        if self.dir:
            self._rmdir(self.dir)
            self.dir = None


# --------------------------------------------------------------------------- one run

class Setup:
    """What every run shares: the copies of the binaries, the cgroup, where
    the callgrind files go."""

    def __init__(self, out):
        self.out = out
        os.makedirs(out, exist_ok=True)
        # mkdtemp's names have a fixed length, so the paths the inits see
        # (their own argv[0], the helper's path in the report) do too.
        self.tmp = tempfile.mkdtemp(prefix="vigil-cg-", dir="/tmp")
        self.helper = os.path.join(self.tmp, "helper")
        shutil.copy2(B.build_helper(os.path.join(B.BENCH_DIR, ".build")), self.helper)
        self.slots = 0
        self.cgroup = Cgroup()

    def private_copy(self, path):
        """A copy of a vigil build under a path of fixed length, named
        `vigil` (vigil's argv[0] is part of what it reads)."""
        d = os.path.join(self.tmp, str(self.slots))
        self.slots += 1
        os.mkdir(d)
        dst = os.path.join(d, "vigil")
        shutil.copy2(path, dst)
        return dst

    def close(self):
        self.cgroup.remove()
        shutil.rmtree(self.tmp, ignore_errors=True)


def callgrind(setup, init, cmd, tag, extra_env=None, signals=0, sigterm=False, stdout_pipe=True):
    """Runs `INIT ... CMD` as PID 1 under callgrind; returns (instructions,
    the init's stderr)."""
    base = os.path.join(setup.out, f"{init.name}.{tag}")
    for suffix in (".cg", ".vg", ".err"):
        try:
            os.unlink(base + suffix)
        except FileNotFoundError:
            pass
    argv = B.UNSHARE + [shutil.which("valgrind"), "--tool=callgrind", "--dump-instr=yes",
                        f"--callgrind-out-file={base}.cg", f"--log-file={base}.vg",
                        init.path] + init.prefix + cmd
    env = {"PATH": FIXED_PATH, **(extra_env or {})}
    # stderr: a regular file, never a pipe: vigil waits at exit until its
    # pipes are read empty (let_readers_catch_up), and how many times it
    # looks depends on when the reader gets there. stdout: a pipe (as under
    # a container engine) that is read empty before the init exits, or a
    # file where the command writes at the end (burst).
    err = open(base + ".err", "w+b")
    rfd = wfd = None
    if stdout_pipe:
        rfd, wfd = os.pipe()
        out = wfd
    else:
        out = open(base + ".out", "wb")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=env, cwd="/", preexec_fn=setup.cgroup.enter)
    finally:
        if wfd is not None:
            os.close(wfd)
        else:
            out.close()
    try:
        if cmd[-1] == "sigrecv":
            line = B.read_line(rfd, 60)
            if line is None or line.strip() != "R":
                raise Failure(f"child did not start: {line!r}")
            pid = B.wait_init_pid(proc.pid)
            for _ in range(signals):
                os.kill(pid, signal.SIGUSR1)
                if B.read_line(rfd, 10) is None:
                    raise Failure("a signal did not arrive")
            if sigterm:
                os.kill(pid, signal.SIGTERM)  # forwarded: the child dies of it, the init exits
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise Failure("did not exit")
    finally:
        if proc.poll() is None:
            proc.kill()  # unshare; its PID 1 is killed with the namespace
            proc.wait()
        if rfd is not None:
            os.close(rfd)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        err.close()
    try:
        with open(base + ".vg") as f:
            log = f.read()
    except OSError:
        log = ""
    m = re.findall(r"Collected : (\d+)", log)
    if not m:
        raise Failure("no callgrind total: " + (log or stderr)[-300:])
    return int(m[-1]), stderr


def code_pages(path):
    """{4 KiB code page: instructions executed on it} from a callgrind file
    written with --dump-instr=yes. A call's cost line (the one after
    `calls=`) is the callee's work and counted where the callee runs."""
    pages, addr, npos, call = {}, 0, 1, False
    with open(path) as f:
        for line in f:
            if line.startswith("positions:"):
                npos = len(line.split()) - 1
            elif line.startswith("calls="):
                call = True
            elif line[:1] in "0123456789+-*":
                t = line.split()
                if t[0].startswith("0x"):
                    addr = int(t[0], 16)
                elif t[0][0] in "+-":
                    addr += int(t[0])
                if not call and len(t) > npos:
                    pages[addr >> 12] = pages.get(addr >> 12, 0) + int(t[npos])
                call = False
    return pages


def pages_between(more, less, times):
    """How many code pages a path runs on: those where the run with the
    path (`more`, from `code_pages`) executed at least `times`
    instructions more than the run without it (`times`: how often the
    path ran)."""
    return sum(1 for page, n in more.items() if n - less.get(page, 0) >= times)


def measure(setup, init, signals, zombies, vigil_like):
    """Every path's figure for one init: {key: number}."""
    h = setup.helper
    run = lambda *a, **k: callgrind(setup, init, *a, **k)
    start, _ = run(["/bin/true"], "true")
    # Each pair differs in one thing only: its command lines are as long
    # (`exitnow` and `sigrecv`; the burst sizes written with as many
    # digits), since vigil copies its command line and shows it in the
    # report.
    exit0, _ = run([h, "exitnow"], "exit", QUIET)
    term, quiet_err = run([h, "sigrecv"], "term", QUIET, sigterm=True)
    term_report, loud_err = run([h, "sigrecv"], "term-report", LOUD, sigterm=True)
    fwd, _ = run([h, "sigrecv"], f"sig{signals}", QUIET, signals=signals, sigterm=True)
    z0, _ = run([h, "burst", "0" * len(str(zombies))], "burst0", stdout_pipe=False)
    z1, _ = run([h, "burst", str(zombies)], f"burst{zombies}", stdout_pipe=False)
    if vigil_like:
        # The report pair isolates the report only if it was shown in the
        # one run and nothing was in the other (whatever its wording), and
        # it is the report of a plain stop (an OOM kill counted in the
        # cgroup would make it another).
        if not loud_err.strip() or quiet_err.strip():
            raise Failure("expected the exit report at VIGIL_VERBOSITY=1 and nothing at 0; got "
                          f"{loud_err[-200:]!r} and {quiet_err[-200:]!r}")
        if "OOM" in loud_err:
            raise Failure("the cgroup counted OOM kills, the report is not a plain stop's: "
                          + loud_err[-300:])
    pages = {tag: code_pages(os.path.join(setup.out, f"{init.name}.{tag}.cg"))
             for tag in ("exit", "term", f"sig{signals}")}
    return {
        "first_pages": pages_between(pages["term"], pages["exit"], 1),
        "forward_pages": pages_between(pages[f"sig{signals}"], pages["term"], signals),
        "startup": start,
        "first_sigterm": term - exit0,
        "report_exit": term_report - term,
        "forward": (fwd - term) / signals,
        "reap": (z1 - z0) / zombies,
    }


def fmt(key, v):
    if v is None:
        return "—"
    per_event = next(p for k, _, p in PATHS if k == key)
    return f"{v:,.1f}" if per_event else f"{v:,.0f}"


def measure_repeated(setup, init, args, vigil_like):
    """`args.repeat` measurements of one init: ({key: the median},
    {key: every value})."""
    runs = [measure(setup, init, args.signals, args.zombies, vigil_like) for _ in range(args.repeat)]
    spread = {k: [r[k] for r in runs] for k in runs[0]}
    figures = {k: B.median(v) for k, v in spread.items()}
    if not vigil_like:
        # A C init writes no report: the pair measures nothing there but
        # its own variation (a loop turn more or less, see docs).
        figures["report_exit"] = None
        spread["report_exit"] = [0]
    return figures, spread


def spread_text(values, key):
    lo, hi = min(values), max(values)
    if lo == hi:
        return f"identical ×{len(values)}"
    return f"{fmt(key, lo)}–{fmt(key, hi)} (spread {fmt(key, hi - lo)})"


# --------------------------------------------------------------------------- budgets

def arch():
    return platform.machine()


CODE = ["src", "Cargo.lock", "Cargo.toml", "build.rs"]


def git_commit():
    """The last commit that changed vigil's code in this checkout (not the
    benchmark's or the docs'), `-modified` when the code differs from it."""
    try:
        c = subprocess.run(["git", "-C", B.REPO, "log", "-1", "--format=%h", "--"] + CODE,
                           capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", B.REPO, "diff", "--quiet", "HEAD", "--"] + CODE).returncode != 0
        return (c or "unknown") + ("-modified" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load_budgets(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        sys.exit(f"bench: cannot read {path}: {e}")


def shown(path):
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def budgets_here(path):
    """This architecture's budgets in the file, or None."""
    return load_budgets(path).get("budgets", {}).get(arch()) or None


def check(setup, vigil, args):
    """--check: vigil's figures against the budgets for this architecture.
    Exit status 1 when a path exceeds its budget."""
    budgets = budgets_here(args.check)
    t0 = time.monotonic()
    figures, spread = measure_repeated(setup, vigil, args, True)
    took = time.monotonic() - t0
    print(f"instruction budgets ({arch()}, {shown(args.check)}), "
          f"{B.version_of(vigil.path)}, {vigil.orig}:")
    print(f"  {'path':<28} {'figure':>10} {'budget':>10} {'difference':>18}")
    over = []
    for key, label, _ in PATHS:
        b = budgets.get(key)
        if b is None:
            print(f"  {label:<28} {fmt(key, figures[key]):>10} {'(none)':>10}")
            continue
        budget = b["budget"]
        diff = figures[key] - budget
        pct = 100.0 * diff / budget if budget else 0.0
        verdict = "OVER BUDGET" if diff > 0 else "ok"
        sign = "+" if diff > 0 else ""
        print(f"  {label:<28} {fmt(key, figures[key]):>10} {fmt(key, budget):>10} "
              f"{sign + fmt(key, diff):>10} ({sign}{pct:.1f} %)  {verdict}")
        if diff > 0:
            over.append(key)
        elif figures[key] < b.get("figure", budget) * (1 - HEADROOM):
            print(f"  {'':<28} well below the figure the budget was set from "
                  f"({fmt(key, b['figure'])}): lower it with --set-budgets")
        if args.repeat > 1:
            print(f"  {'':<28} {args.repeat} runs: {spread_text(spread[key], key)}")
    print(f"  ({took:.0f} s; cgroup: {setup.cgroup.where})")
    if over:
        print("instruction budgets: exceeded: " + ", ".join(LABEL[k] for k in over)
              + ". Find the cost with bench/cgdiff.py (docs/benchmarks.md, Instruction counts); raising"
              " a budget is a reviewed change to bench/budgets.json with the reason in the commit"
              " (docs/benchmarks.md, Budgets).")
        return 1
    print("instruction budgets: every path within its budget")
    return 0


def set_budgets(setup, vigil, args):
    """--set-budgets: measure vigil (`--repeat` times, which must agree),
    and write this architecture's budgets with the headroom."""
    if not args.reason:
        sys.exit("bench: --set-budgets needs --reason '...' (it is kept with the budgets)")
    figures, spread = measure_repeated(setup, vigil, args, True)
    commit = git_commit()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    data = load_budgets(args.set_budgets)
    data.setdefault("about", "Instruction budgets of vigil's hot paths, per architecture: "
                    "python3 bench/callgrind.py --check bench/budgets.json fails when a path exceeds "
                    "its budget. Set with --set-budgets; raising one is a reviewed change with the "
                    "reason in the commit (docs/benchmarks.md, Budgets).")
    entries = {}
    for key, label, per_event in PATHS:
        vals = spread[key]
        fig = max(vals)
        margin = max(HEADROOM * fig, MIN_MARGIN[key])
        budget = math.ceil(fig + margin) if not per_event else math.ceil((fig + margin) * 10) / 10
        entries[key] = {
            "budget": budget,
            "figure": round(fig, 1) if per_event else int(fig),
            "runs": args.repeat,
            "spread": round(max(vals) - min(vals), 1),
            "commit": commit,
            "date": date,
            "reason": args.reason,
        }
        print(f"  {label:<28} figure {fmt(key, fig):>10}  budget {fmt(key, budget):>10}  "
              f"({spread_text(vals, key)})")
    data.setdefault("budgets", {})[arch()] = entries
    with open(args.set_budgets, "w") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")
    B.log(f"bench: wrote the {arch()} budgets to {args.set_budgets}")
    return 0


# --------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vigil", default=os.environ.get("VIGIL_BIN", B.DEFAULT_VIGIL))
    ap.add_argument("--inits", help="comma-separated subset (default: all installed)")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH",
                    help="also measure another vigil build (repeatable); `NAME='PATH ARGS'` puts ARGS "
                         "before its --: `vigil-json='PATH --log-format json'`")
    ap.add_argument("--signals", type=int, default=1000)
    ap.add_argument("--zombies", type=int, default=2000)
    ap.add_argument("--repeat", type=int, help="measure everything N times and show how the figures "
                    "agree (default 1; --set-budgets: 3)")
    ap.add_argument("--write-docs", action="store_true",
                    help="replace the generated instruction-count table in docs/benchmarks.md")
    ap.add_argument("--check", metavar="BUDGETS", help="vigil only: compare with the budgets in this "
                    "file; exit 1 when a path exceeds its budget")
    ap.add_argument("--set-budgets", metavar="BUDGETS", help="vigil only: write this architecture's "
                    "budgets (figure + 25 %%, at least a small margin) to this file")
    ap.add_argument("--reason", help="with --set-budgets: why, kept in the file")
    args = ap.parse_args()
    if args.repeat is None:
        args.repeat = 3 if args.set_budgets else 1
    if args.check and not budgets_here(args.check):
        # The counts are this architecture's instructions: another one's
        # budgets would say nothing about them, and a host the budgets were
        # not set for has nothing to be held to. Not a failure.
        print(f"instruction budgets: none for {arch()} in {shown(args.check)}: skipped (they are "
              "set per architecture, with --set-budgets on such a host)")
        return 0
    if not shutil.which("valgrind"):
        sys.exit("bench: valgrind is needed (apt-get install valgrind)")
    if os.path.exists("/dev/termination-log"):
        # vigil's default termination log: it would format and write the
        # report in runs where the log does not show it.
        sys.exit("bench: /dev/termination-log exists here; vigil would write its report there in "
                 "every run, and the figures would not be the ones the budgets are set from")
    vigil_path = os.path.abspath(args.vigil)
    if (args.check or args.set_budgets) and not os.access(vigil_path, os.X_OK):
        sys.exit(f"bench: no vigil at {vigil_path} (cargo build --release, or --vigil PATH)")

    setup = Setup(os.path.join(B.BENCH_DIR, "results", "callgrind"))
    try:
        def vigil_init(name, path, extra=()):
            i = B.Init(name, setup.private_copy(path), list(extra) + ["--"])
            i.orig = shown(path)
            return i

        if args.check:
            return check(setup, vigil_init("vigil", vigil_path), args)
        if args.set_budgets:
            return set_budgets(setup, vigil_init("vigil", vigil_path), args)

        wanted = set(args.inits.split(",")) if args.inits else None
        inits = []
        for i in B.candidate_inits(vigil_path):
            if (wanted is None or i.name in wanted) and os.access(i.path, os.X_OK):
                inits.append(vigil_init(i.name, i.path) if i.name == "vigil" else i)
        for spec in args.also:
            name, path, extra, env = B.parse_also(spec)
            if env:
                # Each path's environment is fixed (see the docs): a
                # variable of the init's own would change every count.
                sys.exit(f"bench: --also {spec}: no variables here; the counts need a fixed environment")
            inits.append(vigil_init(name, os.path.abspath(path), extra))
        vigils = {"vigil"} | {s.partition("=")[0] for s in args.also}

        head = ("| init | " + " | ".join(label for _, label, _ in PATHS)
                + " | SIGTERM to exit | code pages: first SIGTERM | code pages: per forwarded signal |")
        lines = [head, "|---|" + "---:|" * (len(PATHS) + 3)]
        for line in lines:
            print(line)
        notes = []
        for init in inits:
            t0 = time.monotonic()
            try:
                figures, spread = measure_repeated(setup, init, args, init.name in vigils)
                total = figures["first_sigterm"] + (figures["report_exit"] or 0)
                lines.append(f"| {init.name} | " + " | ".join(fmt(k, figures[k]) for k, _, _ in PATHS)
                             + f" | {total:,.0f} | {figures['first_pages']:.0f} | {figures['forward_pages']:.0f} |")
                if args.repeat > 1:
                    varying = [f"{LABEL[k]} {spread_text(spread[k], k)}" for k, _, _ in PATHS
                               if min(spread[k]) != max(spread[k])]
                    notes.append(f"{init.name}: {args.repeat} runs, "
                                 + ("; ".join(varying) if varying else "every figure identical"))
            except (Failure, RuntimeError, OSError) as e:
                lines.append(f"| {init.name} | error: {e} |" + " |" * (len(PATHS) + 2))
            print(lines[-1], flush=True)
            B.log(f"  {init.name}: {time.monotonic() - t0:.0f} s")
        for n in notes:
            print(n)
        B.log(f"bench: cgroup: {setup.cgroup.where}")
        if args.write_docs:
            date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            ver = B.version_of(vigil_path)
            block = (f"`python3 bench/callgrind.py --repeat {args.repeat} --write-docs`, {date}, {ver}, "
                     f"code at {git_commit()} (medians):\n\n"
                     + "\n".join(lines) + "\n")
            B.write_docs(os.path.join(B.REPO, "docs", "benchmarks.md"), block, tag="INSTRUCTIONS")
            B.log("bench: updated docs/benchmarks.md")
        return 0
    finally:
        setup.close()


if __name__ == "__main__":
    sys.exit(main())
