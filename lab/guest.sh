#!/bin/sh
# The lab's guest: runs inside a virtual machine whose init is vigil
# (`rdinit=/bin/vigil ... -- -v --drain-timeout 2s /bin/sh /lab/guest.sh`),
# with busybox, /bin/vigil (the release binary under test) and /bin/nsrun
# (lab/nsrun.c) in the initramfs. POSIX sh for busybox's ash.
#
# It mounts the cgroup version the kernel command line asks for
# (LAB_CGROUP=v1 or v2), checks vigil on a real kernel, and prints one line
# per check on the console:
#
#   RESULT NAME PASS|FAIL|UNAVAILABLE DETAIL
#
# then `LAB-DONE leftover=PID` and exits 3. lab/run.py reads the console:
# any FAIL, a missing LAB-DONE or a timeout fails the lab. UNAVAILABLE (a
# memory controller the kernel was built without) is accepted only where
# the kernel's own config says so. What happens after LAB-DONE is checked
# by the host: vigil, as the machine's init, drains the one process left
# behind here (kernel threads are no leftovers) and passes 3 on to the
# kernel's panic message.
#
# `guest.sh pidns-init CMD...` and `guest.sh container-init CMD...` are the
# first process of a new PID namespace (started by nsrun): they mount what
# a container runtime would mount there, then exec CMD.

PATH=/bin
export PATH

case "$1" in
pidns-init)
    shift
    mount -t proc proc /proc || exit 125
    exec "$@"
    ;;
container-init)
    # /proc of the new PID namespace, and the cgroup filesystem as a
    # runtime shows it: the container's own cgroup as the root.
    shift
    mount -t proc proc /proc || exit 125
    if [ "$LAB_CGROUP" = v2 ]; then
        # The machine's own mount of the same hierarchy is in the way (the
        # kernel will not stack it on itself); this mount namespace is
        # private, so taking it off here leaves the machine's alone.
        umount /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup || exit 125
    else
        mount -t tmpfs cgroup /sys/fs/cgroup && mkdir /sys/fs/cgroup/memory &&
            mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory || exit 125
    fi
    exec "$@"
    ;;
esac

# The machine: /proc first, since busybox finds itself through it.
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
echo "LAB-START arch=$LAB_ARCH cgroup=$LAB_CGROUP kernel=$(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)"

result() {
    name=$1 verdict=$2
    shift 2
    echo "RESULT $name $verdict $*"
}
# One line of at most 300 bytes from a file, for a RESULT's detail.
show() { tr '\n' ' ' <"$1" | cut -c1-300; }

# wait_for TENTHS CMD...: until CMD succeeds, at most TENTHS tenths of a second.
wait_for() {
    n=$1
    shift
    while [ "$n" -gt 0 ]; do
        "$@" && return 0
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}
has_line() { grep -qx "$2" "$1" 2>/dev/null; }

# run ARGS...: vigil (not PID 1) with ARGS; $st, /tmp/err.
run() {
    vigil "$@" </dev/null >/tmp/out 2>/tmp/err
    st=$?
}
# in_pidns ARGS...: vigil as PID 1 of a new PID namespace.
in_pidns() {
    nsrun -p -m -- sh /lab/guest.sh pidns-init vigil "$@" </dev/null >/tmp/out 2>/tmp/err
    st=$?
}
# expect NAME WANT DETAIL: a check on $st.
expect() {
    if [ "$st" = "$2" ]; then
        result "$1" PASS "status $st $3"
    else
        result "$1" FAIL "status $st, want $2 $3: $(show /tmp/err)"
    fi
}

# ---- exit status: the child's code, 128+N for a signal, 127 ----------------
run -- sh -c 'exit 3'
expect exit-code 3 "(not PID 1)"
run -- sh -c 'kill -USR1 $$'
expect exit-signal 138 "(SIGUSR1, not PID 1)"
run -- /nonexistent/program
expect exit-not-found 127 "(not PID 1)"
in_pidns -- sh -c 'exit 4'
expect exit-code-pid1 4 "(PID 1 of a PID namespace)"
in_pidns -- sh -c 'kill -TERM $$'
expect exit-signal-pid1 143 "(SIGTERM, PID 1 of a PID namespace)"

# ---- forwarding, realtime signals included ---------------------------------
# The child records what it gets; vigil is signalled from here. As PID 1
# of a namespace, only signals vigil blocks or handles reach it from
# outside: vigil blocks them all.
receiver='trap "echo USR1 >>/tmp/rec" USR1; trap "echo RT36 >>/tmp/rec" 36
trap "echo RT64 >>/tmp/rec" 64; trap "echo TERM >>/tmp/rec; exit 0" TERM
: >/tmp/ready; while :; do sleep 0.1; done'
forwarding() { # NAME, then how to start vigil
    name=$1
    shift
    rm -f /tmp/rec /tmp/ready /tmp/vigil.pid
    "$@" </dev/null >/dev/null 2>/tmp/err &
    bg=$!
    if ! wait_for 300 test -e /tmp/ready || ! wait_for 50 test -s /tmp/vigil.pid; then
        result "$name" FAIL "the child never got ready: $(show /tmp/err)"
        kill -KILL "$bg"
        return
    fi
    target=$(cat /tmp/vigil.pid)
    missing=
    for sig in USR1:USR1 36:RT36 64:RT64 TERM:TERM; do
        kill -"${sig%%:*}" "$target"
        wait_for 100 has_line /tmp/rec "${sig#*:}" || missing="$missing ${sig#*:}"
    done
    wait "$bg"
    st=$?
    if [ -z "$missing" ] && [ "$st" = 0 ]; then
        result "$name" PASS "SIGUSR1, SIGRTMIN+2 (36), SIGRTMAX (64), SIGTERM forwarded; exit 0"
    else
        result "$name" FAIL "not forwarded:${missing:- none}; exit $st: $(show /tmp/err)"
    fi
}
forwarding forward nsrun -w /tmp/vigil.pid -- vigil -- sh -c "$receiver"
forwarding forward-pid1 nsrun -p -m -w /tmp/vigil.pid -- sh /lab/guest.sh pidns-init \
    vigil -- sh -c "$receiver"

# ---- PID 1 of a new PID namespace: orphans, hooks, stop, drain -------------
rm -f /tmp/up /tmp/hook /tmp/vigil.pid /tmp/orphans
nsrun -p -m -w /tmp/vigil.pid -- sh /lab/guest.sh pidns-init vigil -v \
    --pre-stop 'sh -c "echo pre-stop >>/tmp/hook"' -- \
    sh -c 'for i in 1 2 3; do (sleep 0.1 & echo $! >>/tmp/orphans); done; sleep 1000 &
           for p in $(cat /tmp/orphans); do while [ -e /proc/$p ]; do sleep 0.1; done; done
           : >/tmp/up; wait' \
    </dev/null >/dev/null 2>/tmp/err &
bg=$!
if wait_for 300 test -e /tmp/up; then
    kill -TERM "$(cat /tmp/vigil.pid)"
    wait "$bg"
    st=$?
    if [ "$st" = 143 ] && has_line /tmp/hook pre-stop &&
        grep -q "drain: SIGTERM to 1 process.*; orphans reaped: 4" /tmp/err; then
        result pid1-stop PASS "SIGTERM from outside: pre-stop hook, 143, 3 orphans reaped, 1 left-over drained"
    else
        result pid1-stop FAIL "status $st: $(show /tmp/err)"
    fi
else
    result pid1-stop FAIL "the child never got ready: $(show /tmp/err)"
    kill -KILL "$bg"
fi

# ---- not PID 1: a real subreaper drains a daemon that ignores SIGTERM -----
# The daemon leaves its session and its parent at once, so only a
# subreaper keeps it below vigil. qemu-user cannot show this (it rejects
# PR_SET_CHILD_SUBREAPER).
rm -f /tmp/daemon.pid
run -v --drain-timeout 1s -- sh -c 'setsid sh -c "trap \"\" TERM; sleep 1000 & echo \$! >/tmp/daemon.pid"; sleep 0.3; exit 0'
daemon=$(cat /tmp/daemon.pid 2>/dev/null)
if [ "$st" = 0 ] && [ -n "$daemon" ] && ! grep -q "subreaper" /tmp/err &&
    grep -q "drain: SIGTERM to 1 process, then SIGKILL (drain timeout (1s) over) to: $daemon (sleep 1000)" /tmp/err &&
    [ ! -e "/proc/$daemon" ]; then
    result subreaper-drain PASS "setsid daemon $daemon ignoring SIGTERM: SIGTERM, then SIGKILL after the drain timeout; exit 0"
else
    result subreaper-drain FAIL "status $st, daemon ${daemon:-unknown}: $(show /tmp/err)"
fi

# ---- OOM kills -------------------------------------------------------------
# A memory cgroup of 32 MiB per check, and dd touching a 64 MiB buffer.
hog='dd if=/dev/zero of=/dev/null bs=64M count=1'
memory=
if [ "$LAB_CGROUP" = v2 ]; then
    mount -t cgroup2 cgroup2 /sys/fs/cgroup &&
        echo +memory >/sys/fs/cgroup/cgroup.subtree_control &&
        mkdir /sys/fs/cgroup/lab && echo +memory >/sys/fs/cgroup/lab/cgroup.subtree_control &&
        grep -qw memory /sys/fs/cgroup/lab/cgroup.controllers && memory=/sys/fs/cgroup/lab
    events=memory.events
    if [ -n "$memory" ] && ! grep -q ':memory:' /proc/self/cgroup; then
        result cgroup PASS "v2 only: memory controller in $memory/cgroup.controllers; /proc/self/cgroup: $(show /proc/self/cgroup)"
    else
        result cgroup FAIL "v2 with its memory controller: $(show /proc/self/cgroup) $(show /proc/cgroups)"
    fi
else
    mount -t tmpfs cgroup /sys/fs/cgroup && mkdir /sys/fs/cgroup/memory &&
        mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory 2>/tmp/mount.err &&
        mkdir /sys/fs/cgroup/memory/lab && memory=/sys/fs/cgroup/memory/lab
    events=memory.oom_control
    if [ -n "$memory" ] && grep -q ':memory:/' /proc/self/cgroup; then
        result cgroup PASS "v1: memory controller mounted; /proc/self/cgroup: $(show /proc/self/cgroup)"
    else
        memory=
        result cgroup UNAVAILABLE "no v1 memory controller: $(show /tmp/mount.err) /proc/cgroups: $(show /proc/cgroups)"
    fi
fi

# new_cgroup NAME: a fresh memory cgroup of 32 MiB; its path in $cg.
new_cgroup() {
    cg=$memory/$1
    mkdir "$cg" || return 1
    if [ "$LAB_CGROUP" = v2 ]; then
        echo 32M >"$cg/memory.max"
    else
        echo 32M >"$cg/memory.limit_in_bytes"
    fi
}
oom_kills() { sed -n 's/^oom_kill //p' "$cg/$events"; }
# report_has TEXT: vigil's exit report says TEXT.
report_has() { grep "^vigil:" /tmp/err | grep -qF "$1"; }

# oom_check NAME VIEW: the child OOM-killed, then a grandchild while the
# child exits 0, with vigil as PID 1 in VIEW:
#   container  own PID, mount and cgroup namespaces, the cgroup mounted as
#              its root, as a container runtime shows it;
#   host       own PID namespace only: the whole cgroup tree in sight.
oom_check() {
    view=$1
    case $view in
    container) how='-p -m -c' init=container-init ;;
    host) how='-p -m' init=pidns-init ;;
    esac
    new_cgroup "child-$view"
    # shellcheck disable=SC2086
    nsrun $how -g "$cg" -- sh /lab/guest.sh $init vigil -- $hog </dev/null >/tmp/out 2>/tmp/err
    st=$?
    if [ "$st" = 137 ] && ! grep -q "^nsrun:" /tmp/err &&
        report_has "child was killed by SIGKILL (status 137) by the kernel OOM killer" &&
        report_has "the kernel OOM killer killed 1 process in this container" &&
        ! report_has "(not the child" &&
        { [ "$LAB_CGROUP" = v1 ] || report_has "one process at a time (memory.oom.group is off)"; }; then
        result "oom-child-$view" PASS "137, named the OOM killer's; cgroup counted $(oom_kills)"
    else
        result "oom-child-$view" FAIL "status $st, cgroup counted $(oom_kills): $(show /tmp/err)"
    fi
    new_cgroup "grandchild-$view"
    # shellcheck disable=SC2086
    nsrun $how -g "$cg" -- sh /lab/guest.sh $init vigil -- sh -c "$hog; exit 0" </dev/null >/tmp/out 2>/tmp/err
    st=$?
    if [ "$st" = 0 ] &&
        report_has "the kernel OOM killer killed 1 process in this container (not the child"; then
        result "oom-grandchild-$view" PASS "child exited 0, report names 1 OOM kill (not the child); cgroup counted $(oom_kills)"
    else
        result "oom-grandchild-$view" FAIL "status $st, cgroup counted $(oom_kills): $(show /tmp/err)"
    fi
}

if [ -n "$memory" ]; then
    oom_check container
    oom_check host

    # A CI wrapper (not PID 1) in a cgroup that had an OOM kill before it
    # started: only the kill during its run is vigil's to report.
    new_cgroup wrapper
    nsrun -g "$cg" -- sh -c "$hog" 2>/dev/null
    before=$(oom_kills)
    nsrun -g "$cg" -- vigil -- sh -c "$hog; exit 0" </dev/null >/tmp/out 2>/tmp/err
    st=$?
    if [ "$st" = 0 ] && [ "$before" = 1 ] && [ "$(oom_kills)" = 2 ] &&
        report_has "the kernel OOM killer killed 1 process in this container (not the child"; then
        result oom-since-start PASS "cgroup counted $before before vigil, $(oom_kills) after; report: 1"
    else
        result oom-since-start FAIL "status $st, counted $before before, $(oom_kills) after: $(show /tmp/err)"
    fi

    # memory.oom.group=1 (what the kubelet sets on cgroup v2): the kernel
    # kills every process of the cgroup, vigil too, so vigil cannot
    # report; nsrun, outside the cgroup like a runtime's shim, sees it die.
    # The termination log keeps the provisional message vigil wrote at
    # start: the group kill for memory as the likely end, and the limit.
    # (Counts from memory.events join it only when vigil runs between the
    # first memory.max hit and the kill; here, with tmpfs pages that reclaim
    # cannot free, the kill comes first.)
    if [ "$LAB_CGROUP" = v2 ]; then
        new_cgroup group
        echo 1 >"$cg/memory.oom.group"
        mkdir -p /tmp/fill && mount -t tmpfs fill /tmp/fill
        rm -f /tmp/tlog-group
        nsrun -p -m -c -g "$cg" -- sh /lab/guest.sh container-init \
            vigil --termination-log /tmp/tlog-group -- \
            sh -c 'dd if=/dev/zero of=/tmp/fill/x bs=1M count=64; exit 0' </dev/null >/tmp/out 2>/tmp/err
        st=$?
        umount /tmp/fill
        group_kills=$(sed -n 's/^oom_group_kill //p' "$cg/memory.events")
        tlog=$(cat /tmp/tlog-group 2>/dev/null)
        if [ "$st" = 137 ] && grep -q "^nsrun: .* killed by signal 9" /tmp/err &&
            ! grep -q "^vigil:" /tmp/err && [ "$group_kills" = 1 ] &&
            case $tlog in
            *"the whole container, vigil included, for memory (memory.oom.group=1)"*33554432*) true ;;
            *) false ;;
            esac; then
            result oom-group PASS "vigil killed with the rest (oom_kill $(oom_kills), oom_group_kill $group_kills), no report; termination log: $tlog"
        else
            result oom-group FAIL "status $st, oom_kill $(oom_kills), oom_group_kill ${group_kills:-?}, termination log ${tlog:-empty}: $(show /tmp/err)"
        fi
    fi
else
    for name in oom-child-container oom-grandchild-container oom-child-host \
        oom-grandchild-host oom-since-start; do
        result "$name" UNAVAILABLE "no memory controller on cgroup $LAB_CGROUP"
    done
fi

# ---- the end: one process left behind for vigil's own drain ----------------
# It ignores SIGTERM, so vigil SIGKILLs it after its drain timeout and names
# it in the exit report; kernel threads must be neither signalled, waited
# for nor named there (lab/run.py reads the report from the console).
sh -c 'trap "" TERM; exec sleep 1000' </dev/null >/dev/null 2>&1 &
kthreads=$(awk '$1 == 2 || $4 == 2' /proc/[0-9]*/stat | wc -l)
echo "LAB-DONE leftover=$! kthreads=$kthreads uptime=$(cut -d' ' -f1 /proc/uptime)"
exit 3
