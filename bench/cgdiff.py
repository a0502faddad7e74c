#!/usr/bin/env python3
"""Where a callgrind count goes, per function: one file, or the difference
of two (a budgeted path is a difference: bench/callgrind.py).

    python3 bench/cgdiff.py A.cg [B.cg] [--top N] [--match REGEX]

Prints, for each function, its own instructions (self), those of
everything it called too (inclusive) and how many times it was called, in
A, or in A minus B; largest first.
Inlined code counts for the function it was inlined into (callgrind_annotate
splits it by source file instead, which scatters one function over many
lines). Use it on the files bench/callgrind.py leaves in
bench/results/callgrind/, from a vigil built with symbols:

    CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=1 \\
        cargo build --release --target-dir target/sym
    python3 bench/callgrind.py --check bench/budgets.json \\
        --vigil target/sym/x86_64-unknown-linux-musl/release/vigil
    python3 bench/cgdiff.py bench/results/callgrind/vigil.burst2000.cg \\
        bench/results/callgrind/vigil.burst0.cg

Inclusive figures of recursive functions count the recursion more than
once; self figures add up to the total.
"""

import argparse
import collections
import re
import sys

NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


def parse(path):
    """({function: self Ir}, {function: inclusive Ir}, {function: times
    called}, total)."""
    names = {}
    self_ir = collections.Counter()
    incl = collections.Counter()
    called = collections.Counter()
    fn = cfn = None
    in_call = False
    total = 0
    # One column per position ("line", or "instr line" when the run
    # dumped instructions too), then the events: Ir first.
    npos = 1

    def name_of(spec):
        m = NAME.match(spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), spec)

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if line.startswith("positions:"):
                npos = len(line.split()) - 1
            elif c.isdigit() or c in "+-*":
                parts = line.split()
                if len(parts) <= npos:
                    continue
                ir = int(parts[npos])
                if in_call:
                    incl[fn] += ir  # the callee's inclusive cost, for this caller
                    in_call = False
                else:
                    self_ir[fn] += ir
                    incl[fn] += ir
                    total += ir
            elif line.startswith("fn="):
                fn = name_of(line[3:])
            elif line.startswith("cfn="):
                cfn = name_of(line[4:])
            elif line.startswith("calls="):
                in_call = True
                if cfn != fn:  # recursion is not a new call
                    called[cfn] += int(line[6:].split()[0])
    return self_ir, incl, called, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b", nargs="?")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--match", help="only functions whose name matches this regular expression")
    ap.add_argument("--by", choices=["self", "inclusive"], default="self")
    args = ap.parse_args()
    sa, ia, ca, ta = parse(args.a)
    if args.b:
        sb, ib, cb, tb = parse(args.b)
        sa.subtract(sb)
        ia.subtract(ib)
        ca.subtract(cb)
        ta -= tb
        print(f"{args.a} minus {args.b}: {ta:,} instructions")
    else:
        print(f"{args.a}: {ta:,} instructions")
    key = sa if args.by == "self" else ia
    pat = re.compile(args.match) if args.match else None
    rows = [(fn, sa[fn], ia[fn], ca[fn]) for fn in set(sa) | set(ia)
            if (sa[fn] or ia[fn]) and (pat is None or pat.search(fn or ""))]
    rows.sort(key=lambda r: -abs(key[r[0]]))
    print(f"{'self':>10} {'inclusive':>10} {'calls':>7}  function")
    for fn, s, i, c in rows[:args.top]:
        print(f"{s:>10,} {i:>10,} {c:>7,}  {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
