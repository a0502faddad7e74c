#!/usr/bin/env python3
"""vigil's VM lab: each release binary boots as the init of a virtual
machine of its own architecture, once on cgroup v1 and once on cgroup v2.

    python3 lab/run.py                    # all seven architectures, both cgroup versions
    python3 lab/run.py aarch64 s390x      # some
    python3 lab/run.py --cgroup v2        # one cgroup version
    python3 lab/run.py --dist /some/dist  # other binaries (default: dist/ from scripts/release.sh)

Needs qemu-system-{x86,arm,misc,ppc} and opensbi (Debian 12), the cross
compilers that scripts/release.sh uses, and Debian's mirror; root only to
write the default cache. For each architecture it

1. fetches Debian's kernel and busybox-static of that architecture with
   `apt-get download`, through an apt configuration of its own under the
   cache (default /var/cache/vigil-lab, or $VIGIL_LAB_CACHE): the host's
   package setup is left alone, and trixie's lists (riscv64: Debian 12 has
   no riscv64 port) never become upgrade candidates for the host;
2. builds lab/nsrun.c with that architecture's cross compiler;
3. makes an initramfs of busybox, dist/vigil-ARCH as /bin/vigil, nsrun and
   lab/guest.sh;
4. boots it under qemu-system with TCG (nested KVM hangs on the machine
   this was written on), two machines at a time, with vigil as the
   kernel's init: `rdinit=/bin/vigil ... -- -v --drain-timeout 2s /bin/sh
   /lab/guest.sh`, and LAB_CGROUP=v1|v2 in the environment the kernel
   gives init (cgroup_no_v1=all on the v2 boot besides);
5. reads the console: the guest's `RESULT name PASS|FAIL|UNAVAILABLE
   detail` lines, `LAB-DONE`, then vigil's own exit report as the
   machine's init and the kernel's panic message when init exits.

It fails on any FAIL, on a check that did not report, on a missing
LAB-DONE, on a timeout, and on UNAVAILABLE unless the kernel's own config
says the feature is not built (riscv64's kernel has no cgroup v1 memory
controller). A kernel, busybox or firmware that cannot be had is a
failure too. Consoles are kept in target/lab/ARCH-CGROUP.log. The summary
gives boot time (qemu start to LAB-START) and test time (LAB-START to
LAB-DONE) per machine; docs/tested-on.md has the results.
"""

import argparse
import concurrent.futures
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAB = os.path.join(ROOT, "lab")

DEBIAN = "http://deb.debian.org/debian"
SECURITY = "http://deb.debian.org/debian-security"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


class Arch:
    def __init__(self, name, deb_arch, suite, kernel, qemu, machine, console, cc, memory=256):
        self.name = name  # as in dist/vigil-NAME
        self.deb_arch = deb_arch
        self.suite = suite
        self.kernel = kernel  # Debian's meta package
        self.qemu = qemu
        self.machine = machine  # qemu options that pick the machine
        self.console = console
        self.cc = cc
        self.memory = memory


OPENSBI = "/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin"

# The slowest to boot first, so that two at a time finish together.
ARCHS = [
    Arch("ppc64le", "ppc64el", "bookworm", "linux-image-powerpc64le", "qemu-system-ppc64",
         ["-machine", "pseries,x-vof=on,cap-cfpc=broken,cap-sbbc=broken,cap-ibs=broken,cap-ccf-assist=off"],
         "hvc0", "powerpc64le-linux-gnu-gcc", memory=512),
    Arch("riscv64", "riscv64", "trixie", "linux-image-riscv64", "qemu-system-riscv64",
         ["-machine", "virt", "-bios", OPENSBI], "ttyS0", "riscv64-linux-gnu-gcc"),
    Arch("s390x", "s390x", "bookworm", "linux-image-s390x", "qemu-system-s390x",
         ["-machine", "s390-ccw-virtio"], "ttysclp0", "s390x-linux-gnu-gcc"),
    Arch("aarch64", "arm64", "bookworm", "linux-image-arm64", "qemu-system-aarch64",
         ["-machine", "virt", "-cpu", "cortex-a57"], "ttyAMA0", "aarch64-linux-gnu-gcc"),
    Arch("armv7", "armhf", "bookworm", "linux-image-armmp", "qemu-system-arm",
         ["-machine", "virt,highmem=off", "-cpu", "cortex-a15"], "ttyAMA0", "arm-linux-gnueabihf-gcc"),
    Arch("i686", "i386", "bookworm", "linux-image-686", "qemu-system-i386",
         ["-machine", "pc", "-cpu", "max"], "ttyS0", "i686-linux-gnu-gcc"),
    Arch("x86_64", "amd64", "bookworm", "linux-image-cloud-amd64", "qemu-system-x86_64",
         ["-machine", "pc"], "ttyS0", "x86_64-linux-gnu-gcc"),
]

# Every check the guest must report on each boot; the second list on v2 only.
CHECKS = ["exit-code", "exit-signal", "exit-not-found", "exit-code-pid1", "exit-signal-pid1",
          "forward", "forward-pid1", "pid1-stop", "subreaper-drain", "cgroup",
          "oom-child-container", "oom-grandchild-container", "oom-child-host",
          "oom-grandchild-host", "oom-since-start"]
CHECKS_V2 = ["oom-group"]

GUEST_EXIT = 3  # what lab/guest.sh exits with
MACHINE_DRAIN = "2s"  # vigil's drain timeout as the machine's init


def log(text):
    print(text, flush=True)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


# ---- fetching ---------------------------------------------------------------

class Apt:
    """apt-get with a configuration of its own under the cache."""

    def __init__(self, cache):
        self.dir = os.path.join(cache, "apt")
        self.lock = threading.Lock()
        for sub in ("state/lists/partial", "cache/archives/partial"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        status = os.path.join(self.dir, "status")
        if not os.path.exists(status):
            open(status, "w").close()
        suites = {}
        for arch in ARCHS:
            suites.setdefault(arch.suite, []).append(arch.deb_arch)
        # The security archive carries the newest kernels of a release.
        sources = "".join(
            f"deb [arch={','.join(sorted(archs))} signed-by={KEYRING}] {mirror} {dist} main\n"
            for suite, archs in sorted(suites.items())
            for mirror, dist in ((DEBIAN, suite), (SECURITY, f"{suite}-security")))
        self.sources = os.path.join(self.dir, "sources.list")
        if not os.path.exists(self.sources) or read(self.sources) != sources:
            with open(self.sources, "w") as f:
                f.write(sources)
            shutil.rmtree(os.path.join(self.dir, "state/lists"))
            os.makedirs(os.path.join(self.dir, "state/lists/partial"))
        all_archs = sorted({a.deb_arch for a in ARCHS})
        self.options = [
            "-o", f"Dir::Etc::SourceList={self.sources}",
            "-o", "Dir::Etc::SourceParts=/nonexistent",
            "-o", f"Dir::State={self.dir}/state",
            "-o", f"Dir::State::status={status}",
            "-o", f"Dir::Cache={self.dir}/cache",
            # apt's binary cache of the lists, which the host's set-up may
            # switch off: without it each apt-cache call parses every list.
            "-o", "Dir::Cache::pkgcache=pkgcache.bin",
            "-o", "Dir::Cache::srcpkgcache=srcpkgcache.bin",
            "-o", "Debug::NoLocking=1",
            "-o", "APT::Sandbox::User=root",
            "-o", "APT::Architectures=" + ",".join(all_archs),
            "-o", "Acquire::Languages=none",
            "-o", "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",
            "-o", "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false",
            "-o", "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false",
        ]
        self.updated = False
        self.native = subprocess.run(["dpkg", "--print-architecture"], text=True,
                                     capture_output=True, check=True).stdout.strip()

    def run(self, tool, *args, cwd=None):
        return subprocess.run([tool, *self.options, *args], cwd=cwd, text=True,
                              capture_output=True)

    def update(self):
        with self.lock:
            if self.updated:
                return
            log("== lab: apt-get update (the lab's own lists)")
            r = self.run("apt-get", "update")
            if r.returncode != 0:
                raise SystemExit(f"lab: apt-get update failed:\n{r.stdout}{r.stderr}")
            open(os.path.join(self.dir, "updated"), "w").close()
            self.updated = True

    def have_lists(self):
        """Lists to go by: there, and refreshed within a week, so that the
        lab follows Debian's kernel updates rather than the first ones it
        saw."""
        # apt dates each list as the mirror does: the lab keeps its own date.
        stamp = os.path.join(self.dir, "updated")
        lists = glob.glob(os.path.join(self.dir, "state/lists/*_Packages*"))
        return bool(lists) and os.path.exists(stamp) and \
            time.time() - os.path.getmtime(stamp) < 7 * 86400

    def files(self, wanted, debs):
        """Downloads each (package, arch) of WANTED into DEBS, unless it is
        there already, and returns their paths in order. A kernel meta
        package stands for the image package it depends on. One apt-cache
        or apt-get call for them all: each call reads every list."""
        os.makedirs(debs, exist_ok=True)
        why = "not in the lists"
        for attempt in (1, 2):
            # Stale lists name files the mirror no longer has: update once.
            if attempt == 2 or not self.have_lists():
                self.update()
            names = [f"{p}:{a}" for p, a in wanted]
            r = self.run("apt-cache", "depends", *names)
            real, current = {}, None
            for line in r.stdout.splitlines():
                if not line.startswith(" "):
                    # apt leaves out the machine's own architecture.
                    current = line.strip()
                    if ":" not in current:
                        current += ":" + self.native
                    real[current] = current
                m = re.match(r"\s*Depends: (linux-image-\S+)", line)
                if m and current and real[current] == current:
                    real[current] = m.group(1).split(":")[0] + ":" + current.split(":")[1]
            if any(n not in real for n in names):
                why = f"not in the lists: {[n for n in names if n not in real]}"
                continue
            r = self.run("apt-cache", "show", "--no-all-versions", *[real[n] for n in names])
            stanzas = {}
            for stanza in r.stdout.split("\n\n"):
                f = dict(re.findall(r"^(Package|Version|Architecture): (\S+)", stanza, re.M))
                if len(f) == 3:
                    # The name apt-get download gives the file (an epoch's colon escaped).
                    stanzas[f"{f['Package']}:{f['Architecture']}"] = \
                        f"{f['Package']}_{f['Version'].replace(':', '%3a')}_{f['Architecture']}.deb"
            paths = [os.path.join(debs, stanzas.get(real[n], "?")) for n in names]
            missing = [real[n] for n, path in zip(names, paths) if not os.path.exists(path)]
            if not missing:
                return paths
            r = self.run("apt-get", "download", *missing, cwd=debs)
            if r.returncode == 0 and all(os.path.exists(p) for p in paths):
                return paths
            why = r.stdout + r.stderr
        raise SystemExit(f"lab: cannot get {wanted} from Debian: {why}")


def unpack(deb, cache, patterns):
    """Extracts the files matching PATTERNS from DEB, once per .deb."""
    dest = os.path.join(cache, "unpacked", os.path.basename(deb)[:-4])
    if not os.path.exists(os.path.join(dest, ".done")):
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", dest, "--wildcards", *patterns],
                       stdin=tar.stdout, check=True)
        if tar.wait() != 0:
            raise SystemExit(f"lab: dpkg-deb cannot read {deb}")
        open(os.path.join(dest, ".done"), "w").close()
    return dest


class Kit:
    """What one architecture's machine is made of."""

    def __init__(self, arch, kernel, config, busybox, nsrun, kernel_deb):
        self.arch = arch
        self.kernel = kernel
        self.config = config
        self.busybox = busybox
        self.nsrun = nsrun
        # "6.1.0-57-arm64 6.1.192-3", from linux-image-6.1.0-57-arm64_6.1.192-3_arm64.deb
        package, version = os.path.basename(kernel_deb).split("_")[:2]
        self.version = f"{package[len('linux-image-'):]} {version}"
        self.initramfs = None


def prepare(arch, kernel_deb, busybox_deb, cache):
    unpacked = unpack(kernel_deb, cache, ["./boot/vmlinu*", "./boot/config-*"])
    kernels = glob.glob(os.path.join(unpacked, "boot", "vmlinu*"))
    configs = glob.glob(os.path.join(unpacked, "boot", "config-*"))
    if len(kernels) != 1 or len(configs) != 1:
        raise SystemExit(f"lab: no single kernel in {kernel_deb}: {kernels}")
    # /bin/busybox in Debian 12, /usr/bin/busybox in 13.
    unpacked = unpack(busybox_deb, cache, ["*bin/busybox"])
    found = glob.glob(os.path.join(unpacked, "bin", "busybox")) + \
        glob.glob(os.path.join(unpacked, "usr", "bin", "busybox"))
    if not found:
        raise SystemExit(f"lab: no busybox in {busybox_deb}")
    busybox = found[0]
    # nsrun, rebuilt when its source changes.
    source = os.path.join(LAB, "nsrun.c")
    digest = hashlib.sha256(read(source, "rb")).hexdigest()[:12]
    nsrun = os.path.join(cache, "nsrun", f"nsrun-{arch.name}-{digest}")
    if not os.path.exists(nsrun):
        os.makedirs(os.path.dirname(nsrun), exist_ok=True)
        if shutil.which(arch.cc) is None:
            raise SystemExit(f"lab: {arch.cc} not found (Debian's cross compiler for {arch.name})")
        subprocess.run([arch.cc, "-static", "-Os", "-s", "-Wall", "-o", nsrun + ".tmp", source],
                       check=True)
        os.rename(nsrun + ".tmp", nsrun)
    return Kit(arch, kernels[0], configs[0], busybox, nsrun, kernel_deb)


# ---- the initramfs ------------------------------------------------------------

def cpio_newc(entries):
    """An uncompressed cpio archive in the kernel's initramfs format. Each
    entry: (name, mode, data, rdev major, rdev minor)."""
    out = bytearray()

    def pad():
        out.extend(b"\0" * (-len(out) % 4))

    for ino, (name, mode, data, major, minor) in enumerate(entries + [("TRAILER!!!", 0, b"", 0, 0)], 1):
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, major, minor, len(name) + 1, 0]
        out.extend(b"070701" + b"".join(b"%08X" % f for f in fields))
        out.extend(name.encode() + b"\0")
        pad()
        out.extend(data)
        pad()
    return bytes(out)


def make_initramfs(kit, dist, out):
    vigil = os.path.join(dist, f"vigil-{kit.arch.name}")
    if not os.path.exists(vigil):
        raise SystemExit(f"lab: {vigil} missing: run scripts/release.sh first")

    d, x, r, link, char = 0o40755, 0o100755, 0o100644, 0o120777, 0o20600
    entries = [
        ("bin", d, b"", 0, 0), ("dev", d, b"", 0, 0), ("lab", d, b"", 0, 0),
        ("proc", d, b"", 0, 0), ("sys", d, b"", 0, 0), ("tmp", d, b"", 0, 0),
        ("dev/console", char, b"", 5, 1),
        ("bin/busybox", x, read(kit.busybox, "rb"), 0, 0),
        ("bin/sh", link, b"busybox", 0, 0),
        ("bin/vigil", x, read(vigil, "rb"), 0, 0),
        ("bin/nsrun", x, read(kit.nsrun, "rb"), 0, 0),
        ("lab/guest.sh", r, read(os.path.join(LAB, "guest.sh"), "rb"), 0, 0),
    ]
    with open(out, "wb") as f:
        f.write(cpio_newc(entries))
    kit.initramfs = out


# ---- booting ------------------------------------------------------------------

class Boot:
    def __init__(self, kit, cgroup):
        self.kit = kit
        self.cgroup = cgroup
        self.results = {}  # name -> (verdict, detail)
        self.boot_s = None
        self.test_s = None
        self.total_s = None
        self.problems = []
        self.leftover = None
        self.kthreads = None
        self.lines = []

    @property
    def name(self):
        return f"{self.kit.arch.name}-{self.cgroup}"

    def command(self):
        arch = self.kit.arch
        append = [f"console={arch.console}", "rdinit=/bin/vigil", "panic=-1", "loglevel=1",
                  f"LAB_ARCH={arch.name}", f"LAB_CGROUP={self.cgroup}"]
        if self.cgroup == "v2":
            append.append("cgroup_no_v1=all")
        append += ["--", "-v", "--drain-timeout", MACHINE_DRAIN, "/bin/sh", "/lab/guest.sh"]
        return [arch.qemu, *arch.machine, "-accel", "tcg", "-m", str(arch.memory), "-smp", "1",
                "-nodefaults", "-display", "none", "-monitor", "none", "-serial", "stdio",
                "-no-reboot", "-kernel", self.kit.kernel, "-initrd", self.kit.initramfs,
                "-append", " ".join(append)]

    def run(self, timeout, logdir):
        start = time.monotonic()
        started = done = None
        path = os.path.join(logdir, f"{self.name}.log")
        proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        with open(path, "w") as console:
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\r\n").lstrip("\r")
                now = time.monotonic() - start
                console.write(f"[{now:7.2f}] {line}\n")
                self.lines.append(line)
                if line.startswith("LAB-START") and started is None:
                    started = now
                elif line.startswith("LAB-DONE") and done is None:
                    done = now
                    m = re.search(r"leftover=(\d+) kthreads=(\d+)", line)
                    if m:
                        self.leftover, self.kthreads = m.group(1), int(m.group(2))
                elif line.startswith("RESULT "):
                    parts = line.split(" ", 3) + [""]
                    self.results[parts[1]] = (parts[2], parts[3])
        proc.wait()
        timed_out = not timer.is_alive() and proc.returncode != 0
        timer.cancel()
        self.total_s = time.monotonic() - start
        if started is not None:
            self.boot_s = started
        if started is not None and done is not None:
            self.test_s = done - started
        if timed_out:
            self.problems.append(f"timed out after {timeout} s")
        if started is None:
            self.problems.append("the guest never started (no LAB-START)")
        elif done is None:
            self.problems.append("no LAB-DONE")
        self.check_after_done()
        self.judge()
        return self

    def check_after_done(self):
        """What vigil did as the machine's init after the guest script
        exited: its drain and its exit status, from the console."""
        if self.leftover is None:
            return
        tail = self.lines[next(i for i, l in enumerate(self.lines) if l.startswith("LAB-DONE")):]
        # vigil's info line at the start of the drain names everything it
        # signalled; the drain timeout's warning and the exit report name
        # what it SIGKILLed. Those two come last, right before vigil exits,
        # and the kernel panics at once when init exits: a serial console
        # may not have sent them yet (the panic turns interrupts off), so
        # they are checked when they arrived, and their loss is said.
        # A line cut short runs into the kernel's panic message: not vigil's.
        said = [l for l in tail if "Kernel panic" not in l]
        draining = [l for l in said if l.startswith("vigil: draining: SIGTERM to")]
        killed = [l for l in said if l.startswith("vigil: warning: drain timeout")]
        report = [l for l in said if l.startswith("vigil:") and "exit status" in l]
        leftover = f"{self.leftover} (sleep 1000)"
        want_report = (f"drain: SIGTERM to 1 process, then SIGKILL (drain timeout "
                       f"({MACHINE_DRAIN}) over) to: {leftover};")
        wrong = [l for l in draining if l != f"vigil: draining: SIGTERM to {leftover}"]
        wrong += [l for l in killed if not l.endswith(f" over: SIGKILL to {leftover}")]
        wrong += [l for l in report if want_report not in l]
        if len(draining) == 1 and not wrong:
            lost = "" if killed and report else \
                "; the last lines (SIGKILL warning, exit report) did not reach the serial console before the panic"
            self.results["kernel-threads"] = (
                "PASS", f"the drain signalled and named only the left-over {leftover}, none of the "
                f"{self.kthreads} kernel threads{lost}")
        else:
            shown = (wrong + ["(no drain line)"])[0][:400]
            self.results["kernel-threads"] = (
                "FAIL", f"want only {leftover} drained; vigil said: {shown}")
        want_exit = f"exitcode=0x{GUEST_EXIT << 8:08x}"
        panic = [l for l in tail if "Attempted to kill init" in l]
        if panic and want_exit in panic[0]:
            self.results["machine-exit"] = ("PASS", f"the guest's {GUEST_EXIT} reached the kernel: {want_exit}")
        else:
            self.results["machine-exit"] = (
                "FAIL", f"want the kernel's panic with {want_exit}: {panic[:1] or 'no panic line'}")

    def judge(self):
        expected = CHECKS + (CHECKS_V2 if self.cgroup == "v2" else []) + ["kernel-threads", "machine-exit"]
        config = read(self.kit.config)
        no_v1_memcg = "# CONFIG_MEMCG_V1 is not set" in config
        for name in expected:
            if name not in self.results:
                self.problems.append(f"{name}: no result")
        for name, (verdict, detail) in self.results.items():
            if verdict == "PASS":
                continue
            if verdict == "UNAVAILABLE" and self.cgroup == "v1" and no_v1_memcg:
                continue
            self.problems.append(f"{name}: {verdict} {detail}")

    def unavailable(self):
        return [n for n, (v, _) in self.results.items() if v == "UNAVAILABLE"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archs", nargs="*", help="architectures (default: all)")
    parser.add_argument("--cgroup", choices=["v1", "v2"], action="append",
                        help="cgroup version (default: both)")
    parser.add_argument("--dist", default=os.path.join(ROOT, "dist"))
    parser.add_argument("--cache", default=os.environ.get("VIGIL_LAB_CACHE", "/var/cache/vigil-lab"))
    parser.add_argument("--jobs", type=int, default=2, help="machines at a time (default 2)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per boot (default 300)")
    parser.add_argument("--logs", default=os.path.join(ROOT, "target", "lab"))
    args = parser.parse_args()

    known = [a.name for a in ARCHS]
    unknown = [a for a in args.archs if a not in known]
    if unknown:
        raise SystemExit(f"lab: unknown architecture {unknown} (have: {' '.join(known)})")
    archs = [a for a in ARCHS if not args.archs or a.name in args.archs]
    cgroups = args.cgroup or ["v1", "v2"]
    for tool in sorted({a.qemu for a in archs}):
        if shutil.which(tool) is None:
            raise SystemExit(f"lab: {tool} not found (Debian's qemu-system-* packages)")
    if any(a.name == "riscv64" for a in archs) and not os.path.exists(OPENSBI):
        raise SystemExit(f"lab: {OPENSBI} missing (Debian's opensbi package)")

    t0 = time.monotonic()
    os.makedirs(args.cache, exist_ok=True)
    os.makedirs(args.logs, exist_ok=True)
    apt = Apt(args.cache)
    wanted = [(p, a.deb_arch) for a in archs for p in (a.kernel, "busybox-static")]
    used = apt.files(wanted, os.path.join(args.cache, "debs"))
    kits = []
    for i, arch in enumerate(archs):
        kit = prepare(arch, used[2 * i], used[2 * i + 1], args.cache)
        make_initramfs(kit, args.dist, os.path.join(args.logs, f"initramfs-{arch.name}.cpio"))
        kits.append(kit)
        log(f"== lab: {arch.name}: kernel {kit.version}")
    # Keep only what this run used: a newer kernel replaces the old one.
    if not args.archs:
        for path in glob.glob(os.path.join(args.cache, "debs", "*.deb")):
            if path not in used:
                os.remove(path)
                shutil.rmtree(os.path.join(args.cache, "unpacked", os.path.basename(path)[:-4]),
                              ignore_errors=True)
    prepared = time.monotonic() - t0

    boots = [Boot(kit, cg) for kit in kits for cg in cgroups]
    log(f"== lab: {len(boots)} boots, {args.jobs} at a time (consoles in {args.logs})")
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(b.run, args.timeout, args.logs) for b in boots]
        for future in concurrent.futures.as_completed(futures):
            b = future.result()
            verdict = "FAIL" if b.problems else "ok"
            log(f"  {verdict:4}  {b.name}: {len(b.results)} checks, {b.total_s:.0f} s")
            for name, (v, detail) in sorted(b.results.items()):
                log(f"        {v:11} {name}: {detail}")
            for p in b.problems:
                log(f"        problem: {p}")
            if b.problems:
                log(f"        console tail ({b.name}.log):")
                for line in b.lines[-15:]:
                    log(f"          | {line}")
    wall = time.monotonic() - t0

    log("")
    log("| arch | kernel | cgroup | boot | tests | checks | result |")
    log("|---|---|---|---|---|---|---|")
    failed = 0
    for b in boots:
        passed = sum(1 for v, _ in b.results.values() if v == "PASS")
        absent = b.unavailable()
        note = f" ({len(absent)} unavailable: kernel without CONFIG_MEMCG_V1)" if absent and not b.problems else ""
        boot = f"{b.boot_s:.1f} s" if b.boot_s is not None else "-"
        test = f"{b.test_s:.1f} s" if b.test_s is not None else "-"
        log(f"| {b.kit.arch.name} | {b.kit.version} | {b.cgroup} | {boot} | {test} | "
            f"{passed}/{len(b.results)} | {'FAIL' if b.problems else 'pass'}{note} |")
        failed += bool(b.problems)
    log("")
    log(f"== lab: fetch and initramfs {prepared:.0f} s, whole lab {wall:.0f} s")
    log(f"lab: {len(boots) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
