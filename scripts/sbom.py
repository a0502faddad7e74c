#!/usr/bin/env python3
"""Writes the release's CycloneDX 1.5 SBOM (JSON) from Cargo.lock and `cargo metadata`.

    python3 scripts/sbom.py TARGET... > dist/vigil_VERSION.cdx.json

One document for the release: the binaries of all the targets are built
from the same lock file, and their dependencies are the union of what
`cargo metadata --filter-platform TARGET` resolves for each TARGET given
(for vigil's seven targets the sets are the same). Components:

- the crates linked into the binary (normal dependencies of the package,
  followed transitively): scope "required";
- the crates that only ran at build time (build scripts' dependencies and
  proc-macros of those crates): scope "excluded", which CycloneDX gives to
  components used but not shipped;
- dev-dependencies (the tests') are not part of the release and not listed.

Each component has its purl (pkg:cargo/NAME@VERSION), the SHA-256 of its
.crate as Cargo.lock records it, its SPDX license expression and its
repository. The document is a function of the source alone: its timestamp
is SOURCE_DATE_EPOCH and its serial number a UUID derived from the package,
version and commit (VIGIL_COMMIT), so a rebuild writes the same bytes.
The same crates, with the same kinds, are in every binary's `.dep-v0`
section (scripts/audit-info.py), which scripts/release-check.sh compares.
"""

import datetime
import json
import os
import re
import subprocess
import sys
import tomllib
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def metadata(target):
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--offline", "--filter-platform", target],
        cwd=ROOT,
        check=True,
        stdout=subprocess.PIPE,
    ).stdout
    return json.loads(out)


def spdx(expr):
    """Cargo's license field as an SPDX expression: the old `A/B` form means `A OR B`."""
    if not expr:
        return None
    return re.sub(r"\s*/\s*", " OR ", expr.strip())


def resolve(meta):
    """{package id: "required" | "excluded"} for the root's non-dev dependencies."""
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    root = meta["resolve"]["root"]

    def edges(pid, kinds):
        for dep in nodes[pid]["deps"]:
            if any(k["kind"] in kinds for k in dep["dep_kinds"]):
                yield dep["pkg"]

    # What is linked: the root's normal dependencies, transitively.
    required = set()
    todo = [root]
    while todo:
        pid = todo.pop()
        for dep in edges(pid, (None,)):
            if dep not in required:
                required.add(dep)
                todo.append(dep)
    # What ran at build time: build-dependencies of anything built, and all
    # that those depend on.
    excluded = set()
    todo = [d for pid in required | {root} for d in edges(pid, ("build",))]
    while todo:
        pid = todo.pop()
        if pid in excluded or pid in required:
            continue
        excluded.add(pid)
        todo.extend(edges(pid, (None, "build")))
    scopes = {pid: "required" for pid in required}
    scopes.update({pid: "excluded" for pid in excluded})
    return root, scopes, nodes


def purl(pkg):
    return f"pkg:cargo/{pkg['name']}@{pkg['version']}"


def main(targets):
    if not targets:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        print("sbom.py: SOURCE_DATE_EPOCH is not set (scripts/release.sh sets it)", file=sys.stderr)
        return 2
    commit = os.environ.get("VIGIL_COMMIT", "unknown")
    with open(os.path.join(ROOT, "Cargo.lock"), "rb") as f:
        checksums = {(p["name"], p["version"]): p.get("checksum") for p in tomllib.load(f)["package"]}

    packages, scopes, deps = {}, {}, {}
    root = None
    for target in targets:
        meta = metadata(target)
        root, target_scopes, nodes = resolve(meta)
        for pkg in meta["packages"]:
            packages[pkg["id"]] = pkg
        for pid, scope in target_scopes.items():
            # Linked for one target counts as linked.
            if scopes.get(pid) != "required":
                scopes[pid] = scope
        for pid in list(target_scopes) + [root]:
            wanted = {d["pkg"] for d in nodes[pid]["deps"] if any(k["kind"] != "dev" for k in d["dep_kinds"])}
            deps.setdefault(pid, set()).update(wanted)

    top = packages[root]
    refs = {pid: purl(packages[pid]) for pid in list(scopes) + [root]}
    components = []
    for pid in sorted(scopes, key=lambda p: (packages[p]["name"], packages[p]["version"])):
        pkg = packages[pid]
        c = {
            "type": "library",
            "bom-ref": refs[pid],
            "name": pkg["name"],
            "version": pkg["version"],
            "scope": scopes[pid],
            "purl": refs[pid],
        }
        if pkg.get("description"):
            c["description"] = " ".join(pkg["description"].split())
        checksum = checksums.get((pkg["name"], pkg["version"]))
        if checksum:
            c["hashes"] = [{"alg": "SHA-256", "content": checksum}]
        if spdx(pkg.get("license")):
            c["licenses"] = [{"expression": spdx(pkg["license"])}]
        if pkg.get("repository"):
            c["externalReferences"] = [{"type": "vcs", "url": pkg["repository"]}]
        components.append(c)

    created = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
    product = {
        "type": "application",
        "bom-ref": refs[root],
        "name": top["name"],
        "version": top["version"],
        "description": " ".join((top.get("description") or "").split()),
        "licenses": [{"expression": spdx(top["license"])}],
        "purl": refs[root],
        "properties": [
            {"name": "vigil:commit", "value": commit},
            {"name": "vigil:binary", "value": "vigil"},
        ]
        + [{"name": "vigil:target", "value": t} for t in targets],
    }
    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "serialNumber": "urn:uuid:" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"{purl(top)}#{commit}")),
        "version": 1,
        "metadata": {
            "timestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tools": {"components": [{"type": "application", "name": "scripts/sbom.py", "version": commit}]},
            "component": product,
        },
        "components": components,
        "dependencies": [
            {"ref": refs[pid], "dependsOn": sorted(refs[d] for d in deps.get(pid, ()) if d in refs)}
            for pid in [root] + sorted(scopes, key=lambda p: refs[p])
        ],
    }
    json.dump(bom, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
