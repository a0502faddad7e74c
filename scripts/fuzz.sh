#!/usr/bin/env bash
# Fuzzes each of vigil's parsers of outside input (fuzz/fuzz_targets/, one
# target per parser) for SECONDS each, default 20: `bash scripts/fuzz.sh
# [SECONDS]`. Each run starts from the seeds in fuzz/seeds/TARGET and what
# earlier runs here found (fuzz/corpus/TARGET, not in git), and uses
# fuzz/dicts/TARGET.dict when there is one. A target that crashes (a panic,
# a failed assertion) fails the script; its input is left in
# fuzz/artifacts/TARGET/, and `cargo +nightly fuzz run --sanitizer none
# TARGET FILE`, run in fuzz/, replays it.
#
# Needs the nightly toolchain and cargo-fuzz (.ci/run installs both).
# Without AddressSanitizer: vigil's unsafe code is all in src/sys/'s
# system calls, which no parser makes, and without it the targets build
# faster and run more inputs in the same time. Debug assertions and
# overflow checks stay on.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-20}
fuzz=(cargo +nightly fuzz)
"${fuzz[@]}" build --sanitizer none
# The binaries are run as `cargo fuzz run` runs them, without its check
# that each is up to date (a second or more per target).
bin=target/$(rustc -vV | sed -n "s/^host: //p")/release
status=0
for target in $("${fuzz[@]}" list); do
    mkdir -p "corpus/$target" "artifacts/$target"
    options=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="artifacts/$target/")
    [ -f "dicts/$target.dict" ] && options+=(-dict="dicts/$target.dict")
    log=target/$target.log
    if ! "$bin/$target" "${options[@]}" "corpus/$target" "seeds/$target" >"$log" 2>&1; then
        tail -n 40 "$log"
        echo "fuzz: $target failed (fuzz/$log; the input is in fuzz/artifacts/$target/)"
        status=1
    fi
    # The last coverage line and the count of inputs run.
    echo "$target: $(grep -E '^#[0-9]+' "$log" | tail -n 1 | tr -s ' \t' ' ')"
done
exit "$status"
