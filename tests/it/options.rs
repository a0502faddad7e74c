//! The option table (src/cli/options.rs) is the one list of vigil's
//! options. The parser, `--help` (and so the man page, tests/it/man.rs), the
//! fuzz grammar and the flag/variable pairs of the tests are made from it;
//! the prose can only be checked against it: the option table of
//! docs/options.md (which the README links to) lists every option with its
//! value, its variables (those and no others) and its default as `--help`
//! gives it, and no vigil command line or `VIGIL_*` variable in the docs
//! names something the table does not have.

use crate::common::options::{OPTIONS, Opt, Repeat};
use crate::common::{default_in, help_text, split_option};
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

/// The page that holds the option table.
const TABLE_PAGE: &str = "docs/options.md";

/// The rows of the option table: (option cell, variable cell, meaning
/// cell).
fn table_rows() -> Vec<(String, String, String)> {
    let page = fs::read_to_string(repo().join(TABLE_PAGE)).unwrap();
    let mut lines = page
        .lines()
        .skip_while(|l| !l.starts_with("| option | env |"));
    lines.next();
    lines.next();
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (
                cells[1].to_string(),
                cells[2].to_string(),
                cells[3].to_string(),
            )
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
fn the_option_table_lists_every_option_with_its_variables() {
    let rows = table_rows();
    assert!(
        rows.len() >= 15,
        "the option table of {TABLE_PAGE}: {rows:?}"
    );
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("]({TABLE_PAGE})")),
        "the README does not link to {TABLE_PAGE}"
    );
    for o in OPTIONS {
        let row = rows
            .iter()
            .find(|(cell, _, _)| spellings(o).iter().any(|s| names_in(cell).contains(s)));
        let Some((_, vars, _)) = row else {
            panic!(
                "the option table of {TABLE_PAGE} has no row for {:?}",
                spellings(o)
            );
        };
        for var in [o.env, o.tini_env].into_iter().flatten() {
            assert!(
                vars.contains(&format!("`{var}`")),
                "{TABLE_PAGE}: the row for {:?} does not name {var}",
                spellings(o)
            );
        }
    }
    for (cell, vars, _) in &rows {
        let options = options_in(cell);
        let theirs: Vec<&str> = options
            .iter()
            .flat_map(|o| [o.env, o.tini_env])
            .flatten()
            .collect();
        for var in vars.split('`').skip(1).step_by(2) {
            assert!(
                theirs.contains(&var),
                "{TABLE_PAGE}: the row {cell} names {var}, which is not its options' variable"
            );
        }
    }
}

/// The options a cell of the option table names; each name must be one of
/// vigil's.
fn options_in(cell: &str) -> Vec<&'static Opt> {
    names_in(cell)
        .iter()
        .map(|name| {
            OPTIONS
                .iter()
                .find(|o| spellings(o).contains(name))
                .unwrap_or_else(|| {
                    panic!(
                        "the option table of {TABLE_PAGE} names {name}, which vigil does not have"
                    )
                })
        })
        .collect()
}

/// The option table says what the rows say: each option's value
/// by the name `--help` gives it (`-p SIGNAL`), "(repeatable)" exactly for
/// the options whose every use counts, and the default, in the words of
/// `--help` (`default` and its value; backquotes aside).
#[test]
fn the_option_table_gives_each_option_its_value_and_default() {
    let help = help_text();
    let mut defaults = 0;
    for (cell, _, meaning) in table_rows() {
        let options = options_in(&cell);
        let repeatable = options.iter().any(|o| o.repeat == Repeat::Append);
        assert_eq!(
            cell.contains("(repeatable)"),
            repeatable,
            "{TABLE_PAGE}: the row {cell}: (repeatable)"
        );
        let plain_meaning = meaning.replace('`', "");
        for o in options {
            if o.kind.takes_value() {
                let shown = spellings(o)
                    .iter()
                    .any(|s| cell.contains(&format!("`{s} {}`", o.kind.value_name())));
                assert!(
                    shown,
                    "{TABLE_PAGE}: the row {cell} does not write {:?} with {}",
                    spellings(o),
                    o.kind.value_name()
                );
            }
            let line = help
                .lines()
                .filter_map(split_option)
                .find(|(spec, _)| {
                    spec.split([',', ' '])
                        .map(|word| word.trim_end_matches("..."))
                        .any(|word| spellings(o).iter().any(|s| s == word))
                })
                .unwrap_or_else(|| panic!("--help has no line for {:?}:\n{help}", spellings(o)));
            if let Some(default) = default_in(line.1) {
                defaults += 1;
                assert!(
                    plain_meaning.contains("default") && plain_meaning.contains(default),
                    "{TABLE_PAGE}: the row {cell} does not give the default of --help, {default:?}: {meaning}"
                );
            }
        }
    }
    assert!(defaults >= 7, "only {defaults} defaults in --help:\n{help}");
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
    "VIGIL_GLIBC_DIR",
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
