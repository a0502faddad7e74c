#!/usr/bin/env bash
# vigil under valgrind (memcheck) as PID 1: start, signal storms, orphan
# storms, stop. Fails on any invalid access, and when vigil's memory keeps
# growing from one round of storms to the next (VmRSS from the middle
# round to the last; heap in use at exit).
#
#   scripts/valgrind.sh [--rounds R] [--signals N] [--orphans N] [--slack-kb K]
#
# Defaults (a few seconds, for .ci/run): 5 rounds of 3,000 signals and
# 1,000 orphans. A long run: --rounds 40 --signals 20000 --orphans 5000.
# Needs root (PID namespace, nsenter) and valgrind (Debian: apt-get install
# valgrind).
#
# It runs the host's glibc debug build (target/HOST/debug/vigil, HOST being
# rustc's host such as x86_64-unknown-linux-gnu; with symbols) as
#   unshare --pid --fork --mount-proc -- valgrind --error-exitcode=99
#       --leak-check=no VIGIL -v -- sigcount ...
# so vigil (inside valgrind) is PID 1. Each round sends N signals of mixed
# kinds (tests/programs/storm.rs) and makes N orphans (tests/programs/orphans.rs via
# nsenter), waits until the child has them all and no zombie is left, and
# samples VmRSS/VmHWM of the valgrind process. At the end SIGTERM must stop
# vigil with status 143 (99 would be valgrind reporting errors), and the
# valgrind log must say "ERROR SUMMARY: 0 errors".
#
# memcheck keeps freed blocks out of reuse (--freelist-vol, 20 MB by
# default), which makes the process grow with every allocation even when
# nothing leaks: the freelist is cut to 200 kB (VIGIL_VALGRIND_FREELIST) so
# that VmRSS follows live memory. The heap left in use at exit (valgrind's
# HEAP SUMMARY) must stay under 64 KiB: a leak of a few bytes per signal or
# per orphan would exceed it.
#
# --vgdb=no: valgrind's gdbserver FIFOs are named after the pid, and every
# valgrind that is PID 1 of some namespace would share the same names in
# /tmp.
#
# Signal 64 (SIGRTMAX) is left out of the storm: valgrind keeps it for its
# own use (it is never delivered to the program under valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
signals=3000
orphans=1000
slack_kb=512
freelist_vol=${VIGIL_VALGRIND_FREELIST:-200000}
max_heap_in_use=65536
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --signals) signals=$2; shift 2 ;;
        --orphans) orphans=$2; shift 2 ;;
        --slack-kb) slack_kb=$2; shift 2 ;;
        *) echo "valgrind.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
# The glibc build: memcheck replaces malloc only in a dynamically linked
# program, so the static musl build would hide heap errors from it.
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --quiet --bins --examples --target "$host"
vigil=$(readlink -f "target/$host/debug/vigil")
ex=target/$host/debug/examples

work_prefix=vigil-valgrind
. scripts/lib.sh
kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

echo "== $(valgrind --version): $vigil as PID 1"
unshare --pid --fork --mount-proc -- valgrind --error-exitcode=99 --leak-check=no --vgdb=no --freelist-vol=${freelist_vol} --freelist-big-blocks=$((freelist_vol / 2)) \
    --log-file="$work/valgrind.log" "$vigil" -v -- \
    "$ex/sigcount" --out "$work/counts" --die-on 15 2>"$work/vigil.log" &
unshare_pid=$!
for _ in $(seq 600); do [ -e "$work/counts.ready" ] && break; sleep 0.1; done
[ -e "$work/counts.ready" ] || { echo "the child never got ready"; cat "$work/valgrind.log" "$work/vigil.log"; exit 1; }
vp=$(cat /proc/$unshare_pid/task/*/children | tr -d ' \n')
echo "valgrind/vigil host pid $vp: VmRSS $(kb "$vp" VmRSS) kB at start"

kinds=1,10,12,28,32,33,34,40,63
rt_kinds="32 33 34 40 63"
declare -A rt_total
for k in $rt_kinds; do rt_total[$k]=0; done
rss=()
for r in $(seq "$rounds"); do
    "$ex/storm" --pid "$vp" --count "$signals" --signals "$kinds,17" >"$work/storm"
    for k in $rt_kinds; do
        n=$(awk -v s="$k" '$1 == "sig" && $2 == s {print $4}' "$work/storm")
        rt_total[$k]=$((rt_total[$k] + n))
    done
    nsenter --target "$vp" --pid -- "$ex/orphans" --count "$orphans" --burst 200
    # Wait until every realtime signal reached the child and no zombie is left.
    for _ in $(seq 1200); do
        done_=1
        for k in $rt_kinds; do [ "$(count_of "$k")" -ge "${rt_total[$k]}" ] || { done_=0; break; }; done
        [ "$done_" = 1 ] && [ "$(zombies_under "$vp")" = 0 ] && break
        sleep 0.1
    done
    for k in $rt_kinds; do
        [ "$(count_of "$k")" = "${rt_total[$k]}" ] || problem "round $r: signal $k: sent ${rt_total[$k]}, the child got $(count_of "$k")"
    done
    z=$(zombies_under "$vp")
    [ "$z" = 0 ] || problem "round $r: $z zombies left"
    kill -0 "$vp" 2>/dev/null || { problem "vigil died in round $r"; break; }
    rss+=("$(kb "$vp" VmRSS)")
    echo "round $r: $signals signals, $orphans orphans: VmRSS $(kb "$vp" VmRSS) kB, VmHWM $(kb "$vp" VmHWM) kB"
done

kill -TERM "$vp" 2>/dev/null || true
status=0
wait "$unshare_pid" || status=$?
unshare_pid=
echo "vigil under valgrind exited $status"
[ "$status" = 143 ] || problem "exit status $status (143 expected; 99 = valgrind found errors)"
grep -q "ERROR SUMMARY: 0 errors" "$work/valgrind.log" || problem "valgrind reported errors"
reaped=$(sed -n 's/.*orphans reaped: \([0-9]*\).*/\1/p' "$work/vigil.log" | tail -1)
[ "${reaped:-x}" = "$((rounds * orphans))" ] || problem "orphans reaped: ${reaped:-?}, expected $((rounds * orphans))"
# Memory must not grow: from the middle round to the last, VmRSS stays
# within the slack (the first rounds warm valgrind up: translations, shadow
# memory, the allocator's arenas).
if [ "${#rss[@]}" -ge 2 ]; then
    mid=$(( (${#rss[@]} - 1) / 2 ))
    growth=$(( ${rss[-1]} - ${rss[$mid]} ))
    echo "VmRSS by round: ${rss[*]} kB"
    echo "growth from round $((mid + 1)) to ${#rss[@]}: $growth kB (slack $slack_kb kB)"
    [ "$growth" -le "$slack_kb" ] || problem "memory grows: +$growth kB from round $((mid + 1)) to round ${#rss[@]}"
fi
echo "--- valgrind's own messages (besides the banner and summary):"
grep -v -E '^==[0-9]+== *($|Memcheck|Copyright|Using Valgrind|Command:|Parent PID|HEAP SUMMARY|in use at exit|total heap usage|For a detailed|For lists of|ERROR SUMMARY)' \
    "$work/valgrind.log" || echo "(none)"
grep -E "in use at exit|total heap usage|ERROR SUMMARY" "$work/valgrind.log" || true
in_use=$(sed -n 's/.*in use at exit: \([0-9,]*\) bytes.*/\1/p' "$work/valgrind.log" | tr -d ,)
[ -n "$in_use" ] && [ "$in_use" -le "$max_heap_in_use" ] \
    || problem "heap in use at exit: ${in_use:-?} bytes (at most $max_heap_in_use expected)"
if grep -q panicked "$work/vigil.log"; then problem "vigil panicked"; fi
if [ "$fail" = 0 ]; then echo "OK"; else echo "FAILED"; fi
exit "$fail"
