//! The command line and every VIGIL_*/TINI_* variable, fuzzed.
//!
//! A property test with a seeded PRNG (no dependencies): each case
//! builds an argument vector from a grammar of valid and invalid pieces
//! (options, signal names and numbers, durations, FROM:TO rules, hook
//! commands, quotes, unicode, empty and very long strings, non-UTF-8 bytes)
//! and a random environment, runs the real vigil (not as PID 1) with COMMAND
//! a helper that writes a marker file and exits with a chosen code, and
//! checks:
//!
//! - vigil never dies of a signal, never hangs, never prints "panicked";
//! - either the child ran (marker written) and vigil's status is one the
//!   contract allows: the child's, or 137 when a rewrite to SIGKILL or a
//!   grace deadline may have killed it, or 161/162 (below); 0 instead
//!   where `-e` may have listed that, and 1 instead of a 0 after a failed
//!   post-start hook; every stderr line starting `vigil: `;
//! - or vigil printed help/version/license (status 0, stdout, no stderr);
//! - or COMMAND could not be run (126/127, `vigil: error: cannot run "..."`);
//! - or it is a usage error: status 2, exactly one stderr line starting
//!   `vigil: error: `, and neither the child nor a hook ran.
//!
//! `VIGIL_FUZZ_SEED=N` replays a run, and with `VIGIL_FUZZ_ONLY=I` only
//! its case I; `VIGIL_FUZZ_CASES=N` sets the number of cases (default
//! 500). The seed is printed at the start, and the seed and the case's
//! number in every failure message.
//!
//! vigil is started with every signal blocked, so its child inherits that
//! mask (vigil restores the mask it was started with): a stop sequence
//! started by a failing post-start hook then cannot kill the child with
//! SIGTERM, and only SIGKILL can end it early. With one exception: the
//! child is a musl program, and musl unblocks 33 and 34 (its own two
//! signals) when a program first sets a handler, which Rust's runtime does
//! before `main`. So a stop whose signal `--stop-signals` or `--rewrite`
//! made 33 or 34 can end the child (161, 162), and it races the child's
//! own exit: the judge allows both. Rewrites *to* SIGSTOP are not
//! generated: a
//! stopped child stops vigil too (job control, by design).
//! Hook commands run with PATH set to a directory holding only `hookmark`,
//! so a random hook command can never run anything on the machine.

use crate::common::options::{self, Kind, OPTIONS};
use crate::common::{
    CmdFailed, SplitMix64, TempDir, run_with_deadline, seed_from_env, set_sigmask, test_program,
    usage_error_in, vigil_bin,
};
use std::ffi::OsString;
use std::ops::{Deref, DerefMut};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The shared seeded PRNG, and whether the grammar below picks valid pieces
/// only (`tame`, half of the cases), so that whole command lines that vigil
/// accepts are common too.
struct Rng {
    mix: SplitMix64,
    tame: bool,
}

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng {
            mix: SplitMix64::new(seed),
            tame: false,
        }
    }
}

impl Deref for Rng {
    type Target = SplitMix64;
    fn deref(&self) -> &SplitMix64 {
        &self.mix
    }
}

impl DerefMut for Rng {
    fn deref_mut(&mut self) -> &mut SplitMix64 {
        &mut self.mix
    }
}

// ---------------------------------------------------------------------------
// The grammar
// ---------------------------------------------------------------------------

/// A word of the grammar, and whether the tame grammar picks it too (the
/// tame words are all values vigil accepts).
type Word = (&'static str, bool);

/// The words of `list`: all of them, or only the tame ones (in the same
/// order, so that a seed picks the same words as ever).
fn words(list: &[Word], tame_only: bool) -> Vec<&'static str> {
    list.iter()
        .filter(|&&(_, tame)| tame || !tame_only)
        .map(|&(word, _)| word)
        .collect()
}

/// Signal names and numbers for `-p` and `--rewrite`.
const SIGNAL_NAMES: &[Word] = &[
    ("TERM", true),
    ("SIGTERM", true),
    ("term", true),
    ("SigTerm", false),
    ("INT", true),
    ("HUP", true),
    ("USR1", true),
    ("SIGUSR2", true),
    ("QUIT", true),
    ("KILL", true),
    ("WINCH", true),
    ("CHLD", true),
    ("CLD", false),
    ("IOT", false),
    ("POLL", false),
    ("PIPE", true),
    ("ALRM", true),
    ("CONT", true),
    ("TSTP", true),
    ("TTIN", false),
    ("TTOU", false),
    ("RTMIN", true),
    ("SIGRTMIN", false),
    ("RTMIN+1", true),
    ("RTMIN+30", false),
    ("RTMIN+31", false),
    ("RTMAX", true),
    ("RTMAX-1", false),
    ("SIGRTMAX-30", true),
    ("RTMIN+-1", false),
    ("RTMIN+99", false),
    ("RTMAX-99", false),
    ("SIG", false),
    ("SIGSIG", false),
    ("FOO", false),
    (" TERM ", true),
    ("TERM\n", false),
    ("+15", false),
    ("0x0f", false),
    ("015", false),
    ("1.0", false),
];

/// Durations for every `*-timeout`, `--grace-period` and `--pre-stop-sleep`.
const DURATIONS: &[Word] = &[
    ("0", true),
    ("1", true),
    ("2s", true),
    ("500ms", true),
    ("1ms", true),
    ("0.5s", true),
    ("0.000000001s", true),
    ("1.5m", true),
    ("0.01h", true),
    ("2m", true),
    ("1h", true),
    ("5x", false),
    ("", false),
    (" ", false),
    ("s", false),
    ("-1s", false),
    ("1.s", false),
    (".5", false),
    ("1e3", false),
    ("1.2.3s", false),
    ("1 s", false),
    ("١٢s", false),
    ("99999999999999999999999h", false),
    ("18446744073709551615", true),
    ("18446744073709551615s", false),
    ("18446744073709551616s", false),
    ("9223372036854775807s", true),
    ("9223372036854775808s", false),
    ("5124095576030431h", true),
    ("153722867280912930m", true),
    ("0.9999999999s", false),
    ("1000000000000ms", false),
];

/// Rewrite targets never include SIGSTOP (see the module doc).
fn signal(r: &mut Rng, for_rewrite_target: bool) -> String {
    loop {
        let s = match r.below(4) {
            _ if r.tame => match r.below(2) {
                0 => r.pick(&words(SIGNAL_NAMES, true)).to_string(),
                _ => (1 + r.below(64)).to_string(),
            },
            0 | 1 => r.pick(&words(SIGNAL_NAMES, false)).to_string(),
            2 => (r.below(70) as i64 - 2).to_string(),
            _ => r
                .pick(&[
                    "99999999999999999999",
                    "-2147483648",
                    "2147483647",
                    "64",
                    "65",
                ])
                .to_string(),
        };
        let stops = ["19", "STOP", "SIGSTOP"].contains(&s.trim());
        if !(for_rewrite_target && stops) {
            return s;
        }
    }
}

fn duration(r: &mut Rng) -> String {
    let durations = words(DURATIONS, r.tame);
    r.pick(&durations).to_string()
}

fn exit_code(r: &mut Rng) -> String {
    if r.tame {
        return r.below(256).to_string();
    }
    match r.below(3) {
        0 => r.below(300).to_string(),
        1 => r
            .pick(&[
                "-1",
                "256",
                " 3",
                "3 ",
                "abc",
                "",
                "1e2",
                "0x10",
                "+3",
                "99999999999",
            ])
            .to_string(),
        _ => r.pick(&["0", "3", "42", "77", "200"]).to_string(),
    }
}

/// `--live-failures`: a count, or what is not one.
fn count(r: &mut Rng) -> String {
    if r.tame {
        return r.pick(&["1", "2", "3"]).to_string();
    }
    r.pick(&["1", "3", "0", "-1", "x", "", " 2", "4294967296"])
        .to_string()
}

/// The causes `--exit-code` names.
const CAUSES: [&str; 7] = [
    "stopped",
    "grace",
    "timeout",
    "unhealthy",
    "not-ready",
    "post-start",
    "oom",
];

/// `--exit-code CAUSE=STATUS`, or a rule it refuses.
fn exit_code_rule(r: &mut Rng) -> String {
    if r.tame || r.chance(2) {
        return format!("{}={}", r.pick(&CAUSES), r.pick(&["0", "3", "77", "200"]));
    }
    r.pick(&[
        "stopped",
        "=3",
        "nope=1",
        "stopped=256",
        "stopped=3=4",
        "STOPPED=0",
        "",
    ])
    .to_string()
}

fn rewrite(r: &mut Rng) -> String {
    if r.tame {
        return match r.below(4) {
            0 => format!("{}:0", signal(r, false)),
            _ => format!("{}:{}", signal(r, false), signal(r, true)),
        };
    }
    match r.below(6) {
        0 => format!("{}:0", signal(r, false)),
        1 => r
            .pick(&[
                "TERM",
                "TERM:",
                ":QUIT",
                "a:b:c",
                ":",
                "::",
                "TERM:QUIT:INT",
                "",
            ])
            .to_string(),
        _ => format!("{}:{}", signal(r, false), signal(r, true)),
    }
}

/// A hook command that runs `hookmark` (so that it leaves `m`, the hook
/// marker, when it runs), quoted in one of three ways (`which`: 0 to 2).
fn hookmark_command(m: &impl std::fmt::Display, which: usize) -> String {
    match which {
        0 => format!("hookmark '{m}' 0"),
        1 => format!("hookmark \"{m}\" 1"),
        _ => format!("hookmark {m} 0 'quoted arg' \"more args\" unicode-é"),
    }
}

/// A hook command (split by shell rules inside vigil).
fn hook(r: &mut Rng, hook_marker: &Path) -> String {
    let m = hook_marker.display();
    if r.tame {
        return match r.below(4) {
            which @ 0..=2 => hookmark_command(&m, which),
            _ => "no-such-hook 'with args'".to_string(),
        };
    }
    match r.below(8) {
        which @ 0..=2 => hookmark_command(&m, which),
        3 => r
            .pick(&[
                "",
                "   ",
                "'",
                "\"",
                "sh -c 'oops",
                "a\\",
                "\\",
                "no-such-hook",
                "no such hook",
                "\"\"",
                "''",
                "$HOME",
                "`id`",
                "a;b",
                "a|b",
            ])
            .to_string(),
        _ => junk(r).to_string_lossy().into_owned(),
    }
}

fn path(r: &mut Rng) -> String {
    if r.tame {
        return r
            .pick(&["tlog", "no/such/dir/tlog", "tlog-é", "..", ""])
            .to_string();
    }
    match r.below(3) {
        0 => r
            .pick(&[
                "",
                "tlog",
                "no/such/dir/tlog",
                ".",
                "..",
                "tlog-é",
                " ",
                "-",
            ])
            .to_string(),
        _ => {
            // Anything without '/' stays inside the case's directory.
            junk(r)
                .to_string_lossy()
                .replace('/', "_")
                .chars()
                .take(300)
                .collect()
        }
    }
}

/// Random text: empty, quotes, unicode, control characters, dashes, very
/// long, non-UTF-8. Never a NUL byte (argv and environ cannot hold one) and
/// never a '/' (so nothing resolves outside the case's directory).
fn junk(r: &mut Rng) -> OsString {
    match r.below(10) {
        0 => OsString::new(),
        1 => OsString::from(r.pick(&[
            "-",
            "--",
            "---",
            "-=",
            "=",
            "-e",
            "-p",
            "-vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv",
            "-sgwv",
            "-e3",
            "-e=3",
            "-pTERM",
            "-p=TERM",
            "--rewrite=TERM:QUIT",
            "--grace-period=",
            "--post-start",
            "--pre-stop=",
            "--=",
            "--version=1",
            "--help=x",
            "-h-",
            "-l",
            "-s",
            "--no-such-option",
            "--grace",
            "--drain",
            "-V",
            "--verbose",
            "-- ",
        ])),
        2 => OsString::from(r.pick(&[
            "é",
            "日本語",
            "🦀💥",
            "\u{202e}evil",
            "e\u{301}",
            "\u{feff}",
            "\t",
            "\n",
            "a\nb",
            "\x1b[31mred",
            "'",
            "\"",
            "\\",
            "$(id)",
            "`id`",
            "*",
            "~",
            "%s%n",
            "{}",
        ])),
        3 => {
            // Very long.
            let n = [1_000, 10_000, 100_000][r.below(3)];
            OsString::from("x".repeat(n))
        }
        4 => {
            // Non-UTF-8 bytes.
            let len = 1 + r.below(12);
            let bytes: Vec<u8> = (0..len)
                .map(|_| match r.below(4) {
                    0 => 0x80 + r.below(0x40) as u8,
                    1 => 0xc0 + r.below(0x40) as u8,
                    2 => 0xff,
                    _ => b'a' + r.below(26) as u8,
                })
                .collect();
            OsString::from_vec(bytes)
        }
        _ => {
            // Random printable-ish characters, ASCII and beyond.
            let len = r.below(20);
            let s: String = (0..len)
                .map(|_| match r.below(5) {
                    0 => char::from_u32(0x20 + r.below(0x5f) as u32).unwrap_or('x'),
                    1 => char::from_u32(0xa0 + r.below(0x2000) as u32).unwrap_or('é'),
                    2 => ['\'', '"', '\\', ' ', ':', ',', '=', '-', '+', '.'][r.below(10)],
                    3 => char::from(b'0' + r.below(10) as u8),
                    _ => char::from(b'a' + r.below(26) as u8),
                })
                .filter(|&c| c != '/' && c != '\0')
                .collect();
            OsString::from(s)
        }
    }
}

/// A value for an option of the table's `kind`. Every kind that takes a
/// value has its generator here: a new kind of option fails to compile
/// until the fuzz grammar knows its values.
fn value_of(r: &mut Rng, kind: Kind, hook_marker: &Path) -> String {
    match kind {
        Kind::Signal => signal(r, false),
        Kind::StopSignals => (0..=r.below(3))
            .map(|_| signal(r, false))
            .collect::<Vec<_>>()
            .join(","),
        Kind::ExitCode => exit_code(r),
        Kind::Rewrite => rewrite(r),
        Kind::Command => hook(r, hook_marker),
        Kind::Duration => duration(r),
        Kind::Path => path(r),
        // Relative to the case's own directory, where vigil runs.
        Kind::Install => r.pick(&[".", "no-such-dir", ""]).to_string(),
        Kind::User => user(r),
        Kind::LogFormat => log_format(r),
        Kind::Caps => caps(r),
        Kind::Url => url(r),
        Kind::Count => count(r),
        Kind::ExitCodes => exit_code_rule(r),
        // They take no value: `valued` leaves them out. `-P` is never
        // generated: without a command it pauses until a stop signal
        // (tests/pause.rs); the fixed cases hold its usage errors.
        Kind::Switch
        | Kind::Level
        | Kind::PrintHelp
        | Kind::PrintVersion
        | Kind::PrintLicense
        | Kind::Pause => String::new(),
    }
}

/// A `--log-format`: text, or a value it rejects (a usage error, said in
/// text). The structured formats would change every line the judge reads;
/// tests/it/log_format.rs holds them to their schema.
fn log_format(r: &mut Rng) -> String {
    if r.tame {
        return "text".to_string();
    }
    r.pick(&["text", " text ", "yaml", "", "TEXT", "jso", "text,json"])
        .to_string()
}

/// A probe's URL: the tame ones are refused at once (nothing listens on
/// port 1 or at that socket path), so that a probe, or `--ready-when`,
/// never waits; the others are malformed.
fn url(r: &mut Rng) -> String {
    let tame = [
        "tcp://127.0.0.1:1",
        "http://127.0.0.1:1/healthz",
        "http://localhost:1/",
        "http://[::1]:1/?x=1",
        "unix:/nonexistent/vigil.sock",
        "http+unix://%2Fnonexistent%2Fvigil.sock/",
    ];
    if r.tame {
        return r.pick(&tame).to_string();
    }
    let wild = [
        "https://127.0.0.1:1/",
        "127.0.0.1:1",
        "http://",
        "tcp://localhost",
        "http://[::1/",
        "ftp://a/",
        "http://a b/",
        "http://x:0/",
        "unix:relative.sock",
    ];
    if r.chance(2) {
        r.pick(&tame).to_string()
    } else {
        r.pick(&wild).to_string()
    }
}

/// Whether the case asks for `--probe` among its options (generously: a
/// `--probe` word before any `--`).
fn probes(case: &Case) -> bool {
    case.args
        .iter()
        .map(|a| a.to_string_lossy())
        .take_while(|a| a != "--")
        .any(|a| a == "--probe" || a.starts_with("--probe="))
}

/// A `--user` spec: the tame ones are vigil's own ids (a switch to another
/// user would keep the child from writing its marker), the others names
/// and numbers with no entry, and malformed specs.
fn user(r: &mut Rng) -> String {
    let tame = ["0", "root", "0:0", ":0", "root:root", "0:root"];
    if r.tame {
        return r.pick(&tame).to_string();
    }
    let wild = [
        "nosuchuser",
        "root:nosuchgroup",
        "a:b:c",
        ":",
        "99999999999",
        "-1",
        "0day",
        "root:",
    ];
    if r.chance(2) {
        r.pick(&tame).to_string()
    } else {
        r.pick(&wild).to_string()
    }
}

/// A `--caps` list: names vigil holds when run as root here, spelt every
/// way it takes; wild ones are unknown or empty names, or a capability the
/// machine may not grant (then exit 1 before anything starts).
fn caps(r: &mut Rng) -> String {
    let tame = [
        "NET_BIND_SERVICE",
        "cap_net_raw",
        "chown,KILL",
        "CAP_SETUID, cap_setgid",
        "net_raw,NET_RAW",
    ];
    if r.tame || r.chance(2) {
        return r.pick(&tame).to_string();
    }
    let wild = [
        "NET_BIND",
        "",
        ",",
        "net_raw,",
        "CAP_",
        "10",
        "sys_resource",
        "SYS_ADMIN,cap_chown",
    ];
    r.pick(&wild).to_string()
}

/// Every spelling of every option in the table that takes a value, with
/// its kind: `-p`, `--rewrite`, ...
fn valued() -> Vec<(String, Kind)> {
    let mut all = Vec::new();
    for o in OPTIONS.iter().filter(|o| o.kind.takes_value()) {
        all.extend(o.short.map(|c| (format!("-{c}"), o.kind)));
        all.extend(o.long.map(|l| (format!("--{l}"), o.kind)));
    }
    all
}

/// Options that take no value, from the table: the tame ones are the
/// switches and `-v` (alone, repeated, clustered); the others make vigil
/// print and exit (help, version, license); and some it rejects.
fn flags(tame_only: bool) -> Vec<String> {
    let spell = |o: &options::Opt| {
        let mut names: Vec<String> = o.short.iter().map(|c| format!("-{c}")).collect();
        names.extend(o.long.map(|l| format!("--{l}")));
        names
    };
    let switches: Vec<&options::Opt> = OPTIONS
        .iter()
        .filter(|o| matches!(o.kind, Kind::Switch | Kind::Level))
        .collect();
    let letters: String = switches.iter().filter_map(|o| o.short).collect();
    let mut all: Vec<String> = switches.iter().flat_map(|o| spell(o)).collect();
    // Clusters: `-vv`, `-vvv`, every switch at once, two of them.
    all.extend(["-vv".to_string(), "-vvv".to_string(), format!("-{letters}")]);
    let mut chars = letters.chars();
    if let (Some(a), Some(b)) = (chars.next_back(), chars.next()) {
        all.push(format!("-{a}{b}"));
    }
    if !tame_only {
        all.extend(
            OPTIONS
                .iter()
                .filter(|o| {
                    matches!(
                        o.kind,
                        Kind::PrintHelp | Kind::PrintVersion | Kind::PrintLicense
                    )
                })
                .flat_map(spell),
        );
        all.extend(["-x", "--bogus", "-"].map(String::from));
    }
    all
}

/// One option, as one or two words.
fn option(r: &mut Rng, hook_marker: &Path) -> Vec<OsString> {
    let valued = valued();
    if r.tame {
        return match r.below(10) {
            0..=2 => vec![OsString::from(r.pick(&flags(true)))],
            _ => {
                let (name, kind) = valued[r.below(valued.len())].clone();
                vec![
                    OsString::from(&name),
                    OsString::from(value_of(r, kind, hook_marker)),
                ]
            }
        };
    }
    match r.below(10) {
        0..=2 => vec![OsString::from(r.pick(&flags(false)))],
        3 => vec![junk(r)],
        _ => {
            let (name, kind) = valued[r.below(valued.len())].clone();
            let name = name.as_str();
            let value: OsString = if r.chance(15) {
                junk(r)
            } else {
                OsString::from(value_of(r, kind, hook_marker))
            };
            if r.chance(20) {
                // --name=value (clap also takes -pTERM / -e=3).
                let mut joined = OsString::from(name);
                joined.push(if name.starts_with("--") { "=" } else { "" });
                joined.push(&value);
                vec![joined]
            } else if r.chance(3) {
                // The value is missing.
                vec![OsString::from(name)]
            } else {
                vec![OsString::from(name), value]
            }
        }
    }
}

/// Every variable of the option table, with its option's kind.
fn env_vars() -> Vec<(&'static str, Kind)> {
    let mut all = Vec::new();
    for o in OPTIONS {
        all.extend(o.env.map(|name| (name, o.kind)));
        all.extend(o.tini_env.map(|name| (name, o.kind)));
    }
    all
}

/// A value for a variable of the table: vigil's own read like the option's
/// value, but a switch as 1/0 and the like, the level as a number, rewrites
/// as a list; tini's as tini reads them.
fn env_value(r: &mut Rng, kind: Kind, hook_marker: &Path) -> OsString {
    if r.tame {
        return OsString::from(match kind {
            Kind::Switch => r.pick(&["", "1", "0", "true", "off", " On "]).to_string(),
            Kind::Level => r.pick(&["", "0", "1", "2", "3", "4"]).to_string(),
            other => value_of(r, other, hook_marker),
        });
    }
    if r.chance(15) {
        return junk(r);
    }
    OsString::from(match kind {
        Kind::Rewrite => {
            let n = r.below(4);
            let rules: Vec<String> = (0..n).map(|_| rewrite(r)).collect();
            rules.join(r.pick(&[",", ", ", ",,", " , "]))
        }
        Kind::Switch => r
            .pick(&[
                "", "1", "0", "true", "false", "yes", "no", "on", "off", "TRUE", " On ", "maybe",
                "2", "-1",
            ])
            .to_string(),
        Kind::Level => r
            .pick(&[
                "", "0", "1", "2", "3", "4", "5", "99", "-1", " 3", "3x", "x3", "256",
            ])
            .to_string(),
        other => value_of(r, other, hook_marker),
    })
}

/// One case: argv (after argv[0]), the environment, and the child's code.
struct Case {
    args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
    code: i32,
}

fn generate(r: &mut Rng, marker: &Path, hook_marker: &Path) -> Case {
    r.tame = r.chance(50);
    let code = [0, 3, 42, 77, 200][r.below(5)];
    let mut args = Vec::new();
    for _ in 0..r.below(7) {
        args.extend(option(r, hook_marker));
    }
    if r.chance(60) {
        args.push(OsString::from("--"));
    }
    if !r.chance(5) {
        args.push(OsString::from(COMMAND_PLACEHOLDER));
        args.push(marker.as_os_str().to_owned());
        args.push(OsString::from(code.to_string()));
        for _ in 0..r.below(3) {
            args.push(junk(r));
        }
    }
    let mut env = Vec::new();
    for (name, kind) in env_vars() {
        if r.chance(20) {
            env.push((name, env_value(r, kind, hook_marker)));
        }
    }
    Case { args, env, code }
}

// ---------------------------------------------------------------------------
// Running and judging one case
// ---------------------------------------------------------------------------

struct Ran {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

const CASE_TIMEOUT: Duration = Duration::from_secs(20);

fn run_case(case: &Case, dir: &Path, bin: &Path) -> Result<Ran, String> {
    let mut cmd = Command::new(vigil_bin());
    cmd.args(&case.args)
        .env_clear()
        .env("PATH", bin)
        .current_dir(dir);
    for (k, v) in &case.env {
        cmd.env(k, v);
    }
    // Start vigil with every signal blocked: see the module doc.
    unsafe {
        cmd.pre_exec(|| set_sigmask(!0));
    }
    match run_with_deadline(&mut cmd, CASE_TIMEOUT) {
        Ok(o) => Ok(Ran {
            status: o.status,
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }),
        Err(CmdFailed::Spawn(e)) => Err(format!("cannot start vigil: {e}")),
        Err(CmdFailed::Wait(e)) => Err(format!("waiting for vigil: {e}")),
        Err(CmdFailed::TimedOut { stat }) => {
            Err(format!("vigil hung for {CASE_TIMEOUT:?} (stat: {stat})"))
        }
    }
}

/// All the words of the case, lowercased, for "could this have asked for
/// that?" questions.
fn case_text(case: &Case) -> String {
    let mut s = String::new();
    for a in &case.args {
        s.push_str(&a.to_string_lossy());
        s.push(' ');
    }
    for (k, v) in &case.env {
        s.push_str(&format!("{k}={} ", v.to_string_lossy()));
    }
    s.to_lowercase()
}

/// Whether some `-e` in the arguments may have listed `code` (`-e 3`,
/// `-e3`, `-e=3`, `-sge 3`, ...). Generous: a false "yes" only weakens one
/// case.
fn may_expect(case: &Case, code: i32) -> bool {
    let is = |v: &str| v.trim().parse::<i32>() == Ok(code);
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    args.iter().enumerate().any(|(i, a)| {
        if !a.starts_with('-') || a.starts_with("--") {
            return false;
        }
        match a.find('e') {
            Some(at) => {
                let rest = &a[at + 1..];
                let rest = rest.strip_prefix('=').unwrap_or(rest);
                if rest.is_empty() {
                    args.get(i + 1).is_some_and(|v| is(v))
                } else {
                    is(rest)
                }
            }
            None => false,
        }
    })
}

fn judge(
    case: &Case,
    ran: &Ran,
    marker: &Path,
    hook_marker: &Path,
) -> Result<&'static str, String> {
    if let Some(sig) = ran.status.signal() {
        return Err(format!("vigil died of signal {sig}"));
    }
    for text in [&ran.stdout, &ran.stderr] {
        if text.contains("panicked") || text.contains("RUST_BACKTRACE") {
            // The message is the line after "panicked at FILE:LINE:COL:".
            let mut lines = text.lines().skip_while(|l| !l.contains("panicked"));
            let at = lines.next().unwrap_or("");
            let message = lines.next().unwrap_or("").trim();
            return Err(format!("vigil panicked [{message}] {at}"));
        }
    }
    let status = ran.status.code().unwrap_or(-1);
    let lines: Vec<&str> = ran.stderr.lines().collect();
    let text = case_text(case);
    // SIGKILL can reach the child only by a rewrite to it or at a grace
    // deadline (a failing post-start hook starts the stop sequence).
    let kill_possible = text.contains("kill") || text.contains('9') || text.contains("grace");
    // A failing post-start hook, or --ready-timeout, makes vigil's status
    // non-zero even when the child's is 0 (it exits 1 instead), and starts
    // the stop: the first of --stop-signals, after --rewrite, goes to the
    // child.
    let post_start_possible = text.contains("post-start")
        || text.contains("post_start")
        || text.contains("ready-timeout")
        || text.contains("ready_timeout");
    // A short --timeout may pass before the child's own exit.
    let timeout_possible = text.contains("timeout");
    // --live-when probes what never answers: failures enough in a row may
    // come before the child's own exit, and stop it as a failed post-start
    // hook does, with the unhealthy status (69).
    // (The case's text is in lower case: the variable is `live_when`.)
    let unhealthy_possible = text.contains("live-when") || text.contains("live_when");
    let post_start_possible = post_start_possible || unhealthy_possible;
    // --exit-code may give any of its statuses to the ending it names
    // (`--exit-code=CAUSE=N` and the variable's first item included).
    let remapped: Vec<i32> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|word| {
            ["vigil_exit_codes=", "--exit-code="]
                .iter()
                .find_map(|p| word.strip_prefix(p))
                .unwrap_or(word)
        })
        .filter_map(|word| word.split_once('='))
        .filter(|(cause, _)| CAUSES.contains(cause))
        .filter_map(|(_, status)| status.parse().ok())
        .collect();
    // That stop, when --stop-signals or --rewrite chose it, may be 33 or
    // 34, which the musl child unblocks (module doc): it then races the
    // child's own exit, and either may win.
    let musl_signal_possible = post_start_possible
        && ["rewrite", "stop-signals", "stop_signals"]
            .iter()
            .any(|w| text.contains(w));
    // The ways the child may have been killed before its own exit, as
    // statuses.
    let mut killed = Vec::new();
    if kill_possible {
        killed.push(137);
    }
    if musl_signal_possible {
        killed.extend([128 + 33, 128 + 34]);
    }
    // vigil's status for an ending: its status, or 0 when `-e` may have
    // listed it; after a failed post-start hook, a 0 becomes 1.
    let statuses = |endings: &[i32]| -> Vec<i32> {
        let mut all = Vec::new();
        for &e in endings {
            all.push(e);
            if e != 0 && may_expect(case, e) {
                all.push(0);
            }
        }
        if post_start_possible && all.contains(&0) {
            all.push(1);
        }
        if unhealthy_possible {
            all.push(69);
        }
        all.extend(&remapped);
        all
    };

    if marker.exists() {
        let ok_status = statuses(&[&[case.code][..], &killed].concat()).contains(&status)
            || (status == 124 && timeout_possible)
            || remapped.contains(&status);
        if !ok_status {
            return Err(format!(
                "the child ran (code {}) but vigil exited {status}",
                case.code
            ));
        }
        if let Some(l) = lines.iter().find(|l| !l.starts_with("vigil: ")) {
            return Err(format!("a stderr line without the vigil: prefix: {l:?}"));
        }
        return Ok("ran");
    }
    match status {
        2 => {
            usage_error_in(&ran.stderr)?;
            if hook_marker.exists() {
                return Err("a hook ran although the command line was rejected".into());
            }
            if !ran.stdout.is_empty() {
                return Err("a usage error printed on stdout".into());
            }
            Ok("usage error")
        }
        0 if !ran.stdout.is_empty() && ran.stderr.is_empty() => Ok("printed help/version/license"),
        // `--install DIR` alone: the copy is in place (0), or DIR is not
        // there (1); either way one line at most, and nothing ran.
        0 | 1 if text.contains("--install") && ran.stdout.is_empty() && lines.len() <= 1 => {
            if hook_marker.exists() {
                return Err("a hook ran although vigil only installed itself".into());
            }
            Ok("installed itself, or could not")
        }
        126 | 127
            if lines
                .iter()
                .any(|l| l.starts_with("vigil: error: cannot run \"")) =>
        {
            Ok("could not run")
        }
        // A probe: healthy or not (nothing the grammar probes answers), or
        // a mistake on its command line, which exits 1 too: at most one
        // line, and nothing run.
        0 | 1 if probes(case) && ran.stdout.is_empty() => {
            if lines.len() > 1 || lines.iter().any(|l| !l.starts_with("vigil: ")) {
                return Err(format!("a probe wrote {} lines", lines.len()));
            }
            if hook_marker.exists() {
                return Err("a hook ran for a probe".into());
            }
            Ok("probed")
        }
        s if statuses(&killed).contains(&s) => Ok("killed before it wrote its marker"),
        // A --timeout that passed before the child wrote its marker (1ns,
        // with a grace period that SIGKILLs at once).
        124 if text.contains("timeout") => Ok("timed out before it wrote its marker"),
        s if remapped.contains(&s) => Ok("ended with a status --exit-code gave"),
        // A --user that names no user or group, or --caps naming a
        // capability vigil does not hold: found before anything starts, one
        // error line, exit 1. The termination log is still written, so a
        // warning that it could not be (a path too long, a missing
        // directory) may follow.
        1 if lines.first().is_some_and(|l| {
            l.starts_with("vigil: error: cannot run as user ")
                || l.starts_with("vigil: error: cannot give the child ")
        }) && lines[1..]
            .iter()
            .all(|l| l.starts_with("vigil: warning: could not write the termination log ")) =>
        {
            if hook_marker.exists() {
                return Err("a hook ran although the user or capabilities were refused".into());
            }
            Ok("no such user, or capabilities vigil lacks")
        }
        _ => Err(format!(
            "unexpected outcome: status {status}, child did not run"
        )),
    }
}

fn describe(case: &Case) -> String {
    let short = |s: &OsString| {
        let t = format!("{s:?}");
        if t.len() > 200 {
            format!(
                "{}...<{} bytes>",
                &t[..t.char_indices().nth(120).map_or(t.len(), |(i, _)| i)],
                s.len()
            )
        } else {
            t
        }
    };
    let args: Vec<String> = case.args.iter().map(short).collect();
    let env: Vec<String> = case
        .env
        .iter()
        .map(|(k, v)| format!("{k}={}", short(v)))
        .collect();
    format!(
        "args: [{}]\nenv: [{}]\nchild code: {}",
        args.join(", "),
        env.join(", "),
        case.code
    )
}

fn clip(s: &str) -> String {
    if s.len() > 3000 {
        let cut = s.char_indices().nth(3000).map_or(s.len(), |(i, _)| i);
        format!("{}...<{} bytes>", &s[..cut], s.len())
    } else {
        s.to_string()
    }
}

fn check(seed: u64, index: usize, case: &Case, bin: &Path) -> Result<&'static str, String> {
    let dir = TempDir::new("fuzz");
    let marker = dir.join("child-ran");
    let hook_marker = dir.join("hook-ran");
    // generate() wrote placeholders for the paths; put this case's in. The
    // original (with placeholders) is what `judge` searches for words like
    // "kill" or "9", so temp paths do not count.
    let original = case;
    // `--termination-log` with its value missing takes the next word, which
    // may be the command, the shared `marker` program: vigil then writes
    // its report over it, as it was asked to, and every later case would
    // run a broken program. Such a case gets programs of its own.
    let own_bin;
    let bin = if case
        .args
        .iter()
        .any(|a| a.to_string_lossy().contains("--termination-log"))
    {
        own_bin = hook_bin();
        own_bin.path()
    } else {
        bin
    };
    let case = relocate(case, &marker, &hook_marker, bin);
    let ran = run_case(&case, dir.path(), bin)
        .map_err(|e| format!("seed {seed}, case {index}: {e}\n{}", describe(&case)))?;
    judge(original, &ran, &marker, &hook_marker).map_err(|why| {
        format!(
            "seed {seed}, case {index} (replay: VIGIL_FUZZ_SEED={seed} VIGIL_FUZZ_ONLY={index}): {why}\n{}\nstatus: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            describe(&case),
            ran.status,
            clip(&ran.stdout),
            clip(&ran.stderr)
        )
    })
}

const MARKER_PLACEHOLDER: &str = "@MARKER@";
const COMMAND_PLACEHOLDER: &str = "@COMMAND@";
const HOOK_PLACEHOLDER: &str = "@HOOK@";

/// Replaces the placeholders generate() was given by this case's paths.
fn relocate(case: &Case, marker: &Path, hook_marker: &Path, bin: &Path) -> Case {
    let command = bin.join("marker").display().to_string();
    let fix = |s: &OsString| -> OsString {
        match s.to_str() {
            Some(t) if t.contains('@') => OsString::from(
                t.replace(MARKER_PLACEHOLDER, &marker.display().to_string())
                    .replace(HOOK_PLACEHOLDER, &hook_marker.display().to_string())
                    .replace(COMMAND_PLACEHOLDER, &command),
            ),
            _ => s.clone(),
        }
    };
    Case {
        args: case.args.iter().map(fix).collect(),
        env: case.env.iter().map(|(k, v)| (*k, fix(v))).collect(),
        code: case.code,
    }
}

/// The directory PATH points to: only `hookmark`, and `marker`, the
/// COMMAND (both copies of the marker helper, so that nothing a case does,
/// such as a termination log written over COMMAND, reaches the build).
fn hook_bin() -> TempDir {
    let bin = TempDir::new("fuzzbin");
    std::fs::copy(test_program("marker"), bin.join("hookmark")).unwrap();
    std::fs::copy(test_program("marker"), bin.join("marker")).unwrap();
    bin
}

#[test]
fn fuzz_command_line_and_environment() {
    let seed = seed_from_env("VIGIL_FUZZ_SEED");
    let cases: usize = std::env::var("VIGIL_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    // One case of the run (its number, as a failure names it), replayed
    // alone: the cases before it are generated, not run.
    let only: Option<usize> = std::env::var("VIGIL_FUZZ_ONLY")
        .ok()
        .map(|s| s.trim().parse().expect("VIGIL_FUZZ_ONLY is a case number"));
    eprintln!("cli_fuzz: seed {seed} ({cases} cases); replay with VIGIL_FUZZ_SEED={seed}");
    let bin = hook_bin();
    let mut rng = Rng::new(seed);
    let mut tally: std::collections::BTreeMap<&str, usize> = Default::default();
    // Failures by kind (the reason up to its first ':' or '('): how many,
    // and the first case of each.
    let mut failures: std::collections::BTreeMap<String, (usize, String)> = Default::default();
    for i in 0..cases {
        let case = generate(
            &mut rng,
            Path::new(MARKER_PLACEHOLDER),
            Path::new(HOOK_PLACEHOLDER),
        );
        if only.is_some_and(|n| n != i) {
            continue;
        }
        match check(seed, i, &case, bin.path()) {
            Ok(kind) => *tally.entry(kind).or_default() += 1,
            Err(e) => {
                *tally.entry("FAILED").or_default() += 1;
                let why = e
                    .lines()
                    .next()
                    .unwrap_or("")
                    .split_once("): ")
                    .map_or("", |(_, why)| why);
                let key = why
                    .split([':', '('])
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                failures.entry(key).or_insert((0, e)).0 += 1;
            }
        }
    }
    eprintln!("cli_fuzz: seed {seed}: {tally:?}");
    let report: Vec<String> = failures
        .iter()
        .map(|(kind, (n, first))| format!("== {n} case(s): {kind}; the first:\n{first}"))
        .collect();
    assert!(
        failures.is_empty(),
        "cli_fuzz: seed {seed}: {} failing case(s) of {} kind(s):\n\n{}",
        tally.get("FAILED").copied().unwrap_or(0),
        failures.len(),
        report.join("\n\n")
    );
    // The grammar must exercise every outcome, or the property says little.
    for kind in ["ran", "usage error"].iter().filter(|_| only.is_none()) {
        assert!(
            tally.get(kind).copied().unwrap_or(0) > 0,
            "seed {seed}: no case ended as {kind:?}: {tally:?}"
        );
    }
}

/// Known sharp edges, every run, whatever the seed.
#[test]
fn fuzz_fixed_edge_cases() {
    let bin = hook_bin();
    let m = || OsString::from(COMMAND_PLACEHOLDER);
    let mk = MARKER_PLACEHOLDER;
    let hk = HOOK_PLACEHOLDER;
    let s = |x: &str| OsString::from(x);
    let case = |args: Vec<OsString>, env: Vec<(&'static str, &str)>| Case {
        args,
        env: env
            .into_iter()
            .map(|(k, v)| (k, OsString::from(v)))
            .collect(),
        code: 3,
    };
    let cmd = |mut pre: Vec<OsString>| {
        pre.extend([m(), s(mk), s("3")]);
        pre
    };
    let exits_0 = |mut c: Case| {
        c.args.extend([m(), s(mk), s("0")]);
        c.code = 0;
        c
    };
    let hookcmd = format!("hookmark '{hk}' 1");
    let cases = vec![
        case(cmd(vec![s(&format!("-{}", "v".repeat(300)))]), vec![]),
        case(cmd(vec![s("-v"); 300]), vec![]),
        case(cmd(vec![s("-e"), s("3")]), vec![]),
        case(cmd(vec![s("-e3"), s("-e"), s("255"), s("--")]), vec![]),
        case(cmd(vec![s("-p"), s("RTMAX"), s("-p"), s("1")]), vec![]),
        // Huge durations: a deadline computed from one must not overflow.
        case(
            cmd(vec![
                s("--post-start"),
                s(&hookcmd),
                s("--grace-period"),
                s("18446744073709551615s"),
            ]),
            vec![],
        ),
        case(
            cmd(vec![
                s("--post-start"),
                s(&format!("hookmark '{hk}' 0")),
                s("--post-start-timeout"),
                s("18446744073709551615"),
            ]),
            vec![],
        ),
        case(
            cmd(vec![
                s("--post-start"),
                s(&hookcmd),
                s("--pre-stop-sleep"),
                s("5124095576030431h"),
            ]),
            vec![],
        ),
        case(
            cmd(vec![s("--post-start"), s(&hookcmd)]),
            vec![("VIGIL_GRACE_PERIOD", "9223372036854775807")],
        ),
        case(
            cmd(vec![s("--drain-timeout"), s("18446744073709551615s")]),
            vec![],
        ),
        // The failing hook's stop, rewritten to 34, can end the musl child,
        // which unblocks 34 itself (module doc).
        case(
            cmd(vec![s("--rewrite"), s("term:SIGRTMAX-30")]),
            vec![
                ("TINI_VERBOSITY", "0"),
                ("VIGIL_POST_START", "no-such-hook 'with args'"),
            ],
        ),
        // The same through --stop-signals: the stop races the child's own
        // exit, and either ending is right.
        case(
            cmd(vec![]),
            vec![
                ("VIGIL_POST_START", "no-such-hook 'with args'"),
                ("VIGIL_STOP_SIGNALS", "SIGRTMAX-30,16"),
            ],
        ),
        case(cmd(vec![]), vec![("VIGIL_REWRITE", ",,, ,")]),
        case(
            cmd(vec![]),
            vec![("TINI_VERBOSITY", "99999999999999999999")],
        ),
        case(
            cmd(vec![]),
            vec![("VIGIL_TERMINATION_LOG", &"x".repeat(5000))],
        ),
        case(cmd(vec![s("--termination-log"), s("")]), vec![]),
        case(
            cmd(vec![
                s("--rewrite"),
                s("TERM:KILL"),
                s("--post-start"),
                s(&hookcmd),
            ]),
            vec![],
        ),
        case(vec![s("--")], vec![]),
        case(vec![], vec![]),
        // Pause mode runs no command, and reads only some options.
        case(cmd(vec![s("-P")]), vec![]),
        case(cmd(vec![s("-vP"), s("--")]), vec![]),
        case(vec![s("-P"), s("-g")], vec![]),
        case(vec![s("-P"), s("--pre-stop"), s(&hookcmd)], vec![]),
        // Installing runs no command.
        case(cmd(vec![s("--install"), s(".")]), vec![]),
        case(vec![s("--install"), s("no-such-dir")], vec![]),
        case(vec![s("--install"), s("."), s("-v")], vec![]),
        case(vec![s("-e")], vec![]),
        // A child that exits 0 after a failed post-start hook: vigil's
        // status is the cause's, remapped by the variable's first item or
        // by --exit-code=CAUSE=N.
        exits_0(case(
            vec![],
            vec![
                ("VIGIL_POST_START", "no-such-hook"),
                ("VIGIL_EXIT_CODES", "post-start=7"),
            ],
        )),
        exits_0(case(
            vec![
                s("--post-start"),
                s("no-such-hook"),
                s("--exit-code=post-start=7"),
            ],
            vec![],
        )),
        // A child that exits 0 while --live-when, given by its variable,
        // stops it: vigil's status is the unhealthy cause's.
        exits_0(case(
            vec![],
            vec![
                ("VIGIL_LIVE_WHEN", "http://localhost:1/"),
                ("VIGIL_LIVE_FAILURES", "1"),
            ],
        )),
        case(vec![OsString::from_vec(vec![0xff, 0xfe])], vec![]),
        case(
            cmd(vec![s("--pre-stop"), OsString::from_vec(vec![b'a', 0xff])]),
            vec![],
        ),
    ];
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if let Err(e) = check(0, i, c, bin.path()) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixed edge case(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The judge knows every ending the contract allows after a failed
/// post-start hook: here the stop it starts sends the first of
/// `--stop-signals`, 34, which the musl child has unblocked, and which may
/// reach it before its own exit 77 (a race: either may win). Whichever
/// won, the status is never 0. Judged on both outcomes, without running
/// vigil, so that the race cannot hide a judge that knows only one.
#[test]
fn the_judge_knows_both_endings_of_a_stop_racing_the_childs_exit() {
    use std::os::unix::process::ExitStatusExt;
    let dir = TempDir::new("fuzzjudge");
    let marker = dir.join("child-ran");
    let hook_marker = dir.join("hook-ran");
    std::fs::write(&marker, "").unwrap();
    let s = OsString::from;
    let case = Case {
        args: vec![
            s("--post-start"),
            s("no-such-hook 'with args'"),
            s("--"),
            s(COMMAND_PLACEHOLDER),
            s(MARKER_PLACEHOLDER),
            s("77"),
        ],
        env: vec![("VIGIL_STOP_SIGNALS", s("SIGRTMAX-30,16"))],
        code: 77,
    };
    for status in [77, 128 + 34] {
        let ran = Ran {
            status: std::process::ExitStatus::from_raw(status << 8),
            stdout: String::new(),
            stderr: "vigil: warning: the post-start hook cannot run \"no-such-hook\"\n".into(),
        };
        assert_eq!(
            judge(&case, &ran, &marker, &hook_marker),
            Ok("ran"),
            "status {status}"
        );
    }
    for status in [0, 1, 143] {
        let ran = Ran {
            status: std::process::ExitStatus::from_raw(status << 8),
            stdout: String::new(),
            stderr: String::new(),
        };
        assert!(
            judge(&case, &ran, &marker, &hook_marker).is_err(),
            "status {status} was judged right"
        );
    }
}
