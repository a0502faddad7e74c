#!/usr/bin/env bash
# Checks the release in dist/ (scripts/release.sh, all seven targets) the way
# its users take it, each way in as docs/install.md gives it:
#
#   1. checksums and signature: a throwaway minisign key signs SHA256SUMS
#      (scripts/sign.sh) in a copy of dist/; `sha256sum -c` and
#      `minisign -V` accept it, and refuse a changed binary or list;
#   2. dependency lists: every binary's .dep-v0 section read back
#      (scripts/audit-info.py) names the same crates, with the same kinds,
#      as the SBOM, which validates against CycloneDX 1.5's JSON schema
#      (cyclonedx-python-lib's validator, installed from PyPI into a venv
#      cached under /var/cache/vigil-release);
#   3. the Debian packages: lintian reports nothing that is not overridden
#      and explained; each holds the files docs/install.md lists and the
#      very binary of dist/;
#   4. the amd64 (or arm64) package installed with `dpkg -i` in a minimal
#      Debian container (mmdebstrap --variant=minbase from this machine's apt
#      sources, the tarball cached under /var/cache/vigil-release, keyed by
#      what made it; `docker import`), then /usr/bin/vigil run as the
#      container's PID 1: exit codes, a signal's 128+N, `docker stop`;
#   5. as docker-init: the package's binary mounted where dockerd's
#      init-path puts it, under `docker run --init`, and podman's
#      `--init-path` pointed at it;
#   6. the image: the OCI archive pushed with skopeo to a registry started
#      here (Debian's docker-registry on 127.0.0.1, a free port, a temporary
#      store), one manifest list of seven platforms; each platform pulled by
#      Docker and by podman and run (the foreign ones under qemu-user,
#      through binfmt_misc entries registered for the run and removed after
#      it), `--version` naming that platform's target; its labels; and
#      `COPY --from=localhost:PORT/vigil:VERSION` in a `docker build`;
#   7. crates.io: `cargo publish --dry-run` packages and builds the crate, and
#      `cargo install --path .` installs a `vigil` that runs a command, also
#      as PID 1;
#   8. the static glibc binaries and the LGPL: each binary that `file` says
#      is linked with glibc has its notice (dist/vigil_VERSION_ARCH.glibc.txt, in
#      SHA256SUMS), whose glibc version, Debian source and its address
#      agree, the binary's package carries the same notice, Built-Using and
#      source, its image platform says LGPL-2.1-or-later; no musl binary has
#      one; and the notice's relink route works: armv7 relinked
#      (VIGIL_GLIBC_DIR) against a copy of its glibc elsewhere, in a clone
#      of dist/'s commit, gives the same bytes, and its link map shows the
#      copy's libc.a and start files were the ones opened (strace).
#
#   bash scripts/release.sh && bash scripts/release-check.sh
#
# Reproducibility is scripts/reproduce.sh's. Runs as root (containers,
# binfmt_misc, PID namespaces). Everything it starts is labelled vigil-e2e
# and removed at the end. Ends with "N passed, M failed"; exit 1 when
# anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/release-targets.sh
src=$PWD

if [ "$(id -u)" != 0 ]; then
    echo "release-check.sh: run as root" >&2
    exit 2
fi
# vigil runs here with none of the caller's VIGIL_*/TINI_* variables (CI's
# own knobs would each be a warning about a variable vigil does not know).
while read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(VIGIL|TINI)_' || true)
version=$(release_version)
commit=$(sed -n 's/^Commit `\([^`]*\)`.*/\1/p' dist/RELEASE.md 2>/dev/null)
if [ -z "$commit" ] || [ ! -f "dist/vigil_$version.oci.tar" ]; then
    echo "release-check.sh: no full release in dist/: run scripts/release.sh (all seven targets)" >&2
    exit 2
fi
epoch=$(sed -n 's/.*SOURCE_DATE_EPOCH \([0-9]*\).*/\1/p' dist/RELEASE.md)
short=${commit:0:12}
case "$commit" in *-modified) short="$short-modified" ;; esac
host_arch=$(uname -m)
host_row=$(release_target_row "$host_arch") || {
    echo "release-check.sh: no release target for this machine ($host_arch)" >&2
    exit 2
}
read -r _ host_target _ host_debarch _ <<<"$host_row"

work=$(mktemp -d /tmp/vigil-release-check.XXXXXX)
run_id=release-$$
label="vigil-e2e=$run_id"
registry_pid=
port=
pulled=()
pm=(podman --root "$work/podman/root" --runroot "$work/podman/run" --storage-driver vfs)
# podman asks the OCI runtime for RLIMIT_NOFILE and RLIMIT_NPROC of 1048576,
# which it cannot raise here (no CAP_SYS_RESOURCE): lower ones, explicitly.
pm_run=(run --rm --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
binfmt_added=()
binfmt_mounted=false
cleanup() {
    [ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null && wait "$registry_pid" 2>/dev/null
    for name in "${binfmt_added[@]}"; do
        echo -1 >"/proc/sys/fs/binfmt_misc/$name" 2>/dev/null
    done
    $binfmt_mounted && umount /proc/sys/fs/binfmt_misc 2>/dev/null
    docker ps -aq --filter "label=$label" | xargs -r docker rm -f -v >/dev/null 2>&1
    # An image with a child (the package's image above the Debian one) goes
    # only after the child: a few rounds.
    for _ in 1 2 3; do
        docker image ls -q --filter "label=$label" | sort -u | xargs -r docker image rm -f >/dev/null 2>&1
    done
    [ "${#pulled[@]}" -gt 0 ] && docker image rm -f "${pulled[@]}" >/dev/null 2>&1
    "${pm[@]}" rm -a -f >/dev/null 2>&1
    "${pm[@]}" rmi -a -f >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
ok() {
    passed=$((passed + 1))
    echo "  ok    $*"
}
bad() {
    failed=$((failed + 1))
    echo "  FAIL  $*"
}
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds, else its output.
check() {
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then
        ok "$what"
    else
        bad "$what: $(echo "$out" | tail -5)"
    fi
}
# wait_for SECONDS COMMAND...: until COMMAND succeeds.
wait_for() {
    local end=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
}
t0=$SECONDS
section_start=
# section TITLE: the time the one before took, and this one's title.
section() {
    [ -n "$section_start" ] && echo "  ($((SECONDS - section_start)) s)"
    section_start=$SECONDS
    echo "== $1"
}

section "1. SHA256SUMS signed with a throwaway minisign key, then verified"
(
    set -e
    cd "$work"
    minisign -G -W -p throwaway.pub -s throwaway.key >/dev/null
    cp -r "$src/dist" download
    bash "$src/scripts/sign.sh" throwaway.key download/SHA256SUMS >/dev/null
) >"$work/sign.log" 2>&1 && ok "signed: $(sed -n 2p "$work/download/SHA256SUMS.minisig" 2>/dev/null | cut -c1-60)..." ||
    bad "signing: $(tail -3 "$work/sign.log")"
# As docs/install.md gives it: SHA256SUMS, its signature, the public key
# and one binary downloaded; the signature checked, then the binary, which
# is installed and run.
mkdir -p "$work/user"
cp "$work/download/SHA256SUMS" "$work/download/SHA256SUMS.minisig" "$work/download/vigil-$host_arch" "$work/user/"
cp "$work/throwaway.pub" "$work/user/minisign.pub"
out=$(cd "$work/user" && minisign -V -p minisign.pub -m SHA256SUMS 2>&1)
case "$out" in
    *"Signature and comment signature verified"*"Trusted comment: vigil $version, commit $commit, SHA256SUMS"*)
        ok "minisign -V -p minisign.pub -m SHA256SUMS: $(echo "$out" | tail -1)" ;;
    *) bad "minisign -V: $out" ;;
esac
out=$(cd "$work/user" && sha256sum -c --ignore-missing SHA256SUMS 2>&1 &&
    install -m 0755 "vigil-$host_arch" "$work/user/vigil" && "$work/user/vigil" --version 2>&1)
[ "$out" = "vigil-$host_arch: OK
vigil version $version
commit $short, built for $host_target" ] && ok "sha256sum -c --ignore-missing SHA256SUMS: vigil-$host_arch: OK; installed, --version names $host_target" ||
    bad "sha256sum -c --ignore-missing, install: $out"
(cd "$work/download" && sha256sum -c --quiet SHA256SUMS) >/dev/null 2>&1 &&
    ok "sha256sum -c SHA256SUMS: all $(wc -l <dist/SHA256SUMS) files of the release" || bad "sha256sum -c SHA256SUMS failed"
cp "$work/download/SHA256SUMS" "$work/sums.orig"
# One digit changed, whatever it was (a 0 made 0 would change nothing).
sed -i '1s/^0/1/;t;1s/^./0/' "$work/download/SHA256SUMS"
cmp -s "$work/download/SHA256SUMS" "$work/sums.orig" && bad "the changed SHA256SUMS is unchanged"
(cd "$work/download" && ! minisign -V -q -p ../throwaway.pub -m SHA256SUMS >/dev/null 2>&1) &&
    ok "minisign -V refuses a changed SHA256SUMS" || bad "minisign -V accepted a changed SHA256SUMS"
cp "$work/sums.orig" "$work/download/SHA256SUMS"
printf x >>"$work/download/vigil-$host_arch"
(cd "$work/download" && ! sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1) &&
    ok "sha256sum -c refuses a changed binary" || bad "sha256sum -c accepted a changed binary"

section "2. dependency lists (.dep-v0) against the SBOM, the SBOM against CycloneDX 1.5"
sbom=dist/vigil_$version.cdx.json
for row in "${release_targets[@]}"; do
    read -r arch _ <<<"$row"
    out=$(python3 - "dist/vigil-$arch" "$sbom" "$version" <<'PY' 2>&1
import json, sys
sys.path.insert(0, "scripts")
audit = __import__("audit-info")
info, size = audit.audit_data(sys.argv[1])
bom = json.load(open(sys.argv[2]))
pkgs = info["packages"]
root = [p for p in pkgs if p.get("root")]
assert [(p["name"], p["version"]) for p in root] == [("vigil-init", sys.argv[3])], root
have = {(p["name"], p["version"], p.get("kind", "runtime")) for p in pkgs if not p.get("root")}
kinds = {"required": "runtime", "excluded": "build"}
want = {(c["name"], c["version"], kinds[c["scope"]]) for c in bom["components"]}
assert have == want, f"binary {sorted(have ^ want)} differ from the SBOM"
assert bom["metadata"]["component"]["name"] == "vigil-init"
print(f".dep-v0 {size} bytes, {len(have)} crates, as in the SBOM")
PY
    ) && ok "vigil-$arch: $out" || bad "vigil-$arch: $(echo "$out" | tail -3)"
done
venv=/var/cache/vigil-release/cyclonedx-python-lib-11.12.0
if [ ! -x "$venv/bin/python" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >/dev/null &&
        "$venv/bin/pip" install --quiet --disable-pip-version-check 'cyclonedx-python-lib[json-validation]==11.12.0' >"$work/pip.log" 2>&1 ||
        { tail -5 "$work/pip.log"; rm -rf "$venv"; }
fi
out=$("$venv/bin/python" - "$sbom" <<'PY' 2>&1
import sys
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
error = JsonStrictValidator(SchemaVersion.V1_5).validate_str(open(sys.argv[1]).read())
if error:
    sys.exit(f"invalid: {error}")
PY
) && ok "$sbom is valid CycloneDX 1.5 (strict schema)" || bad "$sbom: $out"

section "3. Debian packages: lintian, contents"
debs=()
for row in "${release_targets[@]}"; do
    read -r arch _ _ debarch _ <<<"$row"
    deb=dist/vigil_${version}_$debarch.deb
    debs+=("$deb")
    files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $1, $2, $6}' | tr '\n' ' ')
    notice=
    [ -f "dist/vigil_${version}_$arch.glibc.txt" ] && notice="-rw-r--r-- root/root ./usr/share/doc/vigil/glibc.txt.gz "
    want="-rwxr-xr-x root/root ./usr/bin/vigil -rw-r--r-- root/root ./usr/share/doc/vigil/README.md.gz -rw-r--r-- root/root ./usr/share/doc/vigil/changelog.gz -rw-r--r-- root/root ./usr/share/doc/vigil/copyright ${notice}-rw-r--r-- root/root ./usr/share/lintian/overrides/vigil -rw-r--r-- root/root ./usr/share/man/man1/vigil.1.gz "
    rm -rf "$work/x" && dpkg-deb -x "$deb" "$work/x"
    if [ "$files" = "$want" ] && [ "$(dpkg-deb -f "$deb" Architecture)" = "$debarch" ] &&
        cmp -s "$work/x/usr/bin/vigil" "dist/vigil-$arch"; then
        ok "$deb: Architecture $debarch, the files docs/install.md lists, /usr/bin/vigil is dist/vigil-$arch"
    else
        bad "$deb: $(dpkg-deb -f "$deb" Architecture) $files"
    fi
done
# Every tag lintian shows, at every level, fails the check, except one kind
# of false positive: lintian reads the binary's bytes as text, and four
# bytes of machine code can spell a "misspelt" word. A spelling hit passes
# only where each place the word occurs lies in executable code; in the
# binary's strings it fails like any other tag.
lintian --allow-root -E -I -L +pedantic --display-level '>=pedantic' --show-overrides "${debs[@]}" >"$work/lintian.out" 2>&1
status=$?
overridden=$(grep -c '^O:' "$work/lintian.out")
out=$(python3 - "$work/lintian.out" dist/vigil-* <<'PY' 2>&1
import re, sys
sys.path.insert(0, "scripts")
audit = __import__("audit-info")
lines = [l for l in open(sys.argv[1]).read().splitlines() if l.strip() and not l.startswith(("N:", "O:"))]
bins = {p: open(p, "rb").read() for p in sys.argv[2:]}
bad = []
for line in lines:
    m = re.match(r"^[EWIPX]: vigil: spelling-error-in-binary (\S+) \S+ \[usr/bin/vigil\]$", line)
    if not m:
        bad.append(line)
        continue
    word = m.group(1).encode()
    found = []
    for path, data in bins.items():
        code = [(o, o + n) for _, o, n, flags in audit.sections(data) if flags & 0x4]
        for run in re.finditer(rb"[\x20-\x7e]{4,}", data):
            for w in re.finditer(rb"\b" + re.escape(word) + rb"\b", run.group(), re.I):
                at = run.start() + w.start()
                found.append((path, at, any(a <= at < b for a, b in code)))
    if found and all(in_code for _, _, in_code in found):
        where = ", ".join(f"{p} at {at:#x}" for p, at, _ in found)
        print(f"note: {line}: '{m.group(1)}' is machine code ({where}), not text")
    else:
        bad.append(f"{line} (in text: {[(p, hex(a)) for p, a, c in found if not c]})")
for line in bad:
    print(f"tag: {line}")
sys.exit(1 if bad else 0)
PY
)
py_status=$?
[ -n "$out" ] && echo "$out" | grep '^note:' | sed 's/^note: /  note  /'
if [ "$status" != 1 ] && [ "$py_status" = 0 ]; then
    ok "lintian on the seven packages: no tag ($overridden overridden, each explained in packaging/deb/lintian-overrides)"
else
    bad "lintian (exit $status): $(echo "$out" | grep -v '^note:') $(grep -v '^[EWIPXNO]:' "$work/lintian.out")"
fi

section "4. the $host_debarch package with dpkg -i in a minimal Debian container, vigil as PID 1"
if ! docker info >/dev/null 2>&1; then
    bad "no Docker engine answers: the container checks (4-6) cannot run"
else
    # The Debian archive this machine's apt uses, for its own release.
    codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
    sources=$(python3 - "$codename" <<'PY'
import glob, sys
codename = sys.argv[1]
suites = {codename, f"{codename}-updates", f"{codename}-security"}
out = []
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in open(path).read().split("\n\n"):
        f = {}
        for line in stanza.splitlines():
            if ":" in line and not line.startswith(("#", " ")):
                k, v = line.split(":", 1)
                f[k.strip()] = v.split()
        if "deb" in f.get("Types", []) and "main" in f.get("Components", []) and f.get("Enabled", ["yes"]) != ["no"]:
            out += [f"deb {u} {s} main" for u in f.get("URIs", []) for s in f.get("Suites", []) if s in suites]
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        w = line.split("#")[0].split()
        w = [x for x in w if not x.startswith("[")]
        if len(w) >= 4 and w[0] == "deb" and w[2] in suites and "main" in w[3:]:
            out.append(f"deb {w[1]} {w[2]} main")
print("\n".join(dict.fromkeys(out)))
PY
    )
    key=$(printf '%s\n' "$(mmdebstrap --version)" minbase "$(dpkg --print-architecture)" "$codename" "$sources" | sha256sum | cut -c1-16)
    cache=/var/cache/vigil-release
    tarball=$cache/debian-$codename-minbase-$(dpkg --print-architecture)-$key.tar
    mkdir -p "$cache"
    if [ -f "$tarball" ]; then
        ok "Debian $codename minbase: cached $tarball"
    elif [ -z "$sources" ]; then
        bad "no Debian $codename archive with main in /etc/apt/sources.list*"
    else
        readarray -t source_lines <<<"$sources"
        t=$SECONDS
        if mmdebstrap --quiet --variant=minbase --format=tar "$codename" "$tarball.part" "${source_lines[@]}" >"$work/mmdebstrap.log" 2>&1; then
            mv "$tarball.part" "$tarball"
            ok "Debian $codename minbase made by mmdebstrap from ${source_lines[*]} in $((SECONDS - t)) s: $tarball"
        else
            rm -f "$tarball.part"
            bad "mmdebstrap: $(tail -5 "$work/mmdebstrap.log")"
        fi
    fi
    base=vigil-e2e-release-debian:$run_id
    deb_image=vigil-e2e-release-deb:$run_id
    host_deb=vigil_${version}_$host_debarch.deb
    if [ -f "$tarball" ] && docker import --change "LABEL $label" "$tarball" "$base" >/dev/null; then
        out=$(docker run --name "vigil-e2e-release-dpkg-$$" --label "$label" -v "$src/dist:/dist:ro" "$base" \
            sh -c "dpkg -i /dist/$host_deb && dpkg -s vigil | grep '^Status' && vigil --version && \
                   test -f /usr/share/doc/vigil/copyright && gzip -t /usr/share/man/man1/vigil.1.gz" 2>&1)
        if [ $? = 0 ] && echo "$out" | grep -q "Status: install ok installed" &&
            echo "$out" | grep -qx "commit $short, built for $host_target"; then
            ok "dpkg -i $host_deb: installed, /usr/bin/vigil --version names $host_target"
        else
            bad "dpkg -i $host_deb: $out"
        fi
        docker commit --change "LABEL $label" "vigil-e2e-release-dpkg-$$" "$deb_image" >/dev/null 2>&1
        docker rm "vigil-e2e-release-dpkg-$$" >/dev/null 2>&1
        pid1() { docker run --rm --label "$label" --entrypoint /usr/bin/vigil "$deb_image" "$@"; }
        out=$(pid1 -- sh -c 'exit 3' 2>&1)
        [ $? = 3 ] && ok "docker run --entrypoint /usr/bin/vigil IMAGE -- sh -c 'exit 3': 3" || bad "exit 3: $? $out"
        out=$(pid1 -- sh -c 'kill -TERM $$' 2>&1)
        [ $? = 143 ] && ok "the child killed by SIGTERM: 143" || bad "SIGTERM death: $? $out"
        out=$(pid1 -- cat /proc/1/comm 2>/dev/null)
        [ "$out" = vigil ] && ok "PID 1 is vigil" || bad "PID 1: $out"
        out=$(pid1 -v -- sh -c 'sleep 0.2 & exit 4' 2>&1)
        [ $? = 4 ] && echo "$out" | grep -q "orphans reaped: 1" && ok "the orphan reaped, exit 4" || bad "orphan: $out"
        ctr=vigil-e2e-release-stop-$$
        docker run -d --name "$ctr" --label "$label" --entrypoint /usr/bin/vigil "$deb_image" -- sleep 1000 >/dev/null
        t=$SECONDS
        docker stop -t 20 "$ctr" >/dev/null
        code=$(docker wait "$ctr")
        [ "$code" = 143 ] && [ $((SECONDS - t)) -lt 15 ] && ok "docker stop: SIGTERM forwarded, exit 143 in $((SECONDS - t)) s" ||
            bad "docker stop: exit $code after $((SECONDS - t)) s: $(docker logs "$ctr" 2>&1 | tail -3)"
        docker rm -f "$ctr" >/dev/null 2>&1
        out=$(docker run --rm --label "$label" "$deb_image" sh -c 'dpkg -r vigil >/dev/null && ! test -e /usr/bin/vigil && echo removed' 2>&1)
        [ "$out" = removed ] && ok "dpkg -r vigil removes it" || bad "dpkg -r: $out"

        section "5. as docker-init: the package's /usr/bin/vigil where dockerd's init-path puts it, and podman's --init-path"
        init=$work/deb/usr/bin/vigil
        dpkg-deb -x "dist/$host_deb" "$work/deb"
        out=$(docker run --rm --label "$label" -v "$init:/sbin/docker-init:ro" --entrypoint /sbin/docker-init "$base" --version 2>&1)
        [ "$out" = "tini version $version - vigil" ] && ok "docker-init --version: $out" || bad "docker-init --version: $out"
        out=$(docker run --rm --init --label "$label" -v "$init:/sbin/docker-init:ro" "$base" \
            sh -c 'tr "\0" " " </proc/1/cmdline; exit 5' 2>/dev/null)
        code=$?
        case "$code $out" in
            "5 /sbin/docker-init -- sh -c "*) ok "docker run --init: PID 1 is $out, exit 5" ;;
            *) bad "docker run --init: exit $code: $out" ;;
        esac
        # A busybox image is all the command needs (Debian's busybox-static).
        mkdir -p "$work/busybox/bin"
        cp "$(command -v busybox)" "$work/busybox/bin/"
        ln -s busybox "$work/busybox/bin/sh"
        ln -s busybox "$work/busybox/bin/cat"
        if tar -C "$work/busybox" -c . | "${pm[@]}" import --change "LABEL $label" - vigil-e2e-release-busybox >/dev/null 2>&1; then
            out=$("${pm[@]}" "${pm_run[@]}" --init --init-path "$init" vigil-e2e-release-busybox \
                sh -c 'cat /proc/1/comm; exit 6' 2>"$work/err")
            code=$?
            [ "$code" = 6 ] && [ "$out" = vigil ] && ok "podman run --init --init-path $init: PID 1 is vigil, exit 6" ||
                bad "podman --init-path: exit $code: $out $(cat "$work/err")"
        else
            bad "podman import of a busybox image failed"
        fi
    else
        bad "no Debian image to install into"
    fi

    section "6. the multi-arch image through a local registry, pulled by Docker and podman"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$work/registry"
    cat >"$work/registry.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$port
EOF
    docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
    registry_pid=$!
    registry_up() { python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v2/', timeout=2)"; }
    if wait_for 20 registry_up; then
        ok "docker-registry serves on 127.0.0.1:$port"
    else
        bad "docker-registry did not start: $(tail -3 "$work/registry.log")"
    fi
    ref=localhost:$port/vigil:$version
    check "skopeo copy --all oci-archive:dist/vigil_$version.oci.tar docker://$ref" \
        skopeo copy --quiet --all --dest-tls-verify=false "oci-archive:dist/vigil_$version.oci.tar" "docker://$ref"
    platforms=$(skopeo inspect --raw --tls-verify=false "docker://$ref" 2>/dev/null | python3 -c '
import json, sys
index = json.load(sys.stdin)
print(" ".join("/".join(filter(None, [m["platform"]["os"], m["platform"]["architecture"], m["platform"].get("variant")])) for m in index["manifests"]))')
    want=$(for row in "${release_targets[@]}"; do read -r _ _ _ _ p _ <<<"$row"; printf '%s ' "$p"; done)
    [ "$platforms " = "$want" ] && ok "one manifest list: $platforms" || bad "manifest list: '$platforms', want '$want'"
    index=$(skopeo inspect --raw --tls-verify=false "docker://$ref" 2>/dev/null | sha256sum | cut -d' ' -f1)
    grep -q "sha256:$index" dist/RELEASE.md && ok "the registry serves the index dist/RELEASE.md names: sha256:$index" ||
        bad "the registry's index sha256:$index is not dist/RELEASE.md's"

    # The foreign platforms run under qemu-user: binfmt_misc entries with
    # the F flag (the interpreter opened now, so it works in containers),
    # for this run only.
    if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc && binfmt_mounted=true
    fi
    for row in "${release_targets[@]}"; do
        read -r arch _ qemu _ <<<"$row"
        "dist/vigil-$arch" --version >/dev/null 2>&1 && continue
        conf=/usr/lib/binfmt.d/${qemu%-static}.conf
        entry=$(grep -v '^#' "$conf" 2>/dev/null | head -1)
        name=$(echo "$entry" | cut -d: -f2)
        [ -n "$name" ] || {
            bad "$conf missing (qemu-user-static)"
            continue
        }
        [ -e "/proc/sys/fs/binfmt_misc/$name" ] && continue
        echo "$entry" >/proc/sys/fs/binfmt_misc/register && binfmt_added+=("$name")
    done
    [ "${#binfmt_added[@]}" -gt 0 ] && echo "  note  binfmt_misc entries for this run: ${binfmt_added[*]}"

    for row in "${release_targets[@]}"; do
        read -r arch target _ _ platform _ <<<"$row"
        if docker pull -q --platform "$platform" "$ref" >/dev/null 2>"$work/pull.err"; then
            pulled+=("$(docker image inspect -f '{{.Id}}' "$ref")")
            out=$(docker run --rm --label "$label" --platform "$platform" "$ref" --version 2>&1)
            got=$(docker image inspect -f '{{.Os}}/{{.Architecture}}{{if .Variant}}/{{.Variant}}{{end}}' "$ref" 2>&1)
            licenses=$(docker image inspect -f '{{index .Config.Labels "org.opencontainers.image.licenses"}}' "$ref" 2>&1)
            want_licenses=MIT
            [[ "$target" == *-musl ]] || want_licenses="MIT AND LGPL-2.1-or-later"
            if [ "$out" = "vigil version $version
commit $short, built for $target" ] && [ "$got" = "$platform" ] && [ "$licenses" = "$want_licenses" ]; then
                ok "docker $platform: --version names $target; licenses $licenses"
            else
                bad "docker $platform (image says $got, licenses $licenses): $out"
            fi
        else
            bad "docker pull --platform $platform: $(cat "$work/pull.err")"
        fi
        "${pm[@]}" pull -q --tls-verify=false --platform "$platform" "$ref" >/dev/null 2>"$work/err"
        out=$("${pm[@]}" "${pm_run[@]}" --platform "$platform" "$ref" --version 2>>"$work/err")
        # (podman's inspect has no variant: os/architecture only.)
        got=$("${pm[@]}" image inspect -f '{{.Os}}/{{.Architecture}}' "$ref" 2>&1)
        [ "$out" = "vigil version $version
commit $short, built for $target" ] && [ "$got" = "$(echo "$platform" | cut -d/ -f1-2)" ] && ok "podman $platform: --version names $target" ||
            bad "podman $platform (image says $got): $out $(cat "$work/err")"
    done
    labels=$(docker image inspect -f '{{json .Config.Labels}}' "$ref" 2>&1)
    out=$(python3 - "$labels" "$version" "$commit" "$epoch" <<'PY' 2>&1
import datetime, json, sys
labels, version, commit, epoch = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
p = "org.opencontainers.image."
for k in ["version", "revision", "created", "source", "licenses", "title", "description"]:
    assert labels.get(p + k), f"no {p + k}: {labels}"
assert labels[p + "version"] == version and labels[p + "revision"] == commit, labels
created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
assert labels[p + "created"] == created, (labels[p + "created"], created)
print(", ".join(f"{k[len(p):]}={v}" for k, v in sorted(labels.items()) if k.startswith(p) and k != p + "description"))
PY
    ) && ok "labels: $out" || bad "labels: $out"

    mkdir -p "$work/copy-from"
    cat >"$work/copy-from/Dockerfile" <<EOF
FROM $base
COPY --from=$ref /vigil /vigil
ENTRYPOINT ["/vigil", "--"]
CMD ["sh", "-c", "cat /proc/1/comm; exit 3"]
EOF
    if docker build -q --label "$label" -t "vigil-e2e-release-copy-from:$run_id" "$work/copy-from" >"$work/build.log" 2>&1; then
        out=$(docker run --rm --label "$label" "vigil-e2e-release-copy-from:$run_id" 2>"$work/err")
        code=$?
        [ "$code" = 3 ] && [ "$out" = vigil ] && ok "COPY --from=$ref /vigil /vigil: PID 1 is vigil, exit 3" ||
            bad "COPY --from image: exit $code: $out $(cat "$work/err")"
    else
        bad "docker build with COPY --from=$ref: $(tail -5 "$work/build.log")"
    fi
fi

section "7. crates.io: cargo publish --dry-run, cargo install --path ."
if cargo publish --dry-run --locked >"$work/publish.log" 2>&1; then
    ok "cargo publish --dry-run: $(grep -o 'Packaged [0-9]* files, [^)]*)' "$work/publish.log")"
else
    bad "cargo publish --dry-run: $(grep -v '^warning: ignoring' "$work/publish.log" | tail -5)"
fi
if cargo install --locked --quiet --path . --root "$work/install" >"$work/install.log" 2>&1; then
    installed=$(ls "$work/install/bin")
    [ "$installed" = vigil ] && ok "cargo install --path . installs bin/vigil" || bad "cargo install installed: $installed"
    out=$("$work/install/bin/vigil" -- sh -c 'exit 3' 2>&1)
    [ $? = 3 ] && ok "the installed vigil -- sh -c 'exit 3': 3" || bad "installed vigil: $? $out"
    out=$(unshare --pid --fork --mount-proc "$work/install/bin/vigil" -v -- sh -c 'sleep 0.2 & exit 4' 2>&1)
    [ $? = 4 ] && echo "$out" | grep -q "orphans reaped: 1" &&
        ok "the installed vigil as PID 1: orphan reaped, exit 4" || bad "installed vigil as PID 1: $out"
else
    bad "cargo install --path .: $(tail -5 "$work/install.log")"
fi

section "8. The static glibc binaries and the LGPL"
glibc_archs=()
for row in "${release_targets[@]}"; do
    read -r arch target _ debarch _ <<<"$row"
    bin=dist/vigil-$arch
    notice=dist/vigil_${version}_$arch.glibc.txt
    deb=dist/vigil_${version}_$debarch.deb
    if ! file -b "$bin" | grep -q 'for GNU/Linux'; then
        [ ! -e "$notice" ] && ok "$bin: musl, no glibc notice" || bad "$bin is linked with musl, but $notice exists"
        continue
    fi
    glibc_archs+=("$arch")
    if [ ! -f "$notice" ]; then
        bad "$bin is linked with glibc, and $notice is missing"
        continue
    fi
    out=$(python3 - "$notice" "$arch" "$target" "$version" "$short" <<'PY' 2>&1
import re, sys
path, arch, target, version, commit = sys.argv[1:]
text = open(path).read()
head, _, prose = text.partition("\n\n")
facts = dict(line.split(": ", 1) for line in head.splitlines())
want = {"Binary": f"vigil-{arch}", "Target": target, "License": "LGPL-2.1-or-later"}
for key, value in want.items():
    assert facts.get(key) == value, (key, facts.get(key), value)
glibc = re.fullmatch(r"glibc \(= (.+)\)", facts["Built-Using"]).group(1)
upstream = glibc.split(":")[-1].rsplit("-", 1)[0]
assert facts["Glibc-Version"] == upstream, facts
assert facts["Source"] == f"https://snapshot.debian.org/package/glibc/{glibc}/", facts
assert facts["Source-Upstream"] == f"https://ftp.gnu.org/gnu/glibc/glibc-{upstream}.tar.xz", facts
assert re.match(r"libc6-dev-\S+-cross \S+ \(Debian source package cross-toolchain-base(-ports)? \S+\)$", facts["Linked-From"]), facts
assert facts["Program-Source"].endswith(f"/{version} (commit {commit})"), facts
assert facts["Relink"] == f"VIGIL_GLIBC_DIR=DIR bash scripts/release.sh {arch}", facts
for needed in ["GNU Lesser General Public License", facts["Source"], "VIGIL_GLIBC_DIR=DIR"]:
    assert needed in prose, needed
print(f"glibc {facts['Glibc-Version']}, Debian's glibc {glibc}")
PY
    ) && ok "$notice: $out, its source and the relink route" || bad "$notice: $out"
    grep -q "  vigil_${version}_$arch.glibc.txt$" dist/SHA256SUMS && ok "$notice is in SHA256SUMS" || bad "$notice is not in SHA256SUMS"
    rm -rf "$work/x" && dpkg-deb -x "$deb" "$work/x"
    built_using=$(dpkg-deb -f "$deb" Built-Using)
    source=$(sed -n 's/^Source: //p' "$notice")
    if [ "$built_using" = "$(sed -n 's/^Built-Using: //p' "$notice")" ] &&
        zcat "$work/x/usr/share/doc/vigil/glibc.txt.gz" | cmp -s - "$notice" &&
        grep -qF "$source" "$work/x/usr/share/doc/vigil/copyright"; then
        ok "$deb: Built-Using: $built_using, the notice as glibc.txt.gz, the source in its copyright"
    else
        bad "$deb: Built-Using: $built_using; notice or copyright does not match $notice"
    fi
    # On a machine with the same cross package, the notice says what it holds.
    installed=$(dpkg-query -W -f '${Built-Using}' "libc6-dev-$debarch-cross" 2>/dev/null || true)
    if [ -n "$installed" ]; then
        echo "$installed" | grep -qF "$(sed -n 's/^Built-Using: //p' "$notice")" &&
            ok "$notice: libc6-dev-$debarch-cross here says the same" ||
            bad "$notice: libc6-dev-$debarch-cross here is built using $installed"
    fi
done
[ "${#glibc_archs[@]}" -gt 0 ] && ok "static glibc binaries: ${glibc_archs[*]}" || bad "no static glibc binary in dist/ (armv7 and three others were)"

# The relink route, as the notice gives it, for armv7: against a copy of the
# glibc the release was linked with, put elsewhere. Same glibc, so the same
# bytes; the link map shows the copy was the one used.
case "$commit" in
    *-modified | unknown) echo "  note  dist/ is not from a committed tree: the relink route is not rebuilt" ;;
    *)
        relink=$work/relink
        git clone --quiet --no-checkout "$src" "$relink/src" && git -C "$relink/src" checkout --quiet --detach "$commit"
        mkdir -p "$relink/glibc/lib"
        cp /usr/arm-linux-gnueabihf/lib/*.a /usr/arm-linux-gnueabihf/lib/*crt*.o "$relink/glibc/lib/"
        [ -f .cargo/host.toml ] && cp .cargo/host.toml "$relink/src/.cargo/"
        # strace says which libc.a and start files the linker opened.
        (cd "$relink/src" && VIGIL_GLIBC_DIR="$relink/glibc" CARGO_TARGET_DIR="$relink/target" \
            strace -f -qq -e trace=openat -e signal=none -o "$relink/trace" \
            bash scripts/release.sh armv7) >"$relink/log" 2>&1
        status=$?
        opened() { grep -v ENOENT "$relink/trace" | grep -c "\"$1\""; }
        if [ "$(opened "$relink/glibc/lib/libc.a")" -gt 0 ] && [ "$(opened "$relink/glibc/lib/crt1.o")" -gt 0 ] &&
            [ "$(opened /usr/arm-linux-gnueabihf/lib/libc.a)" = 0 ] &&
            [ "$(opened /usr/lib/gcc-cross/arm-linux-gnueabihf/12/../../../../arm-linux-gnueabihf/lib/libc.a)" = 0 ]; then
            ok "the relink opened the copy's libc.a and crt1.o, not Debian's"
        else
            bad "the relink's linker opened: $(grep -E 'libc\.a|crt1\.o' "$relink/trace" | grep -v ENOENT | head -3)"
        fi
        if [ "$status" = 0 ] && cmp -s "$relink/src/dist/vigil-armv7" dist/vigil-armv7; then
            ok "VIGIL_GLIBC_DIR=copy bash scripts/release.sh armv7: the same bytes as dist/vigil-armv7"
        else
            bad "the relink of armv7 (exit $status): $(tail -3 "$relink/log") $(cmp "$relink/src/dist/vigil-armv7" dist/vigil-armv7 2>&1 | head -1)"
        fi
        grep -q "Linked-Against: $relink/glibc/lib" "$relink/src/dist/vigil_${version}_armv7.glibc.txt" 2>/dev/null &&
            ok "the relinked binary's notice names the glibc it was linked against" ||
            bad "the relinked notice: $(head -5 "$relink/src/dist/vigil_${version}_armv7.glibc.txt" 2>&1)"
        ;;
esac

echo "  ($((SECONDS - section_start)) s)"
echo "== release checks took $((SECONDS - t0)) s"
echo "release-check: $passed passed, $failed failed"
[ "$failed" = 0 ]
