//! The code blocks of the README and docs/*.md, each with the marker that
//! says what the tests do with it (CONTRIBUTING.md, "Examples in the
//! docs"): an HTML comment on the line right before the fence,
//!
//!     <!-- run: RUNNER [ARGS] -->   run as written (tests/it/docs.rs, tests/it/e2e/docs.rs)
//!     <!-- output: NAME -->         what the run NAME printed, compared after `normalize`
//!     <!-- checked: PATH -->        another test or CI script holds it to what it runs
//!     <!-- sketch: WHY -->          not run, and why
//!
//! The record examples of docs/logging.md (```json and ```logfmt) need no
//! marker: src/supervisor/tests/examples.rs writes each of them with
//! vigil's own code and compares them byte for byte.

use std::fmt;
use std::path::{Path, PathBuf};

/// The documents whose examples are held to the markers.
pub fn doc_files() -> Vec<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![repo.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// What a block's marker says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Marker {
    /// `run: RUNNER ARGS...`
    Run { runner: String, args: Vec<String> },
    /// `output: NAME`
    Output(String),
    /// `checked: PATH`
    Checked(String),
    /// `sketch: WHY`
    Sketch(String),
    /// docs/logging.md's record examples, which examples.rs checks.
    Records,
    /// No marker, or one this file does not know (the text is kept).
    Missing(Option<String>),
}

/// One fenced code block.
#[derive(Clone, Debug)]
pub struct Block {
    /// The document, relative to the repository (`docs/docker.md`).
    pub file: String,
    /// The line of its opening fence, from 1.
    pub line: usize,
    /// The fence's info string (`sh`, `dockerfile`, ...).
    pub lang: String,
    pub marker: Marker,
    /// Its content, without the fences, dedented to the fence's column.
    pub text: String,
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} (```{})", self.file, self.line, self.lang)
    }
}

impl Block {
    /// The `run` marker's runner and arguments.
    pub fn run(&self) -> Option<(&str, &[String])> {
        match &self.marker {
            Marker::Run { runner, args } => Some((runner, args)),
            _ => None,
        }
    }

    /// The value of a `KEY=VALUE` argument of the `run` marker.
    pub fn arg(&self, key: &str) -> Option<&str> {
        let (_, args) = self.run()?;
        args.iter()
            .find_map(|a| a.strip_prefix(key)?.strip_prefix('='))
    }

    /// Whether the `run` marker has this bare word among its arguments.
    pub fn has_word(&self, word: &str) -> bool {
        self.run()
            .is_some_and(|(_, args)| args.iter().any(|a| a == word))
    }
}

/// Every fenced block of every document.
pub fn all_blocks() -> Vec<Block> {
    doc_files().iter().flat_map(|p| blocks_of(p)).collect()
}

/// The fenced blocks of one document.
pub fn blocks_of(path: &Path) -> Vec<Block> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = path
        .strip_prefix(repo)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    parse_blocks(&name, &text)
}

/// The fenced blocks of `text`, the document `file`.
pub fn parse_blocks(file: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((indent, fence, lang)) = opening_fence(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !closes(lines[i], &fence) {
            let l = lines[i];
            let cut = l.len() - l.trim_start_matches(' ').len();
            body.push(&l[cut.min(indent)..]);
            i += 1;
        }
        i += 1;
        let prev = start.checked_sub(1).map(|p| lines[p].trim());
        let marker = marker_of(file, &lang, prev);
        blocks.push(Block {
            file: file.to_string(),
            line: start + 1,
            lang,
            marker,
            text: body.iter().map(|l| format!("{l}\n")).collect(),
        });
    }
    blocks
}

/// `(indent, fence, info string)` when `line` opens a fenced block.
fn opening_fence(line: &str) -> Option<(usize, String, String)> {
    let rest = line.trim_start_matches(' ');
    let indent = line.len() - rest.len();
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = rest.chars().take_while(|c| *c == ch).count();
    if n < 3 {
        return None;
    }
    let lang = rest[n..].trim().to_string();
    Some((indent, rest[..n].to_string(), lang))
}

fn closes(line: &str, fence: &str) -> bool {
    let t = line.trim();
    t.starts_with(fence) && t.chars().all(|c| c == fence.chars().next().unwrap())
}

fn marker_of(file: &str, lang: &str, prev: Option<&str>) -> Marker {
    let comment = prev
        .and_then(|p| p.strip_prefix("<!--"))
        .and_then(|p| p.strip_suffix("-->"))
        .map(str::trim);
    let Some(comment) = comment else {
        if file == "docs/logging.md" && (lang == "json" || lang == "logfmt") {
            return Marker::Records;
        }
        return Marker::Missing(None);
    };
    let (kind, rest) = comment.split_once(':').unwrap_or((comment, ""));
    let rest = rest.trim().to_string();
    match kind.trim() {
        "run" if !rest.is_empty() => {
            let mut words = rest.split_whitespace().map(str::to_string);
            let runner = words.next().unwrap();
            Marker::Run {
                runner,
                args: words.collect(),
            }
        }
        "output" if !rest.is_empty() => Marker::Output(rest),
        "checked" if !rest.is_empty() => Marker::Checked(rest),
        "sketch" if !rest.is_empty() => Marker::Sketch(rest),
        _ => Marker::Missing(Some(comment.to_string())),
    }
}

// ---------------------------------------------------------------------------
// Comparing what a doc shows with what a run printed

/// What varies from run to run, replaced in the doc's output and in the
/// run's alike (CONTRIBUTING.md lists them):
///
/// - an RFC 3339 time (`2026-12-01T18:06:20.123Z`) becomes `<time>`;
/// - a measured duration, vigil's three decimals (`2.001s`), becomes
///   `<secs>`; a set one (`2s`, `grace period (2s)`) stays;
/// - a pid becomes `<pid>`: after `pid ` (not `pid 0`, which says "outside
///   this PID namespace"), in `vigil[PID]` and a record's `"pid":PID`, and before ` (` where a list of
///   processes names them (`to 7 (sleep)`, `: 7 (sleep)`, `, 31 (worker)`);
/// - a commit (`commit 0123456789ab`) becomes `commit <hash>`, and the
///   target vigil was built for (`built for x86_64-unknown-linux-musl`)
///   `built for <target>`.
///
/// Trailing spaces and blank lines at the end are dropped.
pub fn normalize(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut l = times(line);
        l = durations(&l);
        l = pids(&l);
        l = after_word(&l, "commit ", "<hash>", |c| {
            c.is_ascii_alphanumeric() || c == '-'
        });
        l = after_word(&l, "built for ", "<target>", |c| {
            c.is_ascii_alphanumeric() || c == '_' || c == '-'
        });
        out.push_str(l.trim_end());
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn times(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if let Some(n) = time_at(&b[i..]) {
            out.push_str("<time>");
            i += n;
        } else {
            let ch = line[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The length of an RFC 3339 UTC time at the start of `b`.
fn time_at(b: &[u8]) -> Option<usize> {
    let shape = b"dddd-dd-ddTdd:dd:dd";
    if b.len() < shape.len() + 1 {
        return None;
    }
    for (x, s) in b.iter().zip(shape) {
        let ok = if *s == b'd' {
            x.is_ascii_digit()
        } else {
            x == s
        };
        if !ok {
            return None;
        }
    }
    let mut n = shape.len();
    if b.get(n) == Some(&b'.') {
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    (b.get(n) == Some(&b'Z')).then_some(n + 1)
}

fn durations(line: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts_number = chars[i].is_ascii_digit() && (i == 0 || !is_word(chars[i - 1]));
        if starts_number {
            let mut j = i;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            let three = chars.get(j) == Some(&'.')
                && chars[j + 1..]
                    .iter()
                    .take(3)
                    .filter(|c| c.is_ascii_digit())
                    .count()
                    == 3
                && chars.get(j + 4) == Some(&'s')
                && !chars.get(j + 5).is_some_and(|c| is_word(*c));
            if three {
                out.push_str("<secs>");
                i = j + 5;
                continue;
            }
            out.extend(&chars[i..j]);
            i = j;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

fn pids(line: &str) -> String {
    let mut l = after_word(line, "pid ", "<pid>", |c| c.is_ascii_digit());
    l = after_word(&l, "vigil[", "<pid>", |c| c.is_ascii_digit());
    l = after_word(&l, "\"pid\":", "<pid>", |c| c.is_ascii_digit());
    for lead in ["to ", "to: ", ": ", ", "] {
        l = pid_before_paren(&l, lead);
    }
    l
}

/// `LEAD N (` becomes `LEAD <pid> (`.
fn pid_before_paren(line: &str, lead: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(lead) {
        let (head, tail) = rest.split_at(at + lead.len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(" (") {
            out.push_str("<pid>");
            rest = &tail[digits..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// The run of `keep` characters after each `word` becomes `with`; `pid 0`
/// is kept (see `normalize`).
fn after_word(line: &str, word: &str, with: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(word) {
        let (head, tail) = rest.split_at(at + word.len());
        out.push_str(head);
        let n: usize = tail
            .chars()
            .take_while(|c| keep(*c))
            .map(char::len_utf8)
            .sum();
        let value = &tail[..n];
        if n > 0 && !(word == "pid " && value == "0") {
            out.push_str(with);
        } else {
            out.push_str(value);
        }
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

/// Panics with both texts, normalized, and the first line that differs,
/// unless the doc's output block is what the run printed.
#[track_caller]
pub fn assert_output(block: &Block, printed: &str) {
    if let Some(why) = output_differs(block, printed) {
        panic!("{why}");
    }
}

/// Why the doc's output block is not what the run printed, if it is not.
pub fn output_differs(block: &Block, printed: &str) -> Option<String> {
    let want = normalize(&block.text);
    let got = normalize(printed);
    if want == got {
        return None;
    }
    let first = want
        .lines()
        .zip(got.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
    Some(format!(
        "{block} shows output the run does not print (first difference at its line {}); \
         fix the doc (or the code):\n--- the doc, normalized\n{want}--- the run, normalized\n{got}--- the run, as printed\n{printed}",
        first + 1
    ))
}

/// The block marked `output: NAME`; panics unless there is exactly one.
pub fn output_block(name: &str) -> Block {
    let found: Vec<Block> = all_blocks()
        .into_iter()
        .filter(|b| b.marker == Marker::Output(name.to_string()))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one block marked `output: {name}`, found {}",
        found.len()
    );
    found.into_iter().next().unwrap()
}

/// The outputs the tests make without a command block in the doc (the
/// prose says what is run): tests/it/docs.rs and tests/it/e2e/docs.rs
/// run each, and `every_example_is_marked` holds the docs to this list.
pub const SCENARIOS: &[&str] = &["version", "probe-lines", "probe-healthy"];

/// The runners a `run` marker may name.
pub const RUNNERS: &[&str] = &["shell", "kubernetes", "compose", "docker", "dockerfile"];

/// The name a `run: docker NAME` or `run: shell NAME` block gives its
/// output: its first argument that is not `KEY=VALUE`.
pub fn run_name(block: &Block) -> Option<&str> {
    let (runner, args) = block.run()?;
    if !matches!(runner, "docker" | "shell") {
        return None;
    }
    args.iter().map(String::as_str).find(|a| !a.contains('='))
}

/// Leaves out of `cmd`'s environment what would change what vigil does
/// (the test's own `VIGIL_*`, `TINI_*`, `RUST_LOG`), as the `Vigil`
/// builder does: an example runs as it would for a user.
pub fn without_vigil_settings(cmd: &mut std::process::Command) {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("VIGIL_") || k.starts_with("TINI_") || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
}

/// The blocks whose `run` marker names `runner`.
pub fn run_blocks(runner: &str) -> Vec<Block> {
    all_blocks()
        .into_iter()
        .filter(|b| b.run().is_some_and(|(r, _)| r == runner))
        .collect()
}
