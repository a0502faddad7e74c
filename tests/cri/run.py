#!/usr/bin/env python3
"""The kubelet's runtime path: vigil in pods of a real containerd, driven
through the CRI as the kubelet drives it.

    python3 tests/cri/run.py                  # every scenario
    python3 tests/cri/run.py grace oom        # some
    python3 tests/cri/run.py --vigil PATH     # another static vigil
    python3 tests/cri/run.py --update-docs    # rewrite docs/kubernetes.md's table and blocks from this run

No kubelet runs here. The tier makes the calls the kubelet makes, in its
order, to the CRI plugin of Debian's containerd:

- RunPodSandbox on the host network (no hostname: runc refuses one without
  a UTS namespace of its own), CreateContainer with vigil as the command and
  the termination log as a host file (mode 0666) mounted at
  /dev/termination-log, StartContainer;
- a stop: the preStop exec hook through ExecSync, StopContainer with the
  grace period left (at least 2 s), then ContainerStatus, and the
  termination message read from the host file of the mount as the kubelet
  reads it (its last 4096 bytes, after the runtime's own message);
- StopPodSandbox and RemovePodSandbox after the containers.

Each scenario prints the row `kubectl describe pod` would show (State,
Reason, Exit Code, Message); the table of a run is printed at the end, and
docs/kubernetes.md's table must match it (digits aside: pids and times
vary), so the docs say what a real runtime shows. So must each text block
of the docs marked `<!-- checked: tests/cri/run.py, ... (scenario NAME)
-->`, which shows that scenario's row as `kubectl describe pod` lays it
out.

The containerd is private: its own root, state, socket, runc root and
configuration, under a temporary directory; it never talks to another
containerd (the Docker engine's included). Sandboxes are stopped and removed
before containerd stops (shims outlive containerd), what is still mounted
under the directory is unmounted, and the cgroups the pods used are
removed. containerd's log and each container's log are kept in target/cri/.

Needs (Debian): containerd, runc, busybox-static; python3 with venv; cargo.
The CRI client is Python's grpcio (from PyPI, into a venv under the cache),
with the CRI v1 proto taken from the k8s-cri crate (fetched with `cargo
info`), compiled to stubs at run time. The cache is /var/cache/vigil-cri or
$VIGIL_CRI_CACHE. Anything missing fails the tier: it never skips.

The closing line is `N passed, N failed`; the exit status is 1 when any
scenario failed or the tier could not run.
"""

import argparse
import glob
import hashlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "cri")
DOCS = os.path.join(ROOT, "docs", "kubernetes.md")
K8S_CRI = "0.11.0"  # the crate whose proto/v1.proto is the CRI client's API
# The busybox applets the images link to /bin/busybox.
APPLETS = ["sh", "sleep", "cat", "echo", "tail", "test", "touch", "true", "ls", "ps", "httpd"]
TERMINATION_LOG = "/dev/termination-log"
MAX_MESSAGE = 4096  # the kubelet reads at most this much of the file
MIN_GRACE = 2  # the kubelet never passes StopContainer less than this
TIMEOUT = 60  # bound on what should take a second or two
BASE_NAME = "docker.io/library/vigil-cri"

# NamespaceMode of the CRI.
POD, CONTAINER, NODE = 0, 1, 2


def log(msg=""):
    print(msg, flush=True)


class Broken(Exception):
    """The tier cannot run: a tool or a package is missing, the runtime
    does not start. Fails the tier."""


class Failed(Exception):
    """A scenario's check failed."""


def check(cond, what):
    if not cond:
        raise Failed(what)


def run(cmd, timeout=300, **kw):
    """Runs cmd; its CompletedProcess, or Broken when it cannot run or
    fails."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Broken(f"{' '.join(cmd)}: {e}") from None
    if out.returncode != 0:
        raise Broken(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout}{out.stderr}")
    return out


# ---------------------------------------------------------------------------
# The client: grpcio in a venv of its own, stubs from the k8s-cri crate's proto


def venv_python(cache):
    """The venv's python with requirements.txt installed; made once per
    version of the requirements and of this python."""
    req = os.path.join(HERE, "requirements.txt")
    with open(req, "rb") as f:
        digest = hashlib.sha256(f.read() + sys.executable.encode() + sys.version.encode()).hexdigest()[:12]
    venv = os.path.join(cache, f"venv-{digest}")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(os.path.join(venv, ".complete")):
        return python
    log(f"== cri: a venv with grpcio in {venv}")
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", venv])
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", req], timeout=600)
    open(os.path.join(venv, ".complete"), "w").close()
    for old in glob.glob(os.path.join(cache, "venv-*")):
        if old != venv:
            shutil.rmtree(old, ignore_errors=True)
    return python


def cri_proto(cache):
    """proto/v1.proto of the k8s-cri crate, fetched with cargo from
    crates.io (`cargo info` downloads and unpacks the one crate) unless
    cargo has it already."""
    home = os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")

    def in_registry():
        unpacked = glob.glob(os.path.join(home, "registry", "src", "*", f"k8s-cri-{K8S_CRI}", "proto", "v1.proto"))
        if unpacked:
            with open(unpacked[0], "rb") as f:
                return f.read()
        for crate in glob.glob(os.path.join(home, "registry", "cache", "*", f"k8s-cri-{K8S_CRI}.crate")):
            with tarfile.open(crate) as t:
                return t.extractfile(f"k8s-cri-{K8S_CRI}/proto/v1.proto").read()
        return None

    proto = in_registry()
    if proto is None:
        run(["cargo", "info", "-q", f"k8s-cri@{K8S_CRI}"], cwd=cache)
        proto = in_registry()
    if proto is None:
        raise Broken(f"cargo info k8s-cri@{K8S_CRI} left no proto/v1.proto under {home}/registry")
    return proto


def cri_stubs(cache):
    """The directory of v1_pb2.py and v1_pb2_grpc.py, compiled from the
    proto once per proto and compiler."""
    from grpc_tools import protoc
    import grpc_tools

    proto = cri_proto(cache)
    tools = getattr(grpc_tools, "__version__", None)
    if tools is None:
        from importlib.metadata import version
        tools = version("grpcio-tools")
    key = hashlib.sha256(proto + tools.encode()).hexdigest()[:12]
    stubs = os.path.join(cache, f"stubs-{key}")
    if os.path.exists(os.path.join(stubs, "v1_pb2_grpc.py")):
        return stubs
    tmp = tempfile.mkdtemp(dir=cache, prefix="stubs-")
    with open(os.path.join(tmp, "v1.proto"), "wb") as f:
        f.write(proto)
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    status = protoc.main(["protoc", f"-I{tmp}", f"-I{include}", f"--python_out={tmp}",
                          f"--grpc_python_out={tmp}", os.path.join(tmp, "v1.proto")])
    if status != 0:
        raise Broken(f"protoc failed ({status}) on the k8s-cri {K8S_CRI} proto")
    shutil.rmtree(stubs, ignore_errors=True)
    os.rename(tmp, stubs)
    for old in glob.glob(os.path.join(cache, "stubs-*")):
        if old != stubs:
            shutil.rmtree(old, ignore_errors=True)
    return stubs


# ---------------------------------------------------------------------------
# What goes into the images


def host_musl_target():
    out = run(["rustc", "-vV"]).stdout
    host = re.search(r"^host: (\S+)", out, re.M).group(1)
    return host.split("-")[0] + "-unknown-linux-musl"


def is_static(path):
    out = run(["file", "-L", path]).stdout
    return "statically linked" in out or "static-pie linked" in out


def release_vigil():
    """vigil's static release build for this machine, built here (cargo
    does nothing when it is up to date)."""
    target = host_musl_target()
    log(f"== cri: cargo build --release --target {target}")
    run(["cargo", "build", "-q", "--release", "--target", target], cwd=ROOT, timeout=900)
    target_dir = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    return os.path.join(target_dir, target, "release", "vigil")


def find_busybox():
    wanted = os.environ.get("VIGIL_E2E_BUSYBOX")
    for path in [wanted] if wanted else ["/usr/bin/busybox", "/bin/busybox"]:
        if os.path.exists(path):
            if not is_static(path):
                raise Broken(f"{path} is dynamically linked: install Debian's busybox-static")
            return path
    raise Broken("no static busybox at /usr/bin/busybox or /bin/busybox: install Debian's busybox-static")


def oci_arch():
    machine = os.uname().machine
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


def layer_tar(vigil, busybox):
    """The one layer of the images: /vigil, busybox and its applets in
    /bin, empty /tmp, /dev, /proc, /sys, /etc. Uncompressed, fixed times
    and owners."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        def add_dir(name, mode=0o755):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            t.addfile(info)

        def add_file(name, path):
            info = tarfile.TarInfo(name)
            info.mode, info.size = 0o755, os.path.getsize(path)
            with open(path, "rb") as f:
                t.addfile(info, f)

        for d in ["bin", "dev", "etc", "proc", "sys"]:
            add_dir(d)
        add_dir("tmp", 0o1777)
        add_file("vigil", vigil)
        add_file("bin/busybox", busybox)
        for applet in APPLETS:
            info = tarfile.TarInfo(f"bin/{applet}")
            info.type, info.linkname = tarfile.SYMTYPE, "busybox"
            t.addfile(info)
    return buf.getvalue()


def oci_archive(path, images, vigil, busybox):
    """An OCI image layout archive of `images` ({tag: entrypoint}), all on
    the same layer, for `ctr images import`."""
    blobs = {}

    def blob(data):
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return digest, len(data)

    layer = layer_tar(vigil, busybox)
    layer_digest, layer_size = blob(layer)
    manifests = []
    for tag, entrypoint in images.items():
        config = json.dumps({
            "architecture": oci_arch(),
            "os": "linux",
            "config": {"Env": ["PATH=/bin"], "Entrypoint": entrypoint},
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        }).encode()
        config_digest, config_size = blob(config)
        manifest = json.dumps({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": config_digest, "size": config_size},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                        "digest": layer_digest, "size": layer_size}],
        }).encode()
        digest, size = blob(manifest)
        manifests.append({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                          "digest": digest, "size": size,
                          "annotations": {"org.opencontainers.image.ref.name": tag}})
    index = json.dumps({"schemaVersion": 2, "manifests": manifests}).encode()
    with tarfile.open(path, "w") as t:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))

        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", index)
        for digest, data in blobs.items():
            add("blobs/sha256/" + digest.split(":", 1)[1], data)


# ---------------------------------------------------------------------------
# The private containerd

CONFIG = """\
version = 2
root = "{base}/root"
state = "{base}/state"
oom_score = 0
# Snapshotters this tier does not use; aufs would run modprobe on the host.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "{base}/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "{base}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{sandbox_image}"
  # The sandbox asks for oom_score_adj -998, which needs CAP_SYS_RESOURCE:
  # clamp it to containerd's own score instead.
  restrict_oom_score_adj = true
  # Load no AppArmor profile into the host's kernel.
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "{runc}"
        Root = "{base}/runc"
        # cgroupfs, the kubelet's default driver: it needs no systemd.
        SystemdCgroup = false
  # No network plugin: every sandbox is on the host's network.
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{base}/cni/bin"
    conf_dir = "{base}/cni/net.d"
"""


class Containerd:
    def __init__(self, base, logs, sandbox_image):
        self.base = base
        self.logs = logs
        self.address = os.path.join(base, "containerd.sock")
        self.proc = None
        self.log_file = os.path.join(logs, "containerd.log")
        runc = shutil.which("runc")
        containerd = shutil.which("containerd")
        if not containerd or not runc or not shutil.which("containerd-shim-runc-v2"):
            raise Broken("containerd, containerd-shim-runc-v2 or runc is missing (Debian's containerd and runc)")
        self.version = run([containerd, "--version"]).stdout.split()[2]
        self.runc_version = run([runc, "--version"]).stdout.split()[2]
        for d in ["root", "state", "opt", "runc", "cni/bin", "cni/net.d"]:
            os.makedirs(os.path.join(base, d), exist_ok=True)
        self.config = os.path.join(base, "config.toml")
        with open(self.config, "w") as f:
            f.write(CONFIG.format(base=base, sandbox_image=sandbox_image, runc=runc))
        self.containerd = containerd

    def start(self, grpc):
        out = open(self.log_file, "w")
        self.proc = subprocess.Popen([self.containerd, "--config", self.config, "--log-level", "info"],
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                     start_new_session=True)
        out.close()
        channel = grpc.insecure_channel("unix://" + self.address)
        deadline = time.monotonic() + TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise Broken(f"containerd exited ({self.proc.returncode}) at start:\n{self.log_tail()}")
            try:
                grpc.channel_ready_future(channel).result(timeout=1)
                return channel
            except grpc.FutureTimeoutError:
                if time.monotonic() > deadline:
                    raise Broken(f"containerd's socket did not answer within {TIMEOUT}s:\n{self.log_tail()}")

    def log_tail(self, n=30):
        try:
            with open(self.log_file, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def ctr(self, *args):
        return run(["ctr", "--address", self.address, "--namespace", "k8s.io", *args])

    def stop(self):
        """containerd ends (SIGTERM)."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def end_leftovers(base, cgroup_parent):
    """Ends what a run left behind, found by name, never by a pattern: the
    containerd whose configuration is in `base`, the shims whose -address
    is its socket, the processes of the pods' cgroups (containers whose
    shim is gone); then unmounts what is under `base`, removes it and the
    cgroups. Returns the processes it had to kill."""
    config, address = os.path.join(base, "config.toml"), os.path.join(base, "containerd.sock")
    left = []
    for pid in all_pids():
        cmd = cmdline(pid)
        if (config in cmd and "--config" in cmd) or (address in cmd and "-address" in cmd):
            left.append((pid, " ".join(cmd[:1])))
    for pid in cgroup_procs(cgroup_parent):
        left.append((pid, " ".join(cmdline(pid)[:1])))
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    unmount_under(base)
    shutil.rmtree(base, ignore_errors=True)
    deadline = time.monotonic() + 10
    while not remove_cgroups(cgroup_parent) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def sweep_stale(tmp):
    """Cleans up after runs that were killed before their teardown: each
    run's directory names its owner (pid and start time), and a directory
    whose owner is gone is ended and removed."""
    for base in glob.glob(os.path.join(tmp, "vigil-cri-*")):
        try:
            with open(os.path.join(base, "owner")) as f:
                pid, started = f.read().split()
        except (OSError, ValueError):
            continue
        if process_start(int(pid)) == started:
            continue
        killed = end_leftovers(base, f"/vigil-cri-{pid}")
        log(f"    removed what a killed run left in {base}" + (f" (killed {killed})" if killed else ""))


def process_start(pid):
    """A process's start time (clock ticks since boot), which with its pid
    names it for good."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def cgroup_hierarchies():
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    return [m[4] for m in mounts if m[m.index("-") + 1] in ("cgroup", "cgroup2")]


def cgroup_procs(parent):
    """The processes in the cgroup `parent` and below, in any hierarchy."""
    found = set()
    for top in cgroup_hierarchies():
        for d, _, files in os.walk(top + parent):
            if "cgroup.procs" in files:
                try:
                    with open(os.path.join(d, "cgroup.procs")) as f:
                        found.update(int(p) for p in f.read().split())
                except OSError:
                    pass
    return sorted(found)


def unmount_under(base):
    """Unmounts everything below base, deepest first."""
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    points = [p.replace("\\040", " ") for p in points]
    for p in sorted((p for p in points if p.startswith(base + "/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", p], capture_output=True)


def remove_cgroups(parent):
    """Removes the cgroup `parent` (a cgroupfs path) and what is below it,
    in every hierarchy: runc removes a container's, not the pod's above it.
    Whether none is left."""
    done = True
    for top in cgroup_hierarchies():
        top += parent
        for d, _, _ in sorted(os.walk(top), key=lambda w: len(w[0]), reverse=True):
            try:
                os.rmdir(d)
            except OSError:
                done = False
    return done


# ---------------------------------------------------------------------------
# Processes, seen from the host


def all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def proc_status(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except OSError:
        return None


def pid_ns(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def ns_members(ns):
    return [p for p in all_pids() if pid_ns(p) == ns]


def zombies(ns):
    """The zombies of a PID namespace: (host pid, name)."""
    found = []
    for p in ns_members(ns):
        st = proc_status(p)
        if st and st.get("State", "").startswith("Z"):
            found.append((p, st.get("Name")))
    return found


def host_pid(ns, pid_in_ns):
    """The host pid of the process `pid_in_ns` of a PID namespace."""
    for p in ns_members(ns):
        st = proc_status(p)
        if st and st.get("NSpid", "").split()[-1:] == [str(pid_in_ns)]:
            return p
    return None


def wait_until(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failed(f"{what}: not within {timeout}s")
        time.sleep(0.05)


# ---------------------------------------------------------------------------
# The kubelet's side


def kubectl_state(api, state):
    return {api.CONTAINER_RUNNING: "Running", api.CONTAINER_EXITED: "Terminated"}.get(state, "Waiting")


class Kubelet:
    """The CRI calls the kubelet makes, with the values it passes."""

    def __init__(self, channel, api, grpc_api, work, cgroup_parent, images):
        self.api = api
        self.rt = grpc_api.RuntimeServiceStub(channel)
        self.img = grpc_api.ImageServiceStub(channel)
        self.work = work
        self.cgroup_parent = cgroup_parent
        self.images = images
        self.pods = []

    def version(self):
        return self.rt.Version(self.api.VersionRequest(), timeout=TIMEOUT)

    def has_image(self, ref):
        st = self.img.ImageStatus(self.api.ImageStatusRequest(image=self.api.ImageSpec(image=ref)),
                                  timeout=TIMEOUT)
        return st.image.id != ""

    def run_pod(self, name, pid_mode=CONTAINER):
        pod = Pod(self, name, pid_mode)
        self.pods.append(pod)
        return pod

    def remove_all(self):
        """Every pod this run made, stopped and removed, containers first,
        then whatever else the runtime still lists."""
        for pod in self.pods:
            pod.remove()
        listed = self.rt.ListPodSandbox(self.api.ListPodSandboxRequest(), timeout=TIMEOUT)
        for s in listed.items:
            self.rt.StopPodSandbox(self.api.StopPodSandboxRequest(pod_sandbox_id=s.id), timeout=TIMEOUT)
            self.rt.RemovePodSandbox(self.api.RemovePodSandboxRequest(pod_sandbox_id=s.id), timeout=TIMEOUT)


class Pod:
    def __init__(self, kubelet, name, pid_mode):
        api = kubelet.api
        self.k = kubelet
        self.name = name
        self.uid = str(uuid.uuid4())
        self.containers = []
        self.removed = False
        # As the kubelet: /var/log/pods/NAMESPACE_NAME_UID, host network, the
        # pod's cgroup under the QoS class's (here one for the whole run).
        self.log_dir = os.path.join(kubelet.work, "pods", f"default_{name}_{self.uid}")
        os.makedirs(self.log_dir)
        namespaces = api.NamespaceOption(network=NODE, pid=pid_mode, ipc=POD)
        self.config = api.PodSandboxConfig(
            metadata=api.PodSandboxMetadata(name=name, uid=self.uid, namespace="default", attempt=0),
            log_directory=self.log_dir,
            labels={"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": "default",
                    "io.kubernetes.pod.uid": self.uid},
            linux=api.LinuxPodSandboxConfig(
                cgroup_parent=f"{kubelet.cgroup_parent}/pod{self.uid}",
                security_context=api.LinuxSandboxSecurityContext(namespace_options=namespaces),
            ),
        )
        self.namespaces = namespaces
        self.id = kubelet.rt.RunPodSandbox(api.RunPodSandboxRequest(config=self.config),
                                           timeout=TIMEOUT).pod_sandbox_id

    def pause_pid(self):
        st = self.k.rt.PodSandboxStatus(self.k.api.PodSandboxStatusRequest(pod_sandbox_id=self.id, verbose=True),
                                        timeout=TIMEOUT)
        return json.loads(st.info["info"])["pid"]

    def container(self, name, cmd, env=None, memory_limit=0):
        """CreateContainer and StartContainer: `cmd` is (command, args) as
        CreateContainer takes them; the termination log is mounted from a
        host file."""
        c = Container(self, name, cmd, env or {}, memory_limit)
        self.containers.append(c)
        return c

    def stop(self):
        """StopPodSandbox, as the kubelet after the containers: seconds."""
        started = time.monotonic()
        self.k.rt.StopPodSandbox(self.k.api.StopPodSandboxRequest(pod_sandbox_id=self.id), timeout=TIMEOUT)
        return time.monotonic() - started

    def remove(self):
        if self.removed:
            return
        self.removed = True
        api, rt = self.k.api, self.k.rt
        for c in self.containers:
            rt.StopContainer(api.StopContainerRequest(container_id=c.id, timeout=0), timeout=TIMEOUT)
            rt.RemoveContainer(api.RemoveContainerRequest(container_id=c.id), timeout=TIMEOUT)
        rt.StopPodSandbox(api.StopPodSandboxRequest(pod_sandbox_id=self.id), timeout=TIMEOUT)
        rt.RemovePodSandbox(api.RemovePodSandboxRequest(pod_sandbox_id=self.id), timeout=TIMEOUT)


class Container:
    def __init__(self, pod, name, cmd, env, memory_limit):
        k, api = pod.k, pod.k.api
        self.pod = pod
        self.name = name
        # The kubelet's termination log: a host file of its own, made mode
        # 0666 whatever the umask, mounted at terminationMessagePath.
        self.termination_file = os.path.join(k.work, f"termination-{pod.name}-{name}")
        open(self.termination_file, "w").close()
        os.chmod(self.termination_file, 0o666)
        self.log_path = os.path.join(name, "0.log")
        resources = api.LinuxContainerResources(cpu_period=100000, cpu_shares=2, oom_score_adj=1000,
                                                memory_limit_in_bytes=memory_limit)
        config = api.ContainerConfig(
            metadata=api.ContainerMetadata(name=name, attempt=0),
            image=api.ImageSpec(image=k.images["app"]),
            command=cmd[0], args=cmd[1],
            envs=[api.KeyValue(key=key, value=value) for key, value in env.items()],
            mounts=[api.Mount(container_path=TERMINATION_LOG, host_path=self.termination_file)],
            log_path=self.log_path,
            labels={"io.kubernetes.container.name": name, "io.kubernetes.pod.uid": pod.uid},
            linux=api.LinuxContainerConfig(
                resources=resources,
                security_context=api.LinuxContainerSecurityContext(namespace_options=pod.namespaces),
            ),
        )
        self.id = k.rt.CreateContainer(api.CreateContainerRequest(
            pod_sandbox_id=pod.id, config=config, sandbox_config=pod.config), timeout=TIMEOUT).container_id
        k.rt.StartContainer(api.StartContainerRequest(container_id=self.id), timeout=TIMEOUT)
        self.pid = self.status(verbose=True)[1]["pid"]
        self.ns = pid_ns(self.pid)

    def status(self, verbose=False):
        api = self.pod.k.api
        st = self.pod.k.rt.ContainerStatus(api.ContainerStatusRequest(container_id=self.id, verbose=verbose),
                                           timeout=TIMEOUT)
        info = json.loads(st.info["info"]) if verbose else None
        return st.status, info

    def logs(self):
        """The container's output (the CRI log file: TIME STREAM TAG TEXT)."""
        try:
            with open(os.path.join(self.pod.log_dir, self.log_path), errors="replace") as f:
                return [line.rstrip("\n").split(" ", 3)[3] for line in f if line.count(" ") >= 3]
        except OSError:
            return []

    def wait_log(self, needle, timeout=TIMEOUT):
        return wait_until(lambda: [line for line in self.logs() if needle in line], timeout,
                          f"{self.name}: {needle!r} in its output {self.logs()}")

    def exec(self, cmd, timeout=10):
        """ExecSync: (exit code, stdout, stderr, seconds)."""
        api = self.pod.k.api
        started = time.monotonic()
        r = self.pod.k.rt.ExecSync(api.ExecSyncRequest(container_id=self.id, cmd=cmd, timeout=timeout),
                                   timeout=timeout + TIMEOUT)
        return r.exit_code, r.stdout.decode(), r.stderr.decode(), time.monotonic() - started

    def stop(self, grace, pre_stop=None):
        """The kubelet's killContainer: the preStop exec hook, then
        StopContainer with what is left of the grace period (whole
        seconds, at least MIN_GRACE). Returns (timeout passed, seconds
        StopContainer took)."""
        if pre_stop:
            _, _, _, took = self.exec(pre_stop, timeout=grace)
            grace -= int(took)
        grace = max(grace, MIN_GRACE)
        api = self.pod.k.api
        started = time.monotonic()
        self.pod.k.rt.StopContainer(api.StopContainerRequest(container_id=self.id, timeout=grace),
                                    timeout=grace + TIMEOUT)
        return grace, time.monotonic() - started

    def wait_exited(self, timeout=TIMEOUT):
        api = self.pod.k.api
        return wait_until(lambda: self.status()[0].state == api.CONTAINER_EXITED, timeout,
                          f"{self.name} exited")

    def describe(self, case):
        """What `kubectl describe pod` shows of the ended container: the
        runtime's status, and its message followed by the termination
        message, read from the host file mounted at the termination log
        path (its last MAX_MESSAGE bytes), as the kubelet composes them."""
        st, _ = self.status()
        message = st.message
        for m in st.mounts:
            if m.container_path == TERMINATION_LOG:
                with open(m.host_path, "rb") as f:
                    f.seek(0, os.SEEK_END)
                    f.seek(max(0, f.tell() - MAX_MESSAGE))
                    text = f.read().decode(errors="replace")
                if text:
                    message = f"{message}: {text}" if message else text
        return Row(case, kubectl_state(self.pod.k.api, st.state), st.reason, st.exit_code, message)


class Row:
    def __init__(self, case, state, reason, exit_code, message):
        self.case, self.state, self.reason, self.exit_code = case, state, reason, exit_code
        self.message = message.strip()
        self.scenario = None  # set by the tier: the scenario that gave the row

    def markdown(self):
        msg = self.message.replace("|", "\\|").replace("\n", " ")
        msg = f"`{msg}`" if msg else "(empty)"
        return f"| {self.case} | {self.state} | `{self.reason}` | {self.exit_code} | {msg} |"

    def show(self):
        return (f"      State: {self.state}\n      Reason: {self.reason}\n"
                f"      Exit Code: {self.exit_code}\n      Message: {self.message}")

    def describe_block(self):
        """The row as `kubectl describe pod` lays it out, for a text block
        of the docs."""
        return (f"State:        {self.state}\n  Reason:     {self.reason}\n"
                f"  Message:    {self.message}\n  Exit Code:  {self.exit_code}\n")


# ---------------------------------------------------------------------------
# The scenarios: each makes its pod, drives it as the kubelet does, checks
# what it must, and returns the rows `kubectl describe pod` would show.

# An app that stops cleanly on SIGTERM; its sleep is left for vigil to drain.
CLEAN_APP = ["sh", "-c", 'trap "echo app got SIGTERM; exit 0" TERM; echo ready; sleep 100000 & wait']
# An app that ignores SIGTERM, with a worker that does too (an ignored
# signal stays ignored across fork and exec).
STUBBORN_APP = ["sh", "-c", 'trap "" TERM; sleep 100000 & echo ready; exec sleep 100000']
# An exec that leaves a background child and exits at once; the child is
# orphaned to the PID namespace's init. Its output goes elsewhere: ExecSync
# returns only once the exec's stdout and stderr are closed.
EXEC_ORPHAN = ["sh", "-c", "sleep 100000 </dev/null >/dev/null 2>&1 & echo $!"]


# The pause process of every sandbox (the image containerd's
# sandbox_image names).
PAUSE = ["/vigil", "-P"]


def vigil_args(app):
    return ["/vigil", "--"], app


def reaped(ctr, pids, reaper_pid, who, what):
    """The processes `pids` (as `ctr` sees them), each checked to be a
    child of `reaper_pid`, then ended from the host: each must be reaped,
    not left a zombie."""
    for pid in pids:
        orphan = host_pid(ctr.ns, pid)
        check(orphan is not None, f"{what} {pid} is not in {ctr.name}'s PID namespace")
        parent = int(proc_status(orphan)["PPid"])
        check(parent == reaper_pid, f"{what} {orphan} has parent {parent}, not {who} ({reaper_pid})")
        os.kill(orphan, signal.SIGTERM)
        wait_until(lambda: proc_status(orphan) is None, 10,
                   f"{what} {orphan} reaped by {who} (state {(proc_status(orphan) or {}).get('State')})")
    check(zombies(ctr.ns) == [], f"zombies in {ctr.name}'s PID namespace: {zombies(ctr.ns)}")
    log(f"    {ctr.name}: {what} {pids}: children of {who}; ended and reaped, no zombie")


def exec_leaves_no_zombie(ctr, reaper_pid, who):
    """An ExecSync whose command leaves a background child: the child is
    orphaned to `reaper_pid` (the PID namespace's init) and reaped when it
    ends."""
    code, out, err, _ = ctr.exec(EXEC_ORPHAN)
    check(code == 0, f"exec: exit {code}: {out}{err}")
    reaped(ctr, [int(out.strip())], reaper_pid, who, "the exec's background child")


def scenario_clean(k):
    pod = k.run_pod("clean")
    app = pod.container("app", vigil_args(CLEAN_APP))
    app.wait_log("ready")
    exec_leaves_no_zombie(app, app.pid, "vigil, PID 1 of the container")
    grace, took = app.stop(30)
    log(f"    StopContainer({grace}) took {took:.2f}s")
    row = app.describe("the app stops on SIGTERM (the pod deleted)")
    check((row.reason, row.exit_code) == ("Completed", 0), f"not Completed 0:\n{row.show()}")
    check(row.message.startswith("child exited with code 0; exit status 0;"), f"vigil's report:\n{row.show()}")
    check("stop: SIGTERM from pid 0 (outside this PID namespace)" in row.message, row.show())
    check(took < 10, f"StopContainer took {took:.2f}s")
    return [row]


def scenario_prestop(k):
    pod = k.run_pod("prestop")
    env = {"VIGIL_PRE_STOP": "sh -c 'echo vigil pre-stop hook; cat /tmp/k8s-pre-stop'"}
    app = pod.container("app", vigil_args(CLEAN_APP), env)
    app.wait_log("ready")
    pre_stop = ["sh", "-c", "echo kubernetes preStop hook ran >/tmp/k8s-pre-stop; sleep 1"]
    grace, took = app.stop(10, pre_stop=pre_stop)
    log(f"    preStop exec, then StopContainer({grace}) took {took:.2f}s")
    check(grace < 10, f"StopContainer got {grace}s, the whole grace period: the hook's time not taken off")
    out = app.logs()
    order = [i for needle in ["vigil pre-stop hook", "kubernetes preStop hook ran", "app got SIGTERM"]
             for i, line in enumerate(out) if line == needle]
    check(len(order) == 3 and order == sorted(order),
          f"not: Kubernetes' preStop, then vigil's pre-stop hook, then SIGTERM to the app: {out}")
    row = app.describe("a `preStop` exec hook, then the app stops on SIGTERM")
    check((row.reason, row.exit_code) == ("Completed", 0), f"not Completed 0:\n{row.show()}")
    check("pre-stop hook succeeded" in row.message, row.show())
    return [row]


def scenario_grace(k):
    pod = k.run_pod("grace")
    app = pod.container("app", vigil_args(STUBBORN_APP), {"VIGIL_GRACE_PERIOD": "2s"})
    app.wait_log("ready")
    grace, took = app.stop(10)
    log(f"    StopContainer({grace}) took {took:.2f}s")
    row = app.describe("the app ignores SIGTERM; `VIGIL_GRACE_PERIOD=2s`, `terminationGracePeriodSeconds: 10`")
    check((row.reason, row.exit_code) == ("Error", 137), f"not Error 137:\n{row.show()}")
    # vigil's kill at 2 s, well before the runtime's own at 10 s.
    check(2 <= took < 9, f"StopContainer took {took:.2f}s, not vigil's 2s grace period")
    check(row.message.startswith("child was killed by SIGKILL (status 137) by vigil, at the grace deadline;"),
          row.show())
    check("grace period 2s over, SIGKILL to:" in row.message, row.show())
    return [row]


def scenario_kubelet_kill(k):
    pod = k.run_pod("kubelet-kill")
    app = pod.container("app", vigil_args(STUBBORN_APP))
    app.wait_log("ready")
    grace, took = app.stop(2)
    log(f"    StopContainer({grace}) took {took:.2f}s")
    row = app.describe("the app ignores SIGTERM; no `VIGIL_GRACE_PERIOD`, "
                       "`terminationGracePeriodSeconds: 2`: the kubelet's SIGKILL")
    check((row.reason, row.exit_code) == ("Error", 137), f"not Error 137:\n{row.show()}")
    check(2 <= took < 9, f"StopContainer took {took:.2f}s, not the runtime's 2s")
    check(row.message.startswith("vigil ended without its exit report: most likely vigil was killed by SIGKILL"
                                 " from outside"), row.show())
    return [row]


# Allocates until the OOM killer ends it: a string that doubles.
HOG = 'x=a; while :; do x="$x$x"; done'


def scenario_oom(k):
    pod = k.run_pod("oom")
    app = pod.container("app", vigil_args(["sh", "-c", f"echo ready; {HOG}"]), memory_limit=32 << 20)
    app.wait_exited()
    row = app.describe("`limits: {memory: 32Mi}`, the app OOM-killed")
    check((row.reason, row.exit_code) == ("OOMKilled", 137), f"not OOMKilled 137:\n{row.show()}")
    check(row.message.startswith("child was killed by SIGKILL (status 137) by the kernel OOM killer;"), row.show())
    return [row]


def scenario_oom_worker(k):
    pod = k.run_pod("oom-worker")
    app = pod.container("app", vigil_args(["sh", "-c", f"echo ready; sh -c '{HOG}'; echo worker ended $?"]),
                        memory_limit=32 << 20)
    app.wait_exited()
    check("worker ended 137" in app.logs(), f"the worker was not OOM-killed: {app.logs()}")
    row = app.describe("`limits: {memory: 32Mi}`, a worker OOM-killed, the app exits 0")
    check(row.exit_code == 0, f"not exit code 0:\n{row.show()}")
    check(row.message.startswith("child exited with code 0; exit status 0;"), row.show())
    check("the kernel OOM killer killed 1 process in this container (not the child" in row.message, row.show())
    return [row]


def scenario_oom_stop(k):
    pod = k.run_pod("oom-stop")
    # The worker is an orphan (its parent, a subshell, exits at once), so
    # that vigil reaps it and can say which pid the OOM killer took, and
    # when; the app itself dies of the SIGTERM, as most do.
    app = pod.container("app", vigil_args(["sh", "-c", f"(sh -c '{HOG}' &); echo ready; sleep 100000 & wait"]),
                        memory_limit=32 << 20)
    app.wait_log("ready")
    app.wait_log("the kernel OOM killer killed pid")
    check(app.status()[0].state == k.api.CONTAINER_RUNNING, "the app did not outlive its worker's OOM kill")
    grace, took = app.stop(30)
    log(f"    StopContainer({grace}) took {took:.2f}s")
    row = app.describe("`limits: {memory: 32Mi}`, a worker OOM-killed, then the pod deleted")
    # The runtime's reason comes from the cgroup's OOM count, not from how
    # the container ended: a clean stop shows as an OOM kill.
    log(f"    the runtime's reason: {row.reason}")
    check(row.exit_code == 143, f"not exit code 143:\n{row.show()}")
    check(row.message.startswith("child was killed by SIGTERM (status 143); exit status 143;"), row.show())
    check("stop: SIGTERM from pid 0 (outside this PID namespace)" in row.message, row.show())
    check(re.search(r"; earlier, the kernel OOM killer killed 1 process in this container \(not the child: "
                    r"a process it started, or a hook\)[^;]*: pid \d+ at \d{4}-\d\d-\d\dT[\d:.]+Z(;|$)",
                    row.message), f"no earlier OOM kill with its pid and time:\n{row.show()}")
    check(took < 10, f"StopContainer took {took:.2f}s")
    return [row]


def free_port():
    """A TCP port of the host's loopback free now: the pods are on the
    host's network."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scenario_unhealthy(k):
    pod = k.run_pod("unhealthy")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {"VIGIL_LIVE_WHEN": url, "VIGIL_LIVE_INTERVAL": "1s", "VIGIL_LIVE_FAILURES": "2"}
    # httpd -vv logs each answer: the first is to vigil's probe, which so
    # has seen the app healthy before it hangs.
    app = pod.container("app", vigil_args(["sh", "-c", "echo ok >/tmp/index.html; "
                                           f"exec httpd -f -vv -p 127.0.0.1:{port} -h /tmp"]), env)
    app.wait_log("response:200")
    httpd = wait_until(lambda: [p for p in all_pids() if proc_status(p) and int(proc_status(p)["PPid"]) == app.pid
                                and cmdline(p)[:1] == ["httpd"]], TIMEOUT, "httpd, vigil's child")[0]
    # Hung: the kernel still takes the connection, nothing answers.
    os.kill(httpd, signal.SIGSTOP)
    hung = time.monotonic()
    app.wait_exited()
    took = time.monotonic() - hung
    log(f"    exited {took:.2f}s after the SIGSTOP")
    row = app.describe("the app hangs (SIGSTOP); `VIGIL_LIVE_WHEN`, `VIGIL_LIVE_INTERVAL=1s`, `VIGIL_LIVE_FAILURES=2`")
    check((row.reason, row.exit_code) == ("Error", 69), f"not Error 69:\n{row.show()}")
    check("; exit status 69;" in row.message, row.show())
    silent = f"no HTTP answer from 127.0.0.1:{port} within 2s"
    check(f"; stop: unhealthy: 2 probes of {url} failed in a row: {silent}; {silent}," in row.message, row.show())
    # At least two probes that time out (2s each) and the interval
    # between them; then the stop, which the hung app's SIGTERM ends.
    check(5 <= took < 30, f"the container exited {took:.2f}s after the app hung")
    return [row]


# Leaves three orphans (each one's parent, a subshell, exits at once) and
# says their pids.
ORPHANS = "for i in 1 2 3; do (sleep 100000 & echo orphan $!); done"


def printed_orphans(ctr):
    pids = [int(line.split()[1]) for line in ctr.logs() if line.startswith("orphan ")]
    check(len(pids) == 3, f"{ctr.name} did not say its three orphans: {ctr.logs()}")
    return pids


def scenario_pause(k):
    pod = k.run_pod("shared-pid", pid_mode=POD)
    pause = pod.pause_pid()
    # RunPodSandbox may return before runc's init has exec'd the pause.
    wait_until(lambda: cmdline(pause) == PAUSE, TIMEOUT, f"the pause process {pause} runs {PAUSE}")
    ns = pid_ns(pause)
    app = pod.container("app", vigil_args(["sh", "-c", f'{ORPHANS}; trap "exit 0" TERM; echo ready; sleep 100000 & wait']))
    sidecar = pod.container("sidecar", (["sh", "-c", f"{ORPHANS}; echo ready; exec sleep 100000"], []))
    check(app.ns == ns and sidecar.ns == ns, "the containers are not in the pause's PID namespace")
    app.wait_log("ready")
    sidecar.wait_log("ready")
    reaped(app, printed_orphans(app), app.pid, "the app's vigil (a child subreaper)", "orphans")
    reaped(sidecar, printed_orphans(sidecar), pause, "vigil -P, the pod's pause", "orphans")
    exec_leaves_no_zombie(app, pause, "vigil -P, the pod's pause")
    for ctr in (app, sidecar):
        grace, took = ctr.stop(30)
        log(f"    {ctr.name}: StopContainer({grace}) took {took:.2f}s")
    rows = [app.describe("`shareProcessNamespace: true`, `vigil -P` the pause: the app stops on SIGTERM"),
            sidecar.describe("`shareProcessNamespace: true`, `vigil -P` the pause: a container without vigil")]
    check((rows[0].reason, rows[0].exit_code) == ("Completed", 0), f"the app, not Completed 0:\n{rows[0].show()}")
    check(rows[0].message.startswith("child exited with code 0; exit status 0;"), rows[0].show())
    check((rows[1].reason, rows[1].exit_code) == ("Error", 143), f"the sidecar, not Error 143:\n{rows[1].show()}")
    check(zombies(ns) == [], f"zombies in the pod: {zombies(ns)}")
    took = pod.stop()
    log(f"    StopPodSandbox took {took:.2f}s")
    check(took < 5, f"StopPodSandbox took {took:.2f}s, not prompt")
    check(process_start(pause) is None, f"the pause process {pause} outlived StopPodSandbox")
    return rows


SCENARIOS = [
    ("clean", scenario_clean),
    ("prestop", scenario_prestop),
    ("grace", scenario_grace),
    ("kubelet-kill", scenario_kubelet_kill),
    ("oom", scenario_oom),
    ("oom-worker", scenario_oom_worker),
    ("oom-stop", scenario_oom_stop),
    ("unhealthy", scenario_unhealthy),
    ("pause", scenario_pause),
]


# ---------------------------------------------------------------------------
# docs/kubernetes.md's table

TABLE_BEGIN = "<!-- cri-table: written by tests/cri/run.py --update-docs -->"
TABLE_END = "<!-- cri-table end -->"
TABLE_HEAD = ["| case | State | Reason | Exit Code | Message |", "|---|---|---|---|---|"]


def table(rows):
    return "\n".join(TABLE_HEAD + [r.markdown() for r in rows])


def docs_table():
    with open(DOCS) as f:
        text = f.read()
    start, end = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if start < 0 or end < start:
        return text, None
    return text, (start + len(TABLE_BEGIN), end)


def shape(line):
    """A table line with its numbers blurred: pids, times and sizes vary
    from run to run."""
    return re.sub(r"\d+", "N", line)


def documented_rows(text, span):
    """The table's rows in the docs, by their first cell."""
    return {line.split(" | ")[0]: line for line in text[span[0]:span[1]].splitlines()
            if line.startswith("| ") and line not in TABLE_HEAD}


def compare_docs(rows):
    """docs/kubernetes.md's table against this run's rows: the problems."""
    text, span = docs_table()
    if span is None:
        return [f"docs/kubernetes.md has no table between {TABLE_BEGIN!r} and {TABLE_END!r}"]
    documented = documented_rows(text, span)
    problems = []
    for r in rows:
        line = r.markdown()
        key = line.split(" | ")[0]
        if key not in documented:
            problems.append(f"docs/kubernetes.md's table has no row for {r.case!r}")
        elif shape(documented[key]) != shape(line):
            problems.append(f"docs/kubernetes.md's row for {r.case!r} says\n  {documented[key]}\nthis run:\n  {line}")
    ran = {r.markdown().split(" | ")[0] for r in rows}
    for key, line in documented.items():
        if key not in ran:
            problems.append(f"docs/kubernetes.md's table has a row no scenario gave: {line}")
    problems += compare_blocks(text, rows)
    if problems:
        problems.append("if the run is right, `python3 tests/cri/run.py --update-docs` rewrites the table "
                        "and the blocks")
    return problems


# A text block of the docs that shows one scenario's row as `kubectl
# describe pod` does: its marker names the scenario.
DOC_BLOCK = re.compile(r"<!-- checked: tests/cri/run\.py,[^>]*?\(scenario ([\w-]+)\)[^>]*-->\n```text\n(.*?)```\n",
                       re.S)


def doc_blocks(text, rows):
    """The docs' scenario blocks: (span of the block's text, what it says,
    what this run says or None, scenario)."""
    by_scenario = {}
    for r in rows:
        by_scenario.setdefault(r.scenario, []).append(r)
    found = []
    for m in DOC_BLOCK.finditer(text):
        got = by_scenario.get(m.group(1), [])
        found.append((m.span(2), m.group(2), got[0].describe_block() if len(got) == 1 else None, m.group(1)))
    return found


def compare_blocks(text, rows):
    problems = []
    for _, said, ran, scenario in doc_blocks(text, rows):
        if ran is None:
            problems.append(f"docs/kubernetes.md shows scenario {scenario!r}, which gave no single row")
        elif shape(said) != shape(ran):
            problems.append(f"docs/kubernetes.md's block of scenario {scenario!r} says\n{said}this run:\n{ran}")
    return problems


def update_docs(rows, runtime):
    text, _ = docs_table()
    # Blocks first, from the end: the table's span stays where it was.
    for (start, end), said, ran, scenario in reversed(doc_blocks(text, rows)):
        if ran is None:
            raise Broken(f"docs/kubernetes.md shows scenario {scenario!r}, which gave no single row")
        if shape(said) != shape(ran):
            text = text[:start] + ran + text[end:]
    with open(DOCS, "w") as f:
        f.write(text)
    text, span = docs_table()
    if span is None:
        raise Broken(f"docs/kubernetes.md has no table between {TABLE_BEGIN!r} and {TABLE_END!r}")
    # A row that differs only in its numbers stays as it was.
    documented = documented_rows(text, span)
    lines = []
    for r in rows:
        line = r.markdown()
        old = documented.get(line.split(" | ")[0])
        lines.append(old if old and shape(old) == shape(line) else line)
    body = "\n".join([f"\n_From a run of the CRI tier: {runtime}._\n"] + TABLE_HEAD + lines) + "\n"
    with open(DOCS, "w") as f:
        f.write(text[:span[0]] + body + text[span[1]:])


# ---------------------------------------------------------------------------


def in_venv(cache):
    """Runs this script again under the venv's python, unless it is."""
    if os.environ.get("VIGIL_CRI_VENV") == sys.prefix:
        return
    python = venv_python(cache)
    os.environ["VIGIL_CRI_VENV"] = os.path.dirname(os.path.dirname(python))
    os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", help=f"scenarios (default: all: {' '.join(n for n, _ in SCENARIOS)})")
    parser.add_argument("--vigil", help="the static vigil to test (default: the release build, built here)")
    parser.add_argument("--cache", default=os.environ.get("VIGIL_CRI_CACHE", "/var/cache/vigil-cri"))
    parser.add_argument("--logs", default=os.path.join(ROOT, "target", "cri"))
    parser.add_argument("--update-docs", action="store_true",
                        help="rewrite docs/kubernetes.md's table from this run (all scenarios)")
    args = parser.parse_args()
    known = [n for n, _ in SCENARIOS]
    unknown = [s for s in args.scenarios if s not in known]
    if unknown:
        raise SystemExit(f"cri: unknown scenario {unknown} (have: {' '.join(known)})")
    if args.update_docs and args.scenarios:
        raise SystemExit("cri: --update-docs needs every scenario")
    if os.geteuid() != 0:
        raise SystemExit("cri: run as root (containerd, mounts, cgroups)")

    # A SIGTERM (a CI run cancelled) ends the run through its teardown.
    def stopped(*_):
        log("cri: SIGTERM: the run ends, through its teardown")
        sys.exit(143)

    signal.signal(signal.SIGTERM, stopped)
    t0 = time.monotonic()
    try:
        os.makedirs(args.cache, exist_ok=True)
        in_venv(args.cache)
        status = tier(args, t0)
    except Broken as e:
        log(f"cri: cannot run: {e}")
        log(f"0 passed, {len(args.scenarios) or len(SCENARIOS)} failed")
        status = 1
    sys.exit(status)


def tier(args, t0):
    import grpc

    sys.path.insert(0, cri_stubs(args.cache))
    import v1_pb2 as api
    import v1_pb2_grpc as grpc_api

    vigil = os.path.abspath(args.vigil) if args.vigil else release_vigil()
    if not os.path.exists(vigil) or not is_static(vigil):
        raise Broken(f"{vigil} is not a static executable")
    busybox = find_busybox()
    shutil.rmtree(args.logs, ignore_errors=True)
    os.makedirs(args.logs)
    run_id = str(os.getpid())
    images = {"app": f"{BASE_NAME}:app-{run_id}", "pause": f"{BASE_NAME}:pause-{run_id}"}
    sweep_stale(tempfile.gettempdir())
    base = tempfile.mkdtemp(prefix="vigil-cri-")
    with open(os.path.join(base, "owner"), "w") as f:
        f.write(f"{os.getpid()} {process_start(os.getpid())}\n")
    cgroup_parent = f"/vigil-cri-{run_id}"
    daemon = Containerd(base, args.logs, images["pause"])
    runtime = (f"containerd {daemon.version}, runc {daemon.runc_version}, "
               f"cgroup {'v2' if os.path.exists('/sys/fs/cgroup/cgroup.controllers') else 'v1'}, "
               "cgroup driver cgroupfs")
    log(f"== cri: a private containerd in {base} ({runtime})")
    results, rows = [], []
    k = None
    try:
        channel = daemon.start(grpc)
        archive = os.path.join(base, "images.tar")
        oci_archive(archive, {"app-" + run_id: ["/vigil", "--"], "pause-" + run_id: PAUSE}, vigil, busybox)
        daemon.ctr("images", "import", "--base-name", BASE_NAME, archive)
        k = Kubelet(channel, api, grpc_api, base, cgroup_parent, images)
        v = k.version()
        log(f"    CRI {v.runtime_api_version} of {v.runtime_name} {v.runtime_version}; "
            f"images {' '.join(images.values())}")
        wait_until(lambda: all(k.has_image(i) for i in images.values()), TIMEOUT, "the CRI lists the images")
        log(f"    ready in {time.monotonic() - t0:.1f}s")
        for name, scenario in SCENARIOS:
            if args.scenarios and name not in args.scenarios:
                continue
            started = time.monotonic()
            log(f"== cri: {name}")
            try:
                got = scenario(k)
                for r in got:
                    r.scenario = name
                rows += got
                for r in got:
                    log(f"    {r.case}:\n{r.show()}")
                results.append((name, None))
                log(f"    ok ({time.monotonic() - started:.1f}s)")
            except (Failed, grpc.RpcError) as e:
                results.append((name, e))
                log(f"    FAIL ({time.monotonic() - started:.1f}s): {e}")
            finally:
                for pod in k.pods:
                    for c in pod.containers:
                        keep_log(c, args.logs)
                    try:
                        pod.remove()
                    except grpc.RpcError as e:
                        results.append((f"{name}: removing pod {pod.name}", e))
    finally:
        problems = teardown(k, daemon, base, cgroup_parent)
    log(f"== cri: the table (docs/kubernetes.md; {runtime})")
    log(table(rows))
    # The docs are compared with a whole run that passed: a failed
    # scenario has failed the tier already.
    if not args.scenarios and all(e is None for _, e in results):
        if not args.update_docs:
            problems += compare_docs(rows)
        elif all(e is None for _, e in results) and not problems:
            update_docs(rows, runtime)
            log("    docs/kubernetes.md rewritten")
        else:
            problems.append("docs/kubernetes.md left as it was: the run failed")
    for p in problems:
        log(f"cri: {p}")
    failed = sum(1 for _, e in results if e) + (1 if problems else 0)
    passed = len(results) - sum(1 for _, e in results if e)
    log(f"== cri: {time.monotonic() - t0:.1f}s")
    log(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def keep_log(container, logs):
    src = os.path.join(container.pod.log_dir, container.log_path)
    if os.path.exists(src):
        shutil.copy(src, os.path.join(logs, f"{container.pod.name}-{container.name}.log"))


def teardown(k, daemon, base, cgroup_parent):
    """The pods, containerd, its shims and mounts, the directory, the
    cgroups; what could not be cleaned is a problem of the run."""
    problems = []
    if k is not None:
        try:
            k.remove_all()
        except Exception as e:  # noqa: BLE001 - the clean-up goes on
            problems.append(f"removing the pods: {e}")
    daemon.stop()
    left = end_leftovers(base, cgroup_parent)
    if left:
        problems.append(f"processes left after containerd stopped (killed): {left}")
    if os.path.exists(base):
        problems.append(f"{base} could not be removed")
    if not remove_cgroups(cgroup_parent):
        problems.append(f"the cgroup {cgroup_parent} could not be removed")
    return problems


if __name__ == "__main__":
    main()
