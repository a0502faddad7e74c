//! The option table (src/cli/options.rs) is the one list of vigil's
//! options. The parser, `--help` (and so the man page, tests/it/man.rs), the
//! fuzz grammar and the flag/variable pairs of the tests are made from it;
//! the prose can only be checked against it: the README's option table
//! lists every option with its variables, and no vigil command line or
//! `VIGIL_*` variable in the docs names something the table does not have.

use crate::common::options::{OPTIONS, Opt};
use std::fs;
use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// How an option is written on the command line: `-s`, `--timeout`.
fn spellings(o: &Opt) -> Vec<String> {
    let mut names: Vec<String> = o.short.iter().map(|c| format!("-{c}")).collect();
    names.extend(o.long.map(|l| format!("--{l}")));
    names
}

/// The rows of the README's option table: (option cell, variable cell).
fn readme_rows() -> Vec<(String, String)> {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let mut lines = readme
        .lines()
        .skip_while(|l| !l.starts_with("| option | env |"));
    lines.next();
    lines.next();
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect()
}

/// The option names written in one cell: `` `-v` (repeatable) `` -> `-v`.
fn names_in(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|code| code.split_whitespace().next())
        .filter(|word| word.starts_with('-'))
        .map(String::from)
        .collect()
}

#[test]
fn the_readme_lists_every_option_with_its_variables() {
    let rows = readme_rows();
    assert!(rows.len() >= 15, "the README's option table: {rows:?}");
    for o in OPTIONS {
        let row = rows
            .iter()
            .find(|(cell, _)| spellings(o).iter().any(|s| names_in(cell).contains(s)));
        let Some((_, vars)) = row else {
            panic!(
                "the README's option table has no row for {:?}",
                spellings(o)
            );
        };
        for var in [o.env, o.tini_env].into_iter().flatten() {
            assert!(
                vars.contains(&format!("`{var}`")),
                "the README's row for {:?} does not name {var}",
                spellings(o)
            );
        }
    }
    for (cell, _) in &rows {
        for name in names_in(cell) {
            assert!(
                OPTIONS.iter().any(|o| spellings(o).contains(&name)),
                "the README's option table names {name}, which vigil does not have"
            );
        }
    }
}

/// Variables named in the docs that are not options: what vigil gives its
/// hooks, and the knobs of its own tests, benchmark and build.
const NOT_OPTIONS: &[&str] = &[
    "VIGIL_HOOK",
    "VIGIL_CHILD_PID",
    "VIGIL_SIGNAL",
    "VIGIL_COMMIT",
    "VIGIL_BIN",
    "VIGIL_UPDATE_MAN",
    "VIGIL_E2E_",
    "VIGIL_DIFF_",
    "VIGIL_FUZZ_",
    "VIGIL_USER_DIFF_",
    "VIGIL_LAB_",
    // The misspelling the docs take as their example of a warning.
    "VIGIL_TIMOUT",
];

/// The documents users read.
fn docs() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md"), repo().join("docs/vigil.1")];
    for entry in fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_docs_name_only_variables_vigil_has() {
    let known: Vec<&str> = OPTIONS
        .iter()
        .flat_map(|o| [o.env, o.tini_env])
        .flatten()
        .collect();
    for file in docs() {
        let text = fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("VIGIL_") {
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            let fine = known.contains(&name.as_str())
                || NOT_OPTIONS.iter().any(|n| name.starts_with(n))
                // A prose mention of the family: "VIGIL_* variables".
                || name == "VIGIL_";
            assert!(
                fine,
                "{} names {name}, which is no variable of vigil's",
                file.display()
            );
        }
    }
}

/// Every vigil command line in the docs (`vigil --timeout 20m --
/// make`, `/vigil -v -- sh`) uses options vigil has, each with its value.
#[test]
fn the_docs_command_lines_use_only_options_vigil_has() {
    let mut checked = 0;
    for file in docs() {
        let text = fs::read_to_string(&file).unwrap().replace("\\-", "-");
        for line in text.lines() {
            let words: Vec<&str> = line
                .split(|c: char| c.is_whitespace() || c == '`' || c == '"' || c == ',')
                .filter(|w| !w.is_empty())
                .collect();
            for (i, word) in words.iter().enumerate() {
                let is_vigil = word.rsplit('/').next() == Some("vigil");
                if !is_vigil {
                    continue;
                }
                let mut rest = words[i + 1..].iter();
                while let Some(arg) = rest.next() {
                    // Prose around it: `(see vigil --help).`
                    let arg = arg.trim_end_matches([')', '.', ',', ';', ':']);
                    if !arg.starts_with('-') || arg == "--" || arg == "-" {
                        break;
                    }
                    let name = arg.split('=').next().unwrap_or(arg);
                    let opt = if name.starts_with("--") {
                        OPTIONS.iter().find(|o| o.long == name.strip_prefix("--"))
                    } else {
                        // A cluster: every letter an option, a value only last.
                        let letters: Vec<char> = name.chars().skip(1).collect();
                        let found: Vec<&Opt> = letters
                            .iter()
                            .filter_map(|c| OPTIONS.iter().find(|o| o.short == Some(*c)))
                            .collect();
                        if found.len() == letters.len() {
                            found.last().copied()
                        } else {
                            None
                        }
                    };
                    let Some(opt) = opt else {
                        panic!(
                            "{}: `{line}` uses {arg}, which vigil does not have",
                            file.display()
                        );
                    };
                    checked += 1;
                    let attached = arg.contains('=') || (!arg.starts_with("--") && arg.len() > 2);
                    if opt.kind.takes_value() && !attached {
                        rest.next();
                    }
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} options found in the docs' command lines"
    );
}
