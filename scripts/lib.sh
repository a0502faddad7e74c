# Shared by scripts/stress.sh and scripts/valgrind.sh: a work directory
# removed on exit (with the unshare wrapper still running, if any), the
# PROBLEM counter, and readers of the counting child's output.
# Source it after setting $work_prefix and reading the caller's own
# settings (VIGIL_VALGRIND_FREELIST); the caller sets $unshare_pid once it
# starts vigil.

# vigil runs with none of the VIGIL_*/TINI_* variables of whoever runs this
# (CI's own knobs, VIGIL_E2E_REQUIRE and the like, would each be a warning
# about a variable vigil does not know, and these runs fail on any warning).
while read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(VIGIL|TINI)_' || true)

work=$(mktemp -d "/tmp/${work_prefix:-vigil}.XXXXXX")
unshare_pid=
cleanup() {
    if [ -n "$unshare_pid" ] && kill -0 "$unshare_pid" 2>/dev/null; then
        kill -KILL "$unshare_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

fail=0
problem() { echo "PROBLEM: $*"; fail=1; }

count_of() { # sig -> count in the child's counts file
    awk -v s="$1" '$1 == "sig" && $2 == s {print $3; found=1} END {if (!found) print 0}' "$work/counts"
}
zombies_under() { # how many zombie children $1 has
    ps -eo ppid=,stat= | awk -v p="$1" '$1 == p && $2 ~ /^Z/' | wc -l
}
