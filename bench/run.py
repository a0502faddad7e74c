#!/usr/bin/env python3
"""Benchmark vigil against tini, tini-static, dumb-init and catatonit.

Run (as root, from the repository root):

    python3 bench/run.py            # full run, a few minutes on 2 cores
    python3 bench/run.py --quick    # smoke run, well under a minute

Every init runs as PID 1 of its own PID namespace
(`unshare --pid --fork --mount-proc INIT ... CMD`), and the inits are
interleaved within each measurement (A B C A B C ...). Results: a Markdown
table on stdout, JSON and an SVG chart of the ratios to vigil in --out
(default bench/results, or bench/results/quick with --quick). See
docs/benchmarks.md for what each number means.

Only the Python standard library and a C compiler (for bench/helper.c) are
needed; nothing is installed. Inits that are not present are skipped.
"""

import argparse
import contextlib
import datetime
import json
import os
import platform
import random
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)

def host_musl_target():
    """This machine's static musl target (x86_64-unknown-linux-musl,
    aarch64-unknown-linux-musl): what vigil ships as here, as
    scripts/host-target.sh names it."""
    return f"{platform.machine()}-unknown-linux-musl"


DEFAULT_VIGIL = os.path.join(REPO, "target", host_musl_target(), "release", "vigil")
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"]


# --------------------------------------------------------------------------- inits

class Init:
    def __init__(self, name, path, prefix, note="", env=None):
        self.name = name
        self.path = path
        self.prefix = prefix  # argv before the command
        self.note = note
        self.env = env or {}  # variables set for this init alone

    def argv(self, cmd):
        return [self.path] + self.prefix + cmd

    def environ(self):
        """The environment this init starts with: the run's, plus its own
        variables (through `unshare`, which passes them on)."""
        return {**os.environ, **self.env}


def parse_also(spec):
    """`NAME=[VAR=VALUE...] PATH [ARG...]`: a binary called like vigil, with
    its own variables and its own options before `--`
    (`vigil-json=target/.../vigil --log-format json`,
    `quiet=VIGIL_VERBOSITY=0 target/.../vigil`)."""
    name, _, rest = spec.partition("=")
    words = rest.split()
    env = {}
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        var, _, value = words.pop(0).partition("=")
        env[var] = value
    return name, (words[0] if words else ""), words[1:], env


def candidate_inits(vigil_path):
    return [
        Init("vigil", vigil_path, ["--"]),
        Init("tini-static", "/usr/bin/tini-static", ["--"]),
        Init("tini", "/usr/bin/tini", ["--"]),
        # dumb-init has no `--`; by default it runs the child in a new session
        # (setsid) and forwards signals to the child's whole process group.
        Init("dumb-init", "/usr/bin/dumb-init", [],
             "default mode: setsid, signals go to the child's process group"),
        Init("catatonit", "/usr/bin/catatonit", ["--"]),
    ]


def is_static(path):
    """True when the ELF file has no PT_INTERP program header."""
    try:
        with open(path, "rb") as f:
            hdr = f.read(64)
            if hdr[:4] != b"\x7fELF" or hdr[4] != 2:
                return None
            phoff, = struct.unpack_from("<Q", hdr, 32)
            phentsize, phnum = struct.unpack_from("<HH", hdr, 54)
            f.seek(phoff)
            ph = f.read(phentsize * phnum)
        for i in range(phnum):
            p_type, = struct.unpack_from("<I", ph, i * phentsize)
            if p_type == 3:  # PT_INTERP
                return False
        return True
    except OSError:
        return None


def version_of(path):
    try:
        r = subprocess.run([path, "--version"], capture_output=True, timeout=3, text=True)
        out = (r.stdout or r.stderr).strip().splitlines()
        return out[0] if out else ""
    except (OSError, subprocess.SubprocessError):
        return ""


# --------------------------------------------------------------------------- helpers

def c_compiler():
    """$CC, else the system's `cc` or `gcc`."""
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"


def build_helper(build_dir):
    src = os.path.join(BENCH_DIR, "helper.c")
    os.makedirs(build_dir, exist_ok=True)
    out = os.path.join(build_dir, "helper")
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(src):
        return out
    cc = c_compiler()
    base = [cc, "-O2", "-Wall", "-o", out, src]
    # Static when possible: the helper forks a lot, fewer mappings = cheaper forks.
    r = subprocess.run(base + ["-static"], capture_output=True, text=True)
    if r.returncode != 0:
        r = subprocess.run(base, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("bench: cannot compile bench/helper.c:\n" + r.stderr)
    return out


REFERENCE = "reference (bench/refinit.c)"


def build_reference(build_dir):
    """`--reference`: bench/refinit.c, the least a signalfd init does, built
    against glibc (`ref-glibc`) and against the musl that vigil's release
    build links, the one rustup ships for the host's musl target
    (`ref-musl`). Same code, two C libraries: what the library costs on a
    path, beside what vigil's own work costs (docs/benchmarks.md, "The
    reference inits"). And `ref-musl-warm`, ref-musl after 1 ms
    of CPU at start. The targets never count them."""
    src = os.path.join(BENCH_DIR, "refinit.c")
    os.makedirs(build_dir, exist_ok=True)
    cc = c_compiler()
    built = []

    def run(argv):
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode != 0:
            log(f"bench: {' '.join(argv[:2])} ...: {r.stderr.strip()[:300]}")
        return r.returncode == 0

    glibc = os.path.join(build_dir, "ref-glibc")
    if run([cc, "-O2", "-static", "-o", glibc, src]):
        built.append(Init("ref-glibc", glibc, ["--"], REFERENCE))
    try:
        sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sysroot = ""
    crt = os.path.join(sysroot, "lib", "rustlib", host_musl_target(), "lib", "self-contained")
    if not os.path.exists(os.path.join(crt, "libc.a")):
        log(f"bench: no musl for {host_musl_target()} under {crt}: ref-musl skipped")
        return built
    # The system's headers, musl's library: refinit uses only what the two
    # lay out alike (sigset_t, the kernel's signalfd_siginfo); no fortified
    # or stack-protected calls, which are glibc's.
    # ref-musl-warm: the same, after 1 ms of CPU at start, about what glibc's
    # start costs on some CPUs; what that alone does to a fresh init's first
    # signal (refinit.c; docs/benchmarks.md, "The reference inits").
    for name, defines in (("ref-musl", []), ("ref-musl-warm", ["-DSTART_CPU_US=1000"])):
        obj = os.path.join(build_dir, name + ".o")
        musl = os.path.join(build_dir, name)
        if run([cc, "-O2", "-U_FORTIFY_SOURCE", "-fno-stack-protector", *defines, "-c", src, "-o", obj]) and run(
                [cc, "-static", "-nostdlib", "-nostartfiles", os.path.join(crt, "crt1.o"),
                 os.path.join(crt, "crti.o"), obj, os.path.join(crt, "libc.a"), os.path.join(crt, "crtn.o"),
                 "-lgcc", "-o", musl]):
            built.append(Init(name, musl, ["--"], REFERENCE))
    return built


def children_of(pid):
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    kids += [int(x) for x in f.read().split()]
            except OSError:
                pass
    except OSError:
        pass
    return kids


def wait_init_pid(unshare_pid, timeout=5.0):
    """Host pid of the namespace's PID 1: the child of the unshare process."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = children_of(unshare_pid)
        if kids:
            return kids[0]
        time.sleep(0.001)
    raise RuntimeError("no child of unshare after %.0fs" % timeout)


def comm_of(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def proc_status(pid):
    d = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            d[k] = v.strip()
    return d


def read_line(fd, timeout):
    """Read one line from a raw fd with a timeout (None on timeout/EOF)."""
    buf = b""
    end = time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        left = end - time.monotonic()
        if left <= 0:
            return None
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            return None
        b = os.read(fd, 1)
        if not b:
            return None
        buf += b
    return buf.decode()


class NsRun:
    """One `unshare ... INIT ... CMD` process."""

    def __init__(self, init, cmd, stdout_pipe=False, stderr_pipe=False):
        """stdout_pipe: the init's stdout is a pipe (`rfd`) for the child's
        records. stderr_pipe: its stderr too, `efd`, which the caller
        drains, as a container engine does; else a file."""
        self.err = None if stderr_pipe else tempfile.TemporaryFile()
        self.rfd = self.efd = None
        wfd = ewfd = None
        if stdout_pipe:
            self.rfd, wfd = os.pipe()
        if stderr_pipe:
            self.efd, ewfd = os.pipe()
        self.proc = subprocess.Popen(
            UNSHARE + (init.argv(cmd) if init else cmd),
            env=init.environ() if init else None,
            stdin=subprocess.DEVNULL,
            stdout=wfd if wfd is not None else subprocess.DEVNULL,
            stderr=ewfd if ewfd is not None else self.err,
        )
        for fd in (wfd, ewfd):
            if fd is not None:
                os.close(fd)
        self.pid = None

    def ready(self, timeout=10.0):
        line = read_line(self.rfd, timeout)
        if line is None or line.strip() != "R":
            raise RuntimeError("child did not start: %r; stderr: %s" % (line, self.stderr()))
        self.pid = wait_init_pid(self.proc.pid)
        return self.pid

    def stderr(self):
        if self.err is None:  # a pipe: what is in it now
            os.set_blocking(self.efd, False)
            try:
                return os.read(self.efd, 1 << 16).decode(errors="replace")[-2000:]
            except OSError:
                return ""
        self.err.seek(0)
        return self.err.read().decode(errors="replace")[-2000:]

    def kill(self):
        try:
            if self.pid is None:
                self.pid = wait_init_pid(self.proc.pid, 1.0)
            os.kill(self.pid, signal.SIGKILL)  # kills the whole namespace
        except (OSError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.rfd, self.efd):
            if fd is not None:
                os.close(fd)
        self.rfd = self.efd = None
        if self.err is not None:
            self.err.close()


# --------------------------------------------------------------------------- statistics

def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    k = max(0, min(len(xs) - 1, int(-(-p * len(xs) // 100)) - 1))  # nearest rank
    return xs[k]


# --------------------------------------------------------------------------- measurements

class Meter:
    """CPU time the rest of the machine used while a measurement ran: all
    busy CPU time (/proc/stat, steal included) less our own and our
    descendants' (os.times; every process of a run is eventually reaped up
    the chain to us). In CPUs: 1.0 = one CPU busy with other work throughout."""

    HZ = os.sysconf("SC_CLK_TCK")

    @staticmethod
    def _busy():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal ...
        return (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / Meter.HZ

    @staticmethod
    def _own():
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def __init__(self):
        self.t, self.b, self.o = time.monotonic(), self._busy(), self._own()

    def other_cpus(self):
        dt = time.monotonic() - self.t
        if dt <= 0:
            return 0.0
        return max(0.0, ((self._busy() - self.b) - (self._own() - self.o)) / dt)


# How precisely a run pins vigil's ratio to the best C init on the signal
# figures: more rounds are run until the ratio's 95 % interval lies within
# this fraction of it either side, or until MAX_EXTRA times the rounds asked.
PRECISION = 0.05
MAX_EXTRA = 3


def precise(inits, samples):
    """Whether vigil's samples and the best contender's (by median; the
    reference inits do not count) give a ratio of medians whose 95 %
    interval is within PRECISION of it. `samples` maps a name to its
    samples. True when there is nothing to compare."""
    if not samples.get("vigil"):
        return True
    others = [i.name for i in inits if i.name != "vigil" and i.note != REFERENCE and samples.get(i.name)]
    if not others:
        return True
    best = min(others, key=lambda n: median(samples[n]))
    r = median(samples["vigil"]) / median(samples[best])
    ci = boot_ci(lambda a, c: median(a) / median(c), [samples["vigil"], samples[best]], n=300)
    return ci is not None and ci[0] >= r * (1 - PRECISION) and ci[1] <= r * (1 + PRECISION)


AUTOGROUP = "/proc/sys/kernel/sched_autogroup_enabled"


@contextlib.contextmanager
def autogroups_off():
    """Autogroups off for the run, and put back after. With them the host
    schedules each session as a group of its own, and a child in a session
    of its own (dumb-init's) wakes as if its CPU were idle, beside everything
    else on it: no container sees that, since a container's processes
    compete in the container's cgroup, where autogroups do not apply."""
    try:
        with open(AUTOGROUP) as f:
            was = f.read().strip()
    except OSError:
        was = None
    if was == "1":
        with open(AUTOGROUP, "w") as f:
            f.write("0")
        log("bench: autogroups off for the run")
    try:
        yield
    finally:
        if was == "1":
            with open(AUTOGROUP, "w") as f:
                f.write(was)


def rotated(seq, r):
    """Round r starts r places further along (A B C, B C A, C A B, ...): still
    interleaved, and no init always goes first or right after another."""
    seq = list(seq)
    k = r % len(seq) if seq else 0
    return seq[k:] + seq[:k]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def spawn_time(argv, devnull, env):
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env,
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0),
                                       (os.POSIX_SPAWN_DUP2, devnull, 1),
                                       (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, st = os.waitpid(pid, 0)
    t1 = time.perf_counter_ns()
    return t1 - t0, os.waitstatus_to_exitcode(st)


def bench_startup(inits, rounds):
    log(f"start-up: {rounds} rounds of INIT -- /bin/true vs /bin/true")
    unshare = shutil.which("unshare")
    devnull = os.open(os.devnull, os.O_RDWR)
    names = ["(bare)"] + [i.name for i in inits]
    argvs = {"(bare)": [unshare] + UNSHARE[1:] + ["/bin/true"]}
    envs = {"(bare)": os.environ}
    for i in inits:
        argvs[i.name] = [unshare] + UNSHARE[1:] + i.argv(["/bin/true"])
        envs[i.name] = i.environ()
    times = {n: [] for n in names}
    fails = {n: 0 for n in names}
    for n in names:  # warm the page cache
        spawn_time(argvs[n], devnull, envs[n])
    for r in range(rounds):
        for n in rotated(names, r):
            dt, rc = spawn_time(argvs[n], devnull, envs[n])
            times[n].append(dt)
            if rc != 0:
                fails[n] += 1
    os.close(devnull)
    bare = median(times["(bare)"])
    res = {"(bare)": {"startup_ms": bare / 1e6, "raw_startup_ns": times["(bare)"]}}
    for i in inits:
        m = median(times[i.name])
        res[i.name] = {
            "raw_startup_ns": times[i.name],
            "startup_ms": m / 1e6,
            "startup_overhead_ms": (m - bare) / 1e6,
            "startup_failures": fails[i.name],
        }
    return res


def bench_forward(inits, helper, rounds, n_idle, n_bursts, burst_len, gap_us, cpu=None):
    saved = os.sched_getaffinity(0)
    if cpu is not None:  # everything (sender, inits, receivers) on one CPU
        os.sched_setaffinity(0, {cpu})
    try:
        return _bench_forward(inits, helper, rounds, n_idle, n_bursts, burst_len, gap_us)
    finally:
        os.sched_setaffinity(0, saved)


def _bench_forward(inits, helper, rounds, n_idle, n_bursts, burst_len, gap_us, sender_cpu=None):
    log(f"signal forwarding: {rounds} rounds x ({n_idle} idle + {n_bursts}x{burst_len} back-to-back), "
        "inits side by side, interleaved signal by signal")
    pin_sender = None if sender_cpu is None else (lambda: os.sched_setaffinity(0, {sender_cpu}))
    acc = {i.name: {"idle": [], "b2b": [], "lost": 0, "dup": 0, "sent": 0, "cpu": 0, "errors": []}
           for i in inits}
    # The rounds asked for, then more while the back-to-back figure (the
    # noisier of the two) is not yet pinned down (`precise`).
    r = -1
    while True:
        r += 1
        if r >= rounds and (r >= rounds * (1 + MAX_EXTRA) or sender_cpu is not None
                            or precise(inits, {n: a["b2b"] for n, a in acc.items()})):
            break
        runs = {}
        try:
            for init in rotated(inits, r):
                runs[init.name] = NsRun(init, [helper, "sigrecv"], stdout_pipe=True)
            argv = [helper, "send", str(n_idle), str(gap_us), str(n_bursts), str(burst_len)]
            for name, run in list(runs.items()):
                try:
                    argv += [str(run.ready()), str(run.rfd)]
                except RuntimeError as e:  # this init failed: the others go on
                    acc[name]["errors"].append(str(e)[:300])
                    run.kill()
                    del runs[name]
            if not runs:
                continue
            cpu0 = {name: cpu_ns(run.pid) for name, run in runs.items()}
            out = subprocess.run(argv, pass_fds=[run.rfd for run in runs.values()],
                                 capture_output=True, text=True, timeout=600, preexec_fn=pin_sender)
            cpu1 = {name: cpu_ns(run.pid) for name, run in runs.items()}
            if out.returncode != 0:
                raise RuntimeError("sender failed: " + out.stderr.strip())
            for name, d in zip(runs, json.loads(out.stdout)):
                a = acc[name]
                a["cpu"] += cpu1[name] - cpu0[name]
                a["idle"] += d["idle_ns"]
                a["b2b"] += d["b2b_ns"]
                a["lost"] += d["lost_idle"] + d["lost_b2b"]
                a["dup"] += d["dup_idle"] + d["dup_b2b"]
                a["sent"] += d["idle_sent"] + d["b2b_sent"]
        except (RuntimeError, subprocess.SubprocessError, ValueError) as e:
            for a in acc.values():
                a["errors"].append(str(e)[:300])
        finally:
            for run in runs.values():
                run.kill()
    if r > rounds:
        log(f"  {r} rounds, to pin vigil's ratios within ±{PRECISION:.0%}")
    res = {}
    for name, a in acc.items():
        us = lambda v: None if v is None else v / 1e3
        res[name] = {
            "fwd_rounds_run": r,
            "fwd_idle_median_us": us(median(a["idle"])),
            "fwd_idle_p99_us": us(pct(a["idle"], 99)),
            "fwd_b2b_median_us": us(median(a["b2b"])),
            "fwd_b2b_p99_us": us(pct(a["b2b"], 99)),
            "raw_fwd_idle_ns": a["idle"],
            "raw_fwd_b2b_ns": a["b2b"],
            "fwd_init_cpu_us_per_signal": a["cpu"] / a["sent"] / 1e3 if a["sent"] else None,
            "signals_sent": a["sent"],
            "signals_lost": a["lost"],
            "signals_duplicated": a["dup"],
            "fwd_errors": a["errors"],
        }
    return res


def bench_busy(inits, helper, rounds, n_idle, gap_us, cpu, hogs=2):
    """Forwarding on a busy CPU, as in a container whose application keeps
    its CPU busy when `docker stop` comes: the inits, their children and
    HOGS spinning processes (the application's busy threads) share CPU
    `cpu`; the sender runs on another CPU, as a container engine does. The
    init must get onto its busy CPU to forward; how soon depends on when
    the scheduler lets a waking task preempt a running one."""
    others = sorted(os.sched_getaffinity(0) - {cpu})
    if not others:
        log("busy CPU: needs two CPUs; skipped")
        return {}
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    spin = []
    try:
        spin = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(hogs)]
        log(f"busy CPU: {hogs} spinning processes on CPU {cpu}, the sender on CPU {others[-1]}")
        part = _bench_forward(inits, helper, rounds, n_idle, 0, 1, gap_us, sender_cpu=others[-1])
    finally:
        for h in spin:
            h.kill()
            h.wait()
        os.sched_setaffinity(0, saved)
    out = {}
    for name, d in part.items():
        raw = d["raw_fwd_idle_ns"]
        out[name] = {
            "busy_median_us": d["fwd_idle_median_us"],
            "busy_p99_us": d["fwd_idle_p99_us"],
            "busy_over_1ms_pct": 100.0 * sum(1 for v in raw if v > 1_000_000) / len(raw) if raw else None,
            "raw_busy_ns": raw,
            "busy_lost": d["signals_lost"],
            "busy_duplicated": d["signals_duplicated"],
            "busy_errors": d["fwd_errors"],
        }
    return out


def bench_first(inits, helper, rounds, delay_us, cpu=None):
    saved = os.sched_getaffinity(0)
    if cpu is not None:  # as for forwarding: the work on the path, not the scheduler's placement
        os.sched_setaffinity(0, {cpu})
    try:
        return _bench_first(inits, helper, rounds, delay_us)
    finally:
        os.sched_setaffinity(0, saved)


def _bench_first(inits, helper, rounds, delay_us):
    """The first signal of a fresh init, as `docker stop` or a pod deletion
    sends it: a new init per sample, its child (`helper termrecv`) ready and
    idle, one SIGTERM to the init's host pid DELAY later. Measured: when the
    child took the signal, and when the init had exited (the child dies of
    the SIGTERM), both from just before the kill."""
    log(f"first signal: {rounds} rounds x one SIGTERM to a fresh INIT -- helper termrecv, "
        f"{delay_us / 1000:g} ms after the child is ready")
    acc = {i.name: {"fwd": [], "exit": [], "lost": 0, "dup": 0, "hang": 0, "status": {}, "errors": []}
           for i in inits}
    # The rounds asked for, then more in steps of a tenth while either
    # figure is not yet pinned down (`precise`).
    r = -1
    while True:
        r += 1
        if r >= rounds and (r >= rounds * (1 + MAX_EXTRA) or (r - rounds) % max(1, rounds // 10) == 0 and all(
                precise(inits, {n: a[k] for n, a in acc.items()}) for k in ("fwd", "exit"))):
            break
        for init in rotated(inits, r):
            a = acc[init.name]
            run = NsRun(init, [helper, "termrecv"], stdout_pipe=True, stderr_pipe=True)
            try:
                pid = run.ready()
                out = subprocess.run([helper, "first", str(delay_us), str(pid), str(run.rfd), str(run.efd)],
                                     pass_fds=[run.rfd, run.efd], capture_output=True, text=True,
                                     timeout=60)
                if out.returncode != 0:
                    raise RuntimeError("sender failed: " + out.stderr.strip())
                d = json.loads(out.stdout)
                if d["hang"]:
                    a["hang"] += 1
                else:
                    a["exit"].append(d["exit_ns"])
                if d["arrivals"] == 0:
                    a["lost"] += 1
                else:
                    a["fwd"].append(d["fwd_ns"])
                    a["dup"] += d["arrivals"] - 1
                try:
                    run.proc.wait(timeout=10)
                    st = run.proc.returncode
                    st = f"signal {-st}" if st < 0 else str(st)
                except subprocess.TimeoutExpired:
                    st = "none"
                a["status"][st] = a["status"].get(st, 0) + 1
            except (RuntimeError, subprocess.SubprocessError, ValueError, KeyError) as e:
                a["errors"].append(str(e)[:300])
            finally:
                run.kill()
    us = lambda v: None if v is None else v / 1e3
    if r > rounds:
        log(f"  {r} rounds, to pin vigil's ratios within ±{PRECISION:.0%}")
    return {name: {
        "first_rounds_run": r,
        "first_fwd_median_us": us(median(a["fwd"])),
        "first_fwd_p99_us": us(pct(a["fwd"], 99)),
        "first_exit_median_us": us(median(a["exit"])),
        "first_exit_p99_us": us(pct(a["exit"], 99)),
        "raw_first_fwd_ns": a["fwd"],
        "raw_first_exit_ns": a["exit"],
        "first_lost": a["lost"],
        "first_duplicated": a["dup"],
        "first_hangs": a["hang"],
        "first_exit_status": a["status"],
        "first_errors": a["errors"],
    } for name, a in acc.items()}


def run_helper_json(init, helper, args, timeout):
    run = NsRun(init, [helper] + args, stdout_pipe=True)
    try:
        line = read_line(run.rfd, timeout)
        if line is None:
            raise RuntimeError("no result; stderr: " + run.stderr())
        try:
            run.proc.wait(timeout=30)  # the init must exit after its child
        except subprocess.TimeoutExpired:
            pass
        return json.loads(line), run.proc.returncode
    finally:
        run.kill()


def cpu_ns(pid):
    """CPU time (user + system) a process has used: CLOCK_PROCESS_CPUTIME of
    another process, as clock_getcpuclockid(3) builds it."""
    return time.clock_gettime_ns(((~pid) << 3) | 2)


def bench_burst(inits, helper, rounds, n):
    log(f"burst reaping: {rounds} rounds x {n} zombies")
    acc = {i.name: {"rate": [], "ms": [], "cpu": [], "left": 0, "handed": [], "errors": []} for i in inits}
    for r in range(rounds):
        for init in rotated(inits, r):
            a = acc[init.name]
            try:
                d, _ = run_helper_json(init, helper, ["burst", str(n)], timeout=120)
                a["handed"].append(d["n"])
                a["left"] = max(a["left"], d["left"])
                if d["left"] == 0 and d["reap_ns"] > 0:
                    a["rate"].append(d["n"] / (d["reap_ns"] / 1e9))
                a["ms"].append(d["reap_ns"] / 1e6)
                a["cpu"].append(d["init_cpu_ns"] / d["n"] / 1e3)
            except (RuntimeError, ValueError) as e:
                a["errors"].append(str(e)[:300])
    return {name: {
        "burst_zombies": min(a["handed"]) if a["handed"] else None,
        "burst_rate_per_s": median(a["rate"]),
        "burst_reap_ms": median(a["ms"]),
        "burst_reap_ms_all": a["ms"],
        "raw_burst_rate_per_s": a["rate"],
        "burst_init_cpu_us_per_zombie": median(a["cpu"]),
        "burst_left": a["left"] if a["handed"] else None,
        "burst_errors": a["errors"],
    } for name, a in acc.items()}


def bench_stream(inits, helper, rounds, n):
    log(f"orphan stream: {rounds} round(s) x {n} orphans")
    acc = {i.name: {"peak": [], "mean": [], "cpu": [], "left": 0, "rate": [], "errors": [], "ok": False}
           for i in inits}
    for r in range(rounds):
        for init in rotated(inits, r):
            a = acc[init.name]
            try:
                d, _ = run_helper_json(init, helper, ["stream", str(n)], timeout=600)
                a["ok"] = True
                a["peak"].append(d["peak"])
                a["mean"].append(d["mean"])
                a["left"] = max(a["left"], d["left"])
                a["rate"].append(d["n"] / (d["stream_ns"] / 1e9))
                a["cpu"].append(d["init_cpu_ns"] / d["n"] / 1e3)
            except (RuntimeError, ValueError) as e:
                a["errors"].append(str(e)[:300])
    return {name: {
        "stream_orphans": n,
        "stream_peak_unreaped": max(a["peak"]) if a["peak"] else None,
        "stream_mean_unreaped": median(a["mean"]),
        "stream_left": a["left"] if a["ok"] else None,
        "stream_rate_per_s": median(a["rate"]),
        "stream_init_cpu_us_per_orphan": median(a["cpu"]),
        "stream_errors": a["errors"],
    } for name, a in acc.items()}


def ctxt(pid):
    s = proc_status(pid)
    return int(s["voluntary_ctxt_switches"]) + int(s["nonvoluntary_ctxt_switches"])


READY_WHEN = "vigil --ready-when"
LIVE_WHEN = "vigil --live-when"
# --live-when's interval in the idle measurement: the probes it costs are
# counted, and the wake-ups between them.
LIVE_INTERVAL_S = 1.0
# A wake-up this close to a probe's connection (or to a sample next to it)
# is the probe's own.
NEAR_PROBE_S = 0.05
# How often vigil's context switches are sampled while --live-when probes.
LIVE_SAMPLE_S = 0.01


class Acceptor:
    """A port that answers --live-when's probes: each connection is
    accepted, its time noted, and closed, so that the backlog never fills."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "tcp://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.times = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.times.append(time.monotonic())
            conn.close()

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=5)


def wakeups_between(samples, probes):
    """The context switches in `samples` ((time, count), in order) that no
    probe in `probes` (connection times) accounts for: those of a sample
    interval with no probe within NEAR_PROBE_S of it."""
    between = 0
    for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
        if c1 > c0 and not any(t0 - NEAR_PROBE_S <= p <= t1 + NEAR_PROBE_S for p in probes):
            between += c1 - c0
    return between


def bench_idle(inits, helper, seconds):
    log(f"idle: all inits side by side, {seconds}s")
    runs, res = {}, {}
    # vigil once more, probing a port that takes connections (this
    # process's listening socket: the kernel completes the handshake), so
    # that its idle wake-ups are counted after its readiness probe is over.
    # And once more with --live-when of a port that answers, every
    # LIVE_INTERVAL_S: its wake-ups are the probes' own, and none between.
    vigil = next((i for i in inits if i.name == "vigil"), None)
    listener = acceptor = None
    try:
        if vigil:
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(16)
            url = "tcp://127.0.0.1:%d" % listener.getsockname()[1]
            ready = Init(READY_WHEN, vigil.path, ["-v", "--ready-when", url, "--"])
            runs[READY_WHEN] = NsRun(ready, [helper, "idle"], stdout_pipe=True)
            acceptor = Acceptor()
            live = Init(LIVE_WHEN, vigil.path, ["--live-when", acceptor.url, "--live-interval",
                                                "%gs" % LIVE_INTERVAL_S, "--"])
            runs[LIVE_WHEN] = NsRun(live, [helper, "idle"], stdout_pipe=True)
        for init in inits:
            runs[init.name] = NsRun(init, [helper, "idle"], stdout_pipe=True)
        pids = {}
        for name, r in runs.items():
            try:
                pids[name] = r.ready()
            except RuntimeError as e:
                res[name] = {"idle_errors": [str(e)[:300]]}
        time.sleep(1.0)  # let start-up settle
        c0 = {name: ctxt(pid) for name, pid in pids.items()}
        t0 = time.monotonic()
        samples = []
        if LIVE_WHEN in pids:
            # The wait is the point; sampled, to tell when vigil woke.
            while time.monotonic() - t0 < seconds:
                samples.append((time.monotonic(), ctxt(pids[LIVE_WHEN])))
                time.sleep(LIVE_SAMPLE_S)
        else:
            time.sleep(seconds)
        dt = time.monotonic() - t0
        for name, pid in pids.items():
            s = proc_status(pid)
            res[name] = {
                "idle_wakeups_per_s": (ctxt(pid) - c0[name]) / dt,
                "vmhwm_kib": int(s["VmHWM"].split()[0]),
                "vmrss_kib": int(s["VmRSS"].split()[0]),
                "rssanon_kib": int(s.get("RssAnon", "0 kB").split()[0]),
                "rssfile_kib": int(s.get("RssFile", "0 kB").split()[0]),
            }
        if READY_WHEN in runs:
            probed = res.pop(READY_WHEN, {})
            said = runs[READY_WHEN].stderr()
            part = res.setdefault("vigil", {})
            if "vigil: ready after " not in said:
                part.setdefault("idle_errors", []).append(
                    "--ready-when: no ready line: " + said[-300:])
            elif "idle_wakeups_per_s" in probed:
                part["idle_wakeups_ready_when_per_s"] = probed["idle_wakeups_per_s"]
        if LIVE_WHEN in runs:
            probed = res.pop(LIVE_WHEN, {})
            part = res.setdefault("vigil", {})
            probes = [t for t in acceptor.times if t0 <= t <= t0 + dt]
            said = runs[LIVE_WHEN].stderr()
            if "idle_wakeups_per_s" not in probed:
                pass  # its error is in idle_errors already
            elif not probes or "unhealthy" in said:
                part.setdefault("idle_errors", []).append(
                    f"--live-when: {len(probes)} probes answered; " + said[-300:])
            else:
                wakeups = probed["idle_wakeups_per_s"] * dt
                part["idle_wakeups_live_when_per_s"] = probed["idle_wakeups_per_s"]
                part["live_when_probes_per_s"] = len(probes) / dt
                part["live_when_wakeups_per_probe"] = wakeups / len(probes)
                part["live_when_wakeups_between_probes"] = wakeups_between(samples, probes)
    finally:
        for r in runs.values():
            r.kill()
        if listener:
            listener.close()
        if acceptor:
            acceptor.close()
    return res


class ProcConnector:
    """Exit codes of every process on the machine (netlink proc connector):
    tells whether `sleep` died of SIGTERM or of the kernel's SIGKILL without
    touching it (no ptrace). No reader thread: events queue in a large socket
    buffer and are read after the timed part, so the timing is undisturbed."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 11)  # NETLINK_CONNECTOR
        for opt in (33, socket.SO_RCVBUF):  # SO_RCVBUFFORCE needs CAP_NET_ADMIN
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, opt, 16 << 20)
                break
            except OSError:
                pass
        self.sock.bind((0, 1))  # CN_IDX_PROC group
        op = struct.pack("I", 1)  # PROC_CN_MCAST_LISTEN
        cn = struct.pack("IIIIHH", 1, 1, 0, 0, len(op), 0) + op
        self.sock.send(struct.pack("IHHII", 16 + len(cn), 3, 0, 0, 0) + cn)  # NLMSG_DONE

    def _exits(self, data):
        off = 0
        while off + 16 <= len(data):
            ln, = struct.unpack_from("I", data, off)
            if ln < 16:
                break
            if off + 68 <= len(data):
                what, = struct.unpack_from("I", data, off + 36)
                if what == 0x80000000:  # PROC_EVENT_EXIT
                    pid, _tgid, code = struct.unpack_from("III", data, off + 52)
                    yield pid, code
            off += (ln + 3) & ~3

    def drain(self):
        """Throw away everything queued so far."""
        while True:
            try:
                self.sock.recv(65536, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            except OSError:  # ENOBUFS: overflowed, keep draining
                continue

    def exit_code(self, pid, timeout=2.0):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return None
            try:
                data = self.sock.recv(65536)
            except OSError:  # ENOBUFS: events were lost
                continue
            for p, code in self._exits(data):
                if p == pid:
                    return code

    def close(self):
        self.sock.close()


def describe_status(code):
    if code is None:
        return "unknown"
    if code & 0x7F:
        sig = code & 0x7F
        try:
            return signal.Signals(sig).name
        except ValueError:
            return f"signal {sig}"
    return f"exit {code >> 8}"


def find_desc(pid, comm, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        todo, seen = [pid], []
        while todo:
            p = todo.pop()
            seen.append(p)
            todo += children_of(p)
        for p in seen[1:]:
            if comm_of(p) == comm:
                return p
        time.sleep(0.002)
    return None


def bench_stop(inits, rounds):
    log(f"stop: {rounds} rounds of SIGTERM to INIT -- sh -c 'sleep 1000'")
    try:
        pc = ProcConnector()
    except OSError as e:
        log(f"  proc connector unavailable ({e}); how sleep died will be 'unknown'")
        pc = None
    acc = {i.name: {"ms": [], "ends": {}, "status": {}, "timeouts": 0, "errors": []} for i in inits}
    try:
        for r in range(rounds):
            for init in rotated(inits, r):
                a = acc[init.name]
                run = NsRun(init, ["sh", "-c", "sleep 1000"])
                try:
                    ipid = wait_init_pid(run.proc.pid)
                    sp = find_desc(ipid, "sleep")
                    if sp is None:
                        raise RuntimeError("sleep never started; stderr: " + run.stderr())
                    if pc:
                        pc.drain()
                    fd = os.pidfd_open(ipid)
                    t0 = time.perf_counter_ns()
                    os.kill(ipid, signal.SIGTERM)
                    r, _, _ = select.select([fd], [], [], 30)
                    t1 = time.perf_counter_ns()
                    os.close(fd)
                    if not r:
                        a["timeouts"] += 1
                    else:
                        a["ms"].append((t1 - t0) / 1e6)
                    run.pid = ipid
                    try:
                        run.proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        pass
                    st = run.proc.returncode
                    st = "none" if st is None else (f"signal {-st}" if st < 0 else str(st))
                    a["status"][st] = a["status"].get(st, 0) + 1
                    end = describe_status(pc.exit_code(sp) if pc else None)
                    a["ends"][end] = a["ends"].get(end, 0) + 1
                except (RuntimeError, OSError) as e:
                    a["errors"].append(str(e)[:300])
                finally:
                    run.kill()
    finally:
        if pc:
            pc.close()
    return {name: {
        "stop_ms": median(a["ms"]),
        "stop_sleep_ended_by": a["ends"],
        "stop_exit_status": a["status"],
        "stop_timeouts": a["timeouts"],
        "stop_errors": a["errors"],
    } for name, a in acc.items()}


# --------------------------------------------------------------------------- report

# key, label, unit, better ("lower"/"higher"), format
METRICS = [
    ("startup_overhead_ms", "start-up + exit overhead", "ms", "lower", "{:.3f}"),
    ("fwd_idle_median_us", "forwarding latency from idle, median", "µs", "lower", "{:.1f}"),
    ("fwd_idle_p99_us", "forwarding latency from idle, p99", "µs", "lower", "{:.1f}"),
    ("fwd_b2b_median_us", "forwarding latency back-to-back, median", "µs", "lower", "{:.1f}"),
    ("fwd_b2b_p99_us", "forwarding latency back-to-back, p99", "µs", "lower", "{:.1f}"),
    ("fwd_init_cpu_us_per_signal", "forwarding: PID 1 CPU time per signal", "µs", "lower", "{:.2f}"),
    ("busy_median_us", "forwarding on a busy CPU, median", "µs", "lower", "{:.1f}"),
    ("busy_p99_us", "forwarding on a busy CPU, p99", "µs", "lower", "{:.1f}"),
    ("busy_over_1ms_pct", "forwarding on a busy CPU: signals later than 1 ms", "%", "lower", "{:.1f}"),
    ("signals_lost", "signals lost", "", "lower", "{:d}"),
    ("signals_duplicated", "signals duplicated", "", "lower", "{:d}"),
    ("first_fwd_median_us", "first SIGTERM of a fresh init: forwarding latency, median", "µs", "lower",
     "{:.1f}"),
    ("first_fwd_p99_us", "first SIGTERM: forwarding latency, p99", "µs", "lower", "{:.1f}"),
    ("first_exit_median_us", "first SIGTERM: SIGTERM to the init's exit, median", "µs", "lower", "{:.1f}"),
    ("first_exit_p99_us", "first SIGTERM: SIGTERM to the init's exit, p99", "µs", "lower", "{:.1f}"),
    ("first_lost", "first SIGTERM: lost", "", "lower", "{:d}"),
    ("first_duplicated", "first SIGTERM: duplicated", "", "lower", "{:d}"),
    ("burst_rate_per_s", "burst reaping rate", "zombies/s", "higher", "{:,.0f}"),
    ("burst_init_cpu_us_per_zombie", "burst: PID 1 CPU time per zombie", "µs", "lower", "{:.2f}"),
    ("burst_left", "burst: zombies left", "", "lower", "{:d}"),
    ("stream_peak_unreaped", "orphan stream: peak unreaped", "", "lower", "{:d}"),
    ("stream_mean_unreaped", "orphan stream: mean unreaped", "", "lower", "{:.2f}"),
    ("stream_init_cpu_us_per_orphan", "orphan stream: PID 1 CPU time per orphan", "µs", "lower", "{:.2f}"),
    ("stream_left", "orphan stream: zombies left", "", "lower", "{:d}"),
    ("idle_wakeups_per_s", "idle wake-ups", "/s", "lower", "{:.2f}"),
    ("idle_wakeups_ready_when_per_s", "idle wake-ups once ready (--ready-when)", "/s", "lower", "{:.2f}"),
    ("idle_wakeups_live_when_per_s", "wake-ups with --live-when, 1 s interval, healthy", "/s", "lower", "{:.2f}"),
    ("live_when_wakeups_per_probe", "--live-when: wake-ups per probe", "", "lower", "{:.1f}"),
    ("live_when_wakeups_between_probes", "--live-when: wake-ups between probes", "", "lower", "{:d}"),
    ("vmhwm_kib", "VmHWM while idle", "KiB", "lower", "{:d}"),
    ("rssanon_kib", "of which private (RssAnon)", "KiB", "lower", "{:d}"),
    ("binary_bytes", "binary size", "bytes", "lower", "{:,d}"),
    ("stop_ms", "stop: SIGTERM to exit", "ms", "lower", "{:.2f}"),
]

# metrics drawn in the chart
CHART = ["startup_overhead_ms", "fwd_idle_median_us", "fwd_b2b_median_us", "busy_p99_us", "first_fwd_median_us",
         "first_exit_median_us", "burst_rate_per_s",
         "stream_peak_unreaped", "idle_wakeups_per_s", "vmhwm_kib", "binary_bytes", "stop_ms"]


def fmt(v, f):
    if v is None:
        return "n/a"
    try:
        if "d}" in f:
            return f.format(int(round(v)))
        return f.format(v)
    except (ValueError, TypeError):
        return str(v)


def ratio(v, ref):
    if v is None or ref is None:
        return None
    if ref == 0:
        return 1.0 if v == 0 else float("inf")
    return v / ref


def fmt_ratio(r):
    if r is None:
        return ""
    if r == float("inf"):
        return " (vigil 0)"
    return f" ({r:.2f}×)"


def boot_ci(stat, groups, n=1000, seed=1):
    """95 % bootstrap interval of stat(*groups): how far the figure could move
    by chance, given the spread of the samples."""
    if not groups or any(not g for g in groups):
        return None
    rnd = random.Random(seed)
    vals = []
    for _ in range(n):
        try:
            vals.append(stat(*[rnd.choices(g, k=len(g)) for g in groups]))
        except ZeroDivisionError:
            pass
    if len(vals) < n // 2:
        return None
    vals.sort()
    return vals[int(0.025 * len(vals))], vals[int(0.975 * len(vals)) - 1]


def ci_text(ci, threshold):
    if ci is None:
        return ""
    lo, hi = ci
    t = f"; 95 % interval {lo:.2f}–{hi:.2f}"
    if lo <= threshold <= hi:
        t += ", within noise of the target"
    return t


def within(ci, threshold):
    """Whether a ratio's 95 % interval contains `threshold`: this run does
    not tell the figure from the target."""
    return ci is not None and ci[0] <= threshold <= ci[1]


def settled(met, ci, threshold):
    """A timing target's verdict: met when the median meets it; a median
    that misses it while the interval still holds the threshold is
    "noise" (this run cannot say), never met."""
    if met:
        return True
    return "noise" if within(ci, threshold) else False


# Parity with the C inits: a timing figure within this factor of the best
# of them in the same run (docs/benchmarks.md, "Targets").
PARITY = 1.10


# The size of Debian's static catatonit 0.1.7, the smallest static C init:
# vigil's binary-size target (docs/benchmarks.md, "Targets").
BINARY_TARGET = 699_160


def evaluate_targets(res, names, raw_bare=None):
    """The targets (docs/benchmarks.md): vigil against the best of the others in the same run."""
    if "vigil" not in res:
        return []
    v = res["vigil"]
    others = [n for n in names if n != "vigil"]

    def best(key, higher=False):
        vals = [(res[n].get(key), n) for n in others if res[n].get(key) is not None]
        if not vals:
            return None, None
        return (max if higher else min)(vals)

    out = []

    def add(name, ok, figure, *keys):
        if keys and all(v.get(k) is None for k in keys):
            ok, figure = None, "not measured in this run"
        out.append({"target": name, "met": ok, "figure": figure})

    w = v.get("idle_wakeups_per_s")
    add("idle wake-ups: 0 per second", w is not None and w == 0, f"vigil {fmt(w, '{:.2f}')}/s", "idle_wakeups_per_s")
    w = v.get("idle_wakeups_ready_when_per_s")
    add("idle wake-ups with --ready-when, once ready: 0 per second", w is not None and w == 0,
        f"vigil {fmt(w, '{:.2f}')}/s", "idle_wakeups_ready_when_per_s")
    w = v.get("live_when_wakeups_between_probes")
    add("wake-ups with --live-when: none between probes", w is not None and w == 0,
        f"vigil {fmt(w, '{:d}')} between probes; {fmt(v.get('live_when_wakeups_per_probe'), '{:.1f}')} per "
        f"probe, {fmt(v.get('live_when_probes_per_s'), '{:.2f}')} probes/s", "live_when_wakeups_between_probes")

    ts = res.get("tini-static", {}).get("startup_overhead_ms")
    vo = v.get("startup_overhead_ms")
    if vo is None:
        add("start-up overhead ≤ tini-static's", None, "not measured in this run")
    elif ts is None:
        add("start-up overhead ≤ tini-static's", None, "tini-static not measured")
    else:
        ci = None
        rv, rt = v.get("raw_startup_ns"), res["tini-static"].get("raw_startup_ns")
        if rv and rt and raw_bare:
            ci = boot_ci(lambda a, b, c: (median(a) - median(c)) / (median(b) - median(c)), [rv, rt, raw_bare])
        add("start-up overhead ≤ tini-static's", vo is not None and vo <= ts,
            f"vigil {fmt(vo, '{:.3f}')} ms, tini-static {ts:.3f} ms ({fmt(ratio(vo, ts), '{:.2f}')}×"
            f"{ci_text(ci, 1.0)})", "startup_overhead_ms")

    for key, label in (("fwd_idle_median_us", f"forwarding latency median (from idle) ≤ {PARITY:.2f}× best"),
                       ("fwd_b2b_median_us", f"forwarding latency median (back-to-back) ≤ {PARITY:.2f}× best"),
                       ("first_fwd_median_us", "first SIGTERM of a fresh init: forwarding latency median "
                                               f"≤ {PARITY:.2f}× best"),
                       ("first_exit_median_us", "first SIGTERM of a fresh init: SIGTERM to exit median "
                                                f"≤ {PARITY:.2f}× best")):
        b, bn = best(key)
        x = v.get(key)
        if x is None:
            add(label, None, "not measured in this run")
        elif b is None:
            add(label, None, "no other init measured")
        else:
            rawkey = "raw_" + key.replace("_median_us", "_ns")
            ci = boot_ci(lambda a, c: median(a) / median(c), [v.get(rawkey) or [], res[bn].get(rawkey) or []])
            add(label, settled(x <= PARITY * b, ci, PARITY),
                f"vigil {fmt(x, '{:.1f}')} µs, best {bn} {b:.1f} µs ({fmt(ratio(x, b), '{:.2f}')}×"
                f"{ci_text(ci, PARITY)})", key)

    b, bn = best("burst_rate_per_s", higher=True)
    x = v.get("burst_rate_per_s")
    label = f"burst reaping rate ≥ best / {PARITY:.2f}"
    if x is None:
        add(label, None, "not measured in this run")
    elif b is None:
        add(label, None, "no other init measured")
    else:
        ci = boot_ci(lambda a, c: median(a) / median(c),
                     [v.get("raw_burst_rate_per_s") or [], res[bn].get("raw_burst_rate_per_s") or []])
        add(label, settled(x * PARITY >= b, ci, 1 / PARITY),
            f"vigil {fmt(x, '{:,.0f}')}/s, best {bn} {b:,.0f}/s ({fmt(ratio(x, b), '{:.2f}')}×"
            f"{ci_text(ci, 1 / PARITY)})",
            "burst_rate_per_s")
    bl, sl = v.get("burst_left"), v.get("stream_left")
    # A run with --only measures one of the two, or neither.
    add("zombies left: 0", all(x == 0 for x in (bl, sl) if x is not None),
        f"burst {fmt(bl, '{:d}')}, stream {fmt(sl, '{:d}')}", "burst_left", "stream_left")

    h = v.get("vmhwm_kib")
    c = res.get("catatonit", {}).get("vmhwm_kib")
    if h is None:
        add("VmHWM ≤ catatonit's", None, "not measured in this run")
    elif c is None:
        add("VmHWM ≤ catatonit's", None, "catatonit not measured")
    else:
        add("VmHWM ≤ catatonit's", h is not None and h <= c,
            f"vigil {fmt(h, '{:d}')} KiB, catatonit {c} KiB", "vmhwm_kib")
    s = v.get("binary_bytes")
    add(f"static binary ≤ {BINARY_TARGET:,} bytes (catatonit 0.1.7's size)",
        s is not None and s <= BINARY_TARGET and v.get("static") is True,
        f"vigil {fmt(s, '{:,d}')} bytes, {'static' if v.get('static') else 'NOT static'}")
    return out


def functional_failures(r):
    """Correctness problems (not timing): these fail the run for vigil."""
    bad = []
    if r.get("startup_failures"):
        bad.append(f"INIT -- /bin/true failed {r['startup_failures']} times")
    if r.get("signals_lost"):
        bad.append(f"{r['signals_lost']} signals lost")
    if r.get("signals_duplicated"):
        bad.append(f"{r['signals_duplicated']} signals duplicated")
    if r.get("burst_left"):
        bad.append(f"{r['burst_left']} zombies left after the burst")
    if r.get("stream_left"):
        bad.append(f"{r['stream_left']} zombies left after the stream")
    if r.get("busy_lost"):
        bad.append(f"busy CPU: {r['busy_lost']} signals lost")
    if r.get("busy_duplicated"):
        bad.append(f"busy CPU: {r['busy_duplicated']} signals duplicated")
    if r.get("first_lost"):
        bad.append(f"first SIGTERM lost {r['first_lost']} times")
    if r.get("first_duplicated"):
        bad.append(f"first SIGTERM duplicated {r['first_duplicated']} times")
    if r.get("first_hangs"):
        bad.append(f"did not exit within 10s of its first SIGTERM {r['first_hangs']} times")
    odd = {k: v for k, v in (r.get("first_exit_status") or {}).items() if k != "143"}
    if odd:
        bad.append("first SIGTERM: exit status " + ", ".join(f"{k} ({v}x)" for k, v in odd.items())
                   + ", not 143")
    if r.get("stop_timeouts"):
        bad.append(f"did not exit within 30s of SIGTERM {r['stop_timeouts']} times")
    for k in ("fwd_errors", "busy_errors", "first_errors", "burst_errors", "stream_errors", "stop_errors", "idle_errors"):
        for e in r.get(k) or []:
            bad.append(f"{k}: {e}")
    return bad


def markdown_table(res, names, ref):
    lines = []
    head = "| metric | " + " | ".join(names) + " |"
    lines.append(head)
    lines.append("|---|" + "---:|" * len(names))
    for key, label, unit, better, f in METRICS:
        if not any(res[n].get(key) is not None for n in names):
            continue
        arrow = "↓" if better == "lower" else "↑"
        cells = []
        for n in names:
            v = res[n].get(key)
            c = fmt(v, f)
            if ref and n != ref and v is not None and key not in (
                    "signals_lost", "signals_duplicated", "burst_left", "stream_left", "first_lost",
                    "first_duplicated"):
                c += fmt_ratio(ratio(v, res[ref].get(key)))
            cells.append(c)
        u = f" ({unit})" if unit else ""
        lines.append(f"| {label}{u} {arrow} | " + " | ".join(cells) + " |")
    # categorical rows
    lines.append("| stop: how `sleep` ended | " + " | ".join(
        ", ".join(f"{k} {v}/{sum(res[n].get('stop_sleep_ended_by', {}).values())}"
                  for k, v in sorted(res[n].get("stop_sleep_ended_by", {}).items())) or "n/a"
        for n in names) + " |")
    lines.append("| first SIGTERM: exit status | " + " | ".join(
        ", ".join(f"{k}" for k in sorted(res[n].get("first_exit_status", {}))) or "n/a"
        for n in names) + " |")
    lines.append("| stop: exit status | " + " | ".join(
        ", ".join(f"{k}" for k in sorted(res[n].get("stop_exit_status", {}))) or "n/a"
        for n in names) + " |")
    lines.append("| static binary | " + " | ".join(
        {True: "yes", False: "no (dynamic)", None: "?"}[res[n].get("static")] for n in names) + " |")
    return "\n".join(lines)


def svg_chart(res, names, ref, path, title):
    """Horizontal grouped bars, log scale: each init's value / vigil's value."""
    import math
    others = [n for n in names if n != ref]
    palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2"]
    color = {n: palette[i % len(palette)] for i, n in enumerate(others)}
    rows = []
    for key, label, unit, better, f in METRICS:
        if key not in CHART:
            continue
        vals = []
        for n in others:
            r = ratio(res[n].get(key), res[ref].get(key)) if ref else None
            vals.append((n, r, res[n].get(key)))
        if any(r is not None for _, r, _ in vals):
            rows.append((key, label, better, vals))
    finite = [r for _, _, _, vs in rows for _, r, _ in vs if r not in (None, float("inf")) and r > 0]
    lo = min(finite + [0.5])
    hi = max(finite + [2.0])
    dlo = math.floor(math.log10(lo) - 0.8)  # room for the labels of bars going left
    dhi = math.ceil(math.log10(hi))
    if dhi - dlo < 2:
        dhi = dlo + 2
    left, right, top = 300, 170, 70
    width = 1000
    plot_w = width - left - right
    bar_h, gap = 13, 14
    group_h = bar_h * len(others) + gap
    height = top + group_h * len(rows) + 70

    def x_of(r):
        r = min(max(r, 10 ** dlo), 10 ** dhi)
        return left + (math.log10(r) - dlo) / (dhi - dlo) * plot_w

    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
         f'{esc(title)}</text>',
         f'<text x="{width / 2}" y="40" text-anchor="middle" fill="#444">each init\'s value divided by '
         f'{esc(ref or "?")}\'s (log scale; the line at 1 is {esc(ref or "?")}). ↓: lower is better, '
         f'↑: higher is better</text>']
    # grid
    for d in range(dlo, dhi + 1):
        for m in (1, 2, 5):
            v = m * 10 ** d
            if v < 10 ** dlo or v > 10 ** dhi:
                continue
            x = x_of(v)
            o.append(f'<line x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{height - 50}" '
                     f'stroke="{"#bbb" if m == 1 else "#eee"}"/>')
            if m == 1 or dhi - dlo <= 3:
                lab = f"{v:g}×"
                o.append(f'<text x="{x:.1f}" y="{height - 36}" text-anchor="middle" fill="#444">{lab}</text>')
    x1 = x_of(1)
    o.append(f'<line x1="{x1:.1f}" y1="{top - 12}" x2="{x1:.1f}" y2="{height - 50}" '
             f'stroke="black" stroke-width="2"/>')
    y = top
    for key, label, better, vals in rows:
        arrow = "↓" if better == "lower" else "↑"
        o.append(f'<text x="{left - 8}" y="{y + group_h / 2 - 4:.1f}" text-anchor="end">'
                 f'{esc(label)} {arrow}</text>')
        for j, (n, r, v) in enumerate(vals):
            by = y + j * bar_h
            if r is None:
                o.append(f'<text x="{x1 + 4:.1f}" y="{by + bar_h - 3}" fill="#888" font-size="10">'
                         f'{esc(n)}: n/a</text>')
                continue
            if r == float("inf"):
                xr = x_of(10 ** dhi)
                txt = f"{n}: {fmt(v, '{:.2f}')}, {ref} 0"
            elif v == 0 and res[ref].get(key) == 0:
                xr = x1
                txt = f"{n}: 0, as {ref}"
            else:
                xr = x_of(r)
                txt = f"{n} {r:.2f}×"
            if key == "binary_bytes" and res[n].get("static") is False:
                txt += " (dynamic: + libc)"
            xa, xb = sorted((x1, xr))
            o.append(f'<rect x="{xa:.1f}" y="{by + 1}" width="{max(xb - xa, 1):.1f}" height="{bar_h - 2}" '
                     f'fill="{color[n]}"/>')
            tx = xb + 4 if xr >= x1 else xa - 4
            anchor = "start" if xr >= x1 else "end"
            o.append(f'<text x="{tx:.1f}" y="{by + bar_h - 3}" text-anchor="{anchor}" font-size="10">'
                     f'{esc(txt)}</text>')
        y += group_h
    # legend
    lx = left
    for n in others:
        o.append(f'<rect x="{lx}" y="{height - 22}" width="12" height="12" fill="{color[n]}"/>')
        o.append(f'<text x="{lx + 16}" y="{height - 12}">{esc(n)}</text>')
        lx += 30 + 8 * len(n)
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def machine_info():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "kernel": platform.release(),
        "cpu": cpu,
        "loadavg_start": " ".join(load),
    }


def write_docs(doc_path, block, tag="RESULTS"):
    begin, end = f"<!-- BEGIN GENERATED {tag} -->", f"<!-- END GENERATED {tag} -->"
    with open(doc_path) as f:
        text = f.read()
    if begin not in text or end not in text:
        sys.exit(f"bench: {doc_path} has no {begin} ... {end} markers")
    a = text.index(begin) + len(begin)
    b = text.index(end)
    with open(doc_path, "w") as f:
        f.write(text[:a] + "\n" + block + "\n" + text[b:])


# --------------------------------------------------------------------------- main

def run_phases(phase, inits, helper, p, fwd_cpu, merge):
    """Every measurement asked for, in order; the start-up figures are
    returned, the others merged as they come."""
    su = phase("startup", lambda: bench_startup(inits, p["startup_rounds"]))
    for name, fn in (
            ("forward", lambda: bench_forward(inits, helper, p["fwd_rounds"], p["fwd_idle_per_round"],
                                              p["fwd_bursts_per_round"], p["fwd_burst_len"],
                                              p["fwd_gap_us"], fwd_cpu)),
            ("busy", lambda: bench_busy(inits, helper, p["busy_rounds"], p["busy_idle_per_round"], p["fwd_gap_us"],
                                        max(os.sched_getaffinity(0)) if fwd_cpu is None else fwd_cpu,
                                        p["busy_spinners"])),
            ("first", lambda: bench_first(inits, helper, p["first_rounds"], p["first_delay_us"], fwd_cpu)),
            ("burst", lambda: bench_burst(inits, helper, p["burst_rounds"], p["burst_zombies"])),
            ("stream", lambda: bench_stream(inits, helper, p["stream_rounds"], p["stream_orphans"])),
            ("idle", lambda: bench_idle(inits, helper, p["idle_seconds"])),
            ("stop", lambda: bench_stop(inits, p["stop_rounds"]))):
        part = phase(name, fn)
        if part:
            merge(part)
    return su


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run (well under a minute)")
    ap.add_argument("--vigil", default=os.environ.get("VIGIL_BIN", DEFAULT_VIGIL),
                    help="vigil binary (env VIGIL_BIN; default: the musl release build)")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH",
                    help="also measure this binary, called like vigil (`PATH -- CMD`; `NAME='PATH ARGS'` "
                         "puts ARGS before the --, `NAME='VAR=VALUE PATH'` sets VAR for it): for A/B tests "
                         "of a change; repeatable")
    ap.add_argument("--reference", action="store_true",
                    help="also measure bench/refinit.c built against glibc and against musl "
                         "(ref-glibc, ref-musl), and against musl after 1 ms of CPU at start "
                         "(ref-musl-warm): what the C library costs; never in the targets")
    ap.add_argument("--inits", help="comma-separated subset of: vigil,tini-static,tini,dumb-init,catatonit")
    ap.add_argument("--out", help="output directory (default bench/results, or bench/results/quick)")
    ap.add_argument("--startup-rounds", type=int)
    ap.add_argument("--fwd-rounds", type=int)
    ap.add_argument("--busy-rounds", type=int)
    ap.add_argument("--burst", type=int, default=10000, help="zombies per burst (default 10000)")
    ap.add_argument("--burst-rounds", type=int)
    ap.add_argument("--orphans", type=int, help="orphans in the stream (default 100000; --quick 10000)")
    ap.add_argument("--stream-rounds", type=int)
    ap.add_argument("--idle-seconds", type=float)
    ap.add_argument("--stop-rounds", type=int)
    ap.add_argument("--first-rounds", type=int, help="fresh inits per init for the first-signal test "
                                                     "(default 600; --quick 10)")
    ap.add_argument("--first-delay-ms", type=float, help="first-signal test: SIGTERM this long after the "
                                                         "child is ready (default 5)")
    ap.add_argument("--only", help="comma-separated subset of: startup,forward,busy,first,burst,stream,idle,stop")
    ap.add_argument("--fwd-cpu", type=int,
                    help="CPU the forwarding test is pinned to (default: the last one; -1: not pinned)")
    ap.add_argument("--write-docs", action="store_true",
                    help="replace the generated block of docs/benchmarks.md with this run")
    ap.add_argument("--wait-quiet", type=float, metavar="SECONDS",
                    help="before each measurement, wait up to SECONDS until other processes use "
                         "less than 0.15 CPUs (for a recorded run on a shared machine)")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when vigil misses any target (default: only on correctness failures)")
    args = ap.parse_args()

    q = args.quick
    global MAX_EXTRA
    if q:
        MAX_EXTRA = 0  # a smoke run: the rounds asked for, no more
    p = {
        "startup_rounds": args.startup_rounds or (30 if q else 400),
        "fwd_rounds": args.fwd_rounds or (2 if q else 12),
        "fwd_idle_per_round": 20 if q else 50,
        "fwd_bursts_per_round": 5,
        "fwd_burst_len": 10,
        "fwd_gap_us": 5000,
        "busy_rounds": args.busy_rounds or (1 if q else 6),
        "busy_idle_per_round": 20 if q else 50,
        "busy_spinners": 2,
        "burst_zombies": args.burst,
        "burst_rounds": args.burst_rounds or (1 if q else 7),
        "stream_orphans": args.orphans or (10000 if q else 100000),
        "stream_rounds": args.stream_rounds or 1,
        "idle_seconds": args.idle_seconds or (2.0 if q else 5.0),
        "stop_rounds": args.stop_rounds or (2 if q else 10),
        "first_rounds": args.first_rounds or (10 if q else 600),
        "first_delay_us": int((args.first_delay_ms or 5) * 1000),
    }
    if os.geteuid() != 0:
        sys.exit("bench: must run as root (unshare --pid, proc connector)")
    out = args.out or os.path.join(BENCH_DIR, "results", "quick" if q else "")
    out = os.path.normpath(out)
    os.makedirs(out, exist_ok=True)
    helper = build_helper(os.path.join(BENCH_DIR, ".build"))

    inits, skipped = [], []
    wanted = set(args.inits.split(",")) if args.inits else None
    vigil_src = os.path.abspath(args.vigil)
    for i in candidate_inits(vigil_src):
        if wanted is not None and i.name not in wanted:
            continue
        if os.access(i.path, os.X_OK):
            if i.name == "vigil":
                # Measure a private copy: a rebuild in target/ during the run
                # must not swap the binary under the benchmark.
                copy = os.path.join(BENCH_DIR, ".build", "vigil")
                shutil.copy2(i.path, copy)
                i.path = copy
            inits.append(i)
        elif i.name == "vigil":
            sys.exit(f"bench: no vigil at {i.path}: build it (cargo build --release --target "
                     f"{host_musl_target()}), or pass --vigil PATH, or leave it out with --inits")
        else:
            skipped.append(i.name)
            log(f"bench: {i.name} not found at {i.path}: skipped")
    for spec in args.also:
        name, path, extra, env = parse_also(spec)
        if not name or not path or not os.access(path, os.X_OK):
            sys.exit(f"bench: --also {spec}: want NAME=PATH of an executable")
        copy = os.path.join(BENCH_DIR, ".build", "also-" + name)
        shutil.copy2(path, copy)
        inits.append(Init(name, copy, extra + ["--"], f"--also {path}", env))
    if args.reference:
        inits += build_reference(os.path.join(BENCH_DIR, ".build"))
    if not inits:
        sys.exit("bench: no init to measure")
    names = [i.name for i in inits]
    ref = "vigil" if "vigil" in names else None
    if ref is None:
        log("bench: vigil is not measured; ratios are not computed")

    t_start = time.monotonic()
    machine = machine_info()
    try:
        commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    res = {i.name: {} for i in inits}
    info = {}
    for i in inits:
        st = os.stat(i.path)
        info[i.name] = {"path": vigil_src if i.name == "vigil" else (i.note[7:] if i.note.startswith("--also ")
                                                                     else i.path),
                        "version": REFERENCE if i.note == REFERENCE else version_of(i.path), "note": i.note}
        res[i.name]["binary_kib"] = st.st_size / 1024
        res[i.name]["binary_bytes"] = st.st_size
        res[i.name]["static"] = is_static(i.path)

    def merge(part):
        for n, d in part.items():
            res.setdefault(n, {}).update(d)

    fwd_cpu = max(os.sched_getaffinity(0)) if args.fwd_cpu is None else args.fwd_cpu
    fwd_cpu = None if fwd_cpu < 0 else fwd_cpu
    p["fwd_cpu"] = fwd_cpu
    only = set(args.only.split(",")) if args.only else None
    want = lambda m: only is None or m in only
    bare_ms = None
    other_load = {}
    whole = Meter()

    def phase(name, fn):
        if not want(name):
            return
        if args.wait_quiet:
            end = time.monotonic() + args.wait_quiet
            while True:
                q = Meter()
                time.sleep(3)
                busy = q.other_cpus()
                if busy < 0.15 or time.monotonic() > end:
                    break
                log(f"  waiting for a quiet machine (other processes use {busy:.2f} CPUs)")
        m = Meter()
        t = time.monotonic()
        part = fn()
        other_load[name] = round(m.other_cpus(), 2)
        log(f"  {time.monotonic() - t:.1f} s; other processes used {other_load[name]:.2f} CPUs meanwhile")
        return part

    with autogroups_off():
        su = run_phases(phase, inits, helper, p, fwd_cpu, merge)
    raw_bare = None
    if su:
        bare = su.pop("(bare)")
        bare_ms, raw_bare = bare["startup_ms"], bare["raw_startup_ns"]
        merge(su)
    for key in ("fwd_rounds", "first_rounds"):
        run = res.get(ref or "", {}).get(key + "_run")
        if run:
            p[key] = run
    other_load["whole run"] = round(whole.other_cpus(), 2)
    with open("/proc/loadavg") as f:
        machine["loadavg_end"] = " ".join(f.read().split()[:3])
    duration = time.monotonic() - t_start

    contenders = [i.name for i in inits if i.note != REFERENCE]
    targets = evaluate_targets(res, contenders, raw_bare)
    if q:
        # Too few samples to tell a target met from missed: the smoke run
        # checks that every init works, and says nothing of speed.
        for t in targets:
            t["met"] = None
    failures = {n: functional_failures(res[n]) for n in names}
    cmd = "python3 bench/run.py" + (" --quick" if q else "")
    extra = [a for a in sys.argv[1:] if a not in ("--quick", "--write-docs")]
    if extra:
        cmd += " " + " ".join(extra)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    table = markdown_table(res, names, ref)
    svg_path = os.path.join(out, "ratios.svg")
    svg_chart(res, names, ref, svg_path,
              f"vigil benchmark, {date}, {machine['nproc']} CPUs, kernel {machine['kernel']}")
    doc = {
        "date": date,
        "command": cmd,
        "repository_commit": commit,
        "duration_s": round(duration, 1),
        "machine": machine,
        "other_load_cpus": other_load,
        "params": p,
        "bare_unshare_true_ms": bare_ms,
        "raw_bare_startup_ns": raw_bare,
        "inits": {n: dict(info[n], metrics=res[n]) for n in names},
        "skipped": skipped,
        "targets": targets,
        "functional_failures": failures,
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)

    mark = {True: "met", False: "**missed**", "noise": "**not settled** (the median misses it, within noise)",
            None: "not evaluated"}
    def shown(path):
        rel = os.path.relpath(path, REPO)
        return path if rel.startswith("..") else rel

    tlines = [f"- {t['target']}: {mark[t['met']]} ({t['figure']})" for t in targets]
    if q:
        tlines = ["- not evaluated: a smoke run (--quick) is too short to say anything about the targets"]
    flines = [f"- {n}: " + "; ".join(f) for n, f in failures.items() if f]
    summary = [
        f"Run {date}, {duration:.0f} s: `{cmd}`" + (f" (repository at {commit})" if commit else ""),
        "",
        f"Machine: {machine['nproc']} CPUs ({machine['cpu']}), kernel {machine['kernel']}, "
        f"load average {machine['loadavg_start']} at start, {machine['loadavg_end']} at end. "
        "Other processes kept busy on average (in CPUs): "
        + ", ".join(f"{k} {v:.2f}" for k, v in other_load.items()) + "."
        + (" **The machine was busy with other work: timings are disturbed, run it again on a quiet "
           "machine.**" if other_load["whole run"] > 0.25 else ""),
        "",
        "Inits: " + "; ".join(f"{n} `{shown(info[n]['path'])}` ({info[n]['version'] or '?'})" for n in names)
        + (f". Skipped (not installed): {', '.join(skipped)}." if skipped else "."),
        "",
        f"Parameters: start-up {p['startup_rounds']} rounds (bare `unshare ... /bin/true`: "
        f"{fmt(bare_ms, '{:.3f}')} ms); forwarding {p['fwd_rounds']} rounds × ({p['fwd_idle_per_round']} idle + "
        f"{p['fwd_bursts_per_round']}×{p['fwd_burst_len']} back-to-back); busy CPU {p['busy_rounds']} rounds × "
        f"{p['busy_idle_per_round']} signals beside {p['busy_spinners']} spinning processes; first SIGTERM "
        f"{p['first_rounds']} fresh inits each ({p['first_delay_us'] / 1000:g} ms after ready); burst {p['burst_zombies']} "
        f"zombies × {p['burst_rounds']}; stream {p['stream_orphans']} orphans × {p['stream_rounds']}; "
        f"idle {p['idle_seconds']:g} s; stop {p['stop_rounds']} rounds.",
        "",
        "Values are medians (peaks for the orphan stream, totals for lost/duplicated); "
        "in parentheses: the value divided by vigil's.",
        "",
        table,
        "",
        "Targets (vigil against the best of the others in this run):",
        "",
    ] + (tlines or ["- vigil not measured"]) + [""]
    if flines:
        summary += ["Correctness problems:", ""] + flines + [""]
    text = "\n".join(summary)
    print(text)
    log(f"bench: wrote {os.path.join(out, 'results.json')} and {svg_path}")

    if args.write_docs:
        rel_svg = os.path.relpath(svg_path, os.path.join(REPO, "docs"))
        write_docs(os.path.join(REPO, "docs", "benchmarks.md"),
                   text + f"\n![ratio of each init to vigil]({rel_svg})\n")
        log("bench: updated docs/benchmarks.md")

    rc = 0
    if ref and failures.get(ref):
        log("bench: vigil has correctness failures")
        rc = 1
    if args.strict and any(t["met"] is False for t in targets):
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
