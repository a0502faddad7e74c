#!/usr/bin/env bash
# Stress vigil as PID 1: a signal storm, then an orphan storm, then a normal
# stop. Prints the figures and exits non-zero when something went wrong.
#
#   scripts/stress.sh [--signals N] [--orphans N] [--burst B] [--vigil PATH] [--no-build]
#
# Defaults are modest (a few seconds, for .ci/run): 20,000 signals and 2,000
# orphans. The full-size run is
#
#   scripts/stress.sh --signals 100000 --orphans 100000
#
# and --vigil target/$(bash scripts/host-target.sh)/release/vigil runs it
# against the static release build instead of the debug one.
#
# What it does (root needed: PID namespace, nsenter):
#   - starts `unshare --pid --fork --mount-proc VIGIL -v -- sigcount ...`;
#     sigcount (tests/programs/sigcount.rs) counts every signal it receives and
#     the time of the last one of each kind;
#   - signal storm: tests/programs/storm.rs sends N signals to vigil, as fast as
#     it can, cycling through HUP USR1 USR2 WINCH 33 RTMIN RTMIN+6 RTMAX
#     (and SIGCHLD, which vigil must swallow). Realtime signals queue: each
#     one must reach the child. Classic ones coalesce: the last one of each
#     kind must reach the child after it was sent;
#   - orphan storm: tests/programs/orphans.rs, run inside the namespace with
#     nsenter, makes N orphans in bursts of B; they are re-parented to vigil,
#     which must reap them all (the exit report counts them), leave no
#     zombie, and go on reaping afterwards (one more orphan);
#   - vigil's VmHWM/VmRSS before, between and after;
#   - SIGTERM: vigil must exit 143.
set -euo pipefail
cd "$(dirname "$0")/.."

signals=20000
orphans=2000
burst=500
# This machine's musl target (x86_64 or aarch64), made cargo's default.
target=$(bash scripts/host-target.sh)
vigil=target/$target/debug/vigil
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --signals) signals=$2; shift 2 ;;
        --orphans) orphans=$2; shift 2 ;;
        --burst) burst=$2; shift 2 ;;
        --vigil) vigil=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; exit 0 ;;
        *) echo "stress.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

if [ "$build" = 1 ]; then
    cargo build --quiet --bins --examples
fi
ex=target/$target/debug/examples
for f in "$vigil" "$ex/sigcount" "$ex/storm" "$ex/orphans"; do
    [ -x "$f" ] || { echo "stress.sh: $f missing (build first)" >&2; exit 1; }
done
vigil=$(readlink -f "$vigil")

work_prefix=vigil-stress
. scripts/lib.sh

mem() { # pid -> "VmHWM N kB, VmRSS M kB"
    awk '/^VmHWM|^VmRSS/ {printf "%s %s kB  ", $1, $2}' "/proc/$1/status"
}
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
last_of() {
    awk -v s="$1" '$1 == "sig" && $2 == s {print $4; found=1} END {if (!found) print 0}' "$work/counts"
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}'; }

echo "== vigil: $vigil"
unshare --pid --fork --mount-proc -- "$vigil" -v -- \
    "$ex/sigcount" --out "$work/counts" --die-on 15 2>"$work/vigil.log" &
unshare_pid=$!
for _ in $(seq 500); do [ -e "$work/counts.ready" ] && break; sleep 0.02; done
[ -e "$work/counts.ready" ] || { echo "the child never got ready"; cat "$work/vigil.log"; exit 1; }
vp=$(cat /proc/$unshare_pid/task/*/children | tr -d ' \n')
echo "vigil host pid $vp; at start: $(mem "$vp")"
hwm_start=$(hwm "$vp")

# --- signal storm ----------------------------------------------------------
kinds=1,10,12,28,33,34,40,64
echo
echo "== signal storm: $signals signals to vigil (kinds $kinds + SIGCHLD)"
t0=$(now)
"$ex/storm" --pid "$vp" --count "$signals" --signals "$kinds,17" >"$work/storm"
send_time=$(elapsed "$t0")
sent=$(awk '$1 == "total" {print $3}' "$work/storm")
failed=$(awk '$1 == "total" {print $5}' "$work/storm")
echo "sent $sent signals in ${send_time}s (kill() failures: $failed)"
# Wait until every realtime signal arrived and the last classic ones too.
delivered_all() {
    local sig n last
    while read -r _ sig _ n _ _ _ last; do
        [ "$sig" = 17 ] && continue
        if [ "$sig" -ge 32 ]; then
            [ "$(count_of "$sig")" -ge "$n" ] || return 1
        else
            [ "$(last_of "$sig")" -gt "$last" ] || return 1
        fi
    done < <(grep '^sig ' "$work/storm")
}
for _ in $(seq 600); do delivered_all && break; sleep 0.1; done
drain_time=$(elapsed "$t0")
printf '%-8s %10s %10s  %s\n' signal sent delivered "last one arrived after it was sent"
total_delivered=0
while read -r _ sig _ n _ _ _ last; do
    got=$(count_of "$sig")
    total_delivered=$((total_delivered + got))
    if [ "$sig" = 17 ]; then
        printf '%-8s %10s %10s  %s\n' "$sig" "$n" "$got" "(SIGCHLD: must not be forwarded)"
        [ "$got" = 0 ] || problem "SIGCHLD was forwarded to the child"
        continue
    fi
    arrived=$([ "$(last_of "$sig")" -gt "$last" ] && echo yes || echo NO)
    printf '%-8s %10s %10s  %s\n' "$sig" "$n" "$got" "$arrived"
    [ "$arrived" = yes ] || problem "the last signal $sig did not arrive"
    if [ "$sig" -ge 32 ] && [ "$got" != "$n" ]; then
        problem "realtime signal $sig: sent $n, delivered $got"
    fi
done < <(grep '^sig ' "$work/storm")
echo "signals sent: $sent; delivered to the child: $total_delivered (classic signals coalesce); all delivered ${drain_time}s after the storm began"
kill -0 "$vp" 2>/dev/null || { problem "vigil died in the signal storm"; cat "$work/vigil.log"; exit 1; }
echo "after the signal storm: $(mem "$vp")"
hwm_mid=$(hwm "$vp")

# --- orphan storm ----------------------------------------------------------
echo
echo "== orphan storm: $orphans orphans in bursts of $burst"
t0=$(now)
nsenter --target "$vp" --pid -- "$ex/orphans" --count "$orphans" --burst "$burst"
make_time=$(elapsed "$t0")
for _ in $(seq 600); do [ "$(zombies_under "$vp")" = 0 ] && break; sleep 0.1; done
z=$(zombies_under "$vp")
echo "made $orphans orphans in ${make_time}s; zombies left: $z"
[ "$z" = 0 ] || problem "$z zombies left after the orphan storm"
# vigil still reaps after the storm: one more orphan.
nsenter --target "$vp" --pid -- "$ex/orphans" --count 1 --life-ms 200
sleep 0.5
for _ in $(seq 100); do [ "$(zombies_under "$vp")" = 0 ] && break; sleep 0.1; done
z=$(zombies_under "$vp")
[ "$z" = 0 ] || problem "the orphan made after the storm is a zombie"
echo "after the orphan storm: $(mem "$vp")"
hwm_end=$(hwm "$vp")

# --- stop ------------------------------------------------------------------
echo
echo "== stop: SIGTERM"
kill -TERM "$vp"
status=0
wait "$unshare_pid" || status=$?
unshare_pid=
echo "vigil exited $status"
[ "$status" = 143 ] || problem "vigil exited $status, not 143"
reaped=$(sed -n 's/.*orphans reaped: \([0-9]*\).*/\1/p' "$work/vigil.log" | tail -1)
expected=$((orphans + 1))
if grep -q panicked "$work/vigil.log"; then problem "vigil panicked"; fi
if grep -q '^vigil: \(warning\|error\)' "$work/vigil.log"; then
    problem "vigil complained:"
    grep '^vigil: \(warning\|error\)' "$work/vigil.log" | head -5
fi

echo
echo "== figures"
echo "signals sent:        $sent (kill() failures $failed)"
echo "signals delivered:   $total_delivered (realtime: every one; classic: coalesced, last of each kind arrived)"
echo "orphans made:        $expected ($orphans + 1 after the storm)"
echo "orphans reaped:      ${reaped:-?} (exit report)"
echo "zombies left:        $z"
echo "vigil VmHWM:         $hwm_start kB at start, $hwm_mid kB after the signal storm, $hwm_end kB after the orphan storm"
[ "${reaped:-x}" = "$expected" ] || problem "exit report says ${reaped:-nothing} orphans reaped, expected $expected"
if [ "$fail" = 0 ]; then echo "OK"; else echo "FAILED"; fi
exit "$fail"
