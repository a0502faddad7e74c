//! The man page, docs/vigil.1, cannot drift from `vigil --help`: its
//! OPTIONS section is rendered from the help text of the built binary, and
//! this test fails when the committed page differs from a fresh rendering.
//! After changing an option or its help:
//!
//!     VIGIL_UPDATE_MAN=1 cargo test --test it man::
//!
//! rewrites the generated part (the rest of the page is prose, kept by hand).
//! scripts/release.sh ships the page next to the binaries.

use crate::common::*;

use std::path::Path;

const BEGIN: &str = ".\\\" BEGIN: generated from `vigil --help` by tests/it/man.rs; do not edit";
const END: &str = ".\\\" END of the generated part";

/// Escapes text for roff: backslashes, hyphens (so that they stay hyphens
/// and can be searched for), and a leading dot or quote.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// `-e <CODE>` as `\fB\-e\fR \fICODE\fR`; `-s, --sub` as `\fB\-s\fR, \fB\-\-sub\fR`.
fn render_option(spec: &str) -> String {
    spec.split(", ")
        .map(|alternative| {
            alternative
                .split(' ')
                .map(
                    |word| match word.strip_prefix('<').and_then(|w| w.strip_suffix('>')) {
                        Some(value) => format!("\\fI{}\\fR", roff(value)),
                        None => match word.strip_suffix("...") {
                            Some(flag) => format!("\\fB{}\\fR...", roff(flag)),
                            None => format!("\\fB{}\\fR", roff(word)),
                        },
                    },
                )
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The generated part of the page, from the help text: the options, then
/// the paragraphs that follow them in the help.
fn render(help: &str) -> String {
    let mut out = vec![BEGIN.to_string(), ".SH OPTIONS".to_string()];
    let mut in_options = false;
    let mut after_options = false;
    for line in help.lines() {
        if line == "Options:" {
            in_options = true;
            continue;
        }
        if !in_options {
            continue;
        }
        if line.trim().is_empty() {
            after_options = true;
            continue;
        }
        if !after_options && let Some((spec, text)) = split_option(line) {
            out.push(".TP".into());
            out.push(render_option(spec));
            out.push(roff(text));
            continue;
        }
        out.push(".PP".into());
        out.push(roff(line.trim()));
    }
    out.push(END.into());
    out.join("\n") + "\n"
}

#[test]
fn man_page_matches_help() {
    let generated = render(&help_text());

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/vigil.1");
    let page = std::fs::read_to_string(&path).unwrap_or_default();
    let (Some(start), Some(end)) = (page.find(BEGIN), page.find(END)) else {
        panic!(
            "{} has no generated part (the lines {BEGIN:?} ... {END:?})",
            path.display()
        );
    };
    let end = end + END.len() + 1;
    let current = page.get(start..end.min(page.len())).unwrap_or("");
    if current == generated {
        return;
    }
    if std::env::var_os("VIGIL_UPDATE_MAN").is_some() {
        let updated = format!(
            "{}{}{}",
            &page[..start],
            generated,
            &page[end.min(page.len())..]
        );
        std::fs::write(&path, updated).unwrap();
        eprintln!("updated {}", path.display());
        return;
    }
    panic!(
        "docs/vigil.1 differs from `vigil --help`; run `VIGIL_UPDATE_MAN=1 cargo test --test it man::`\n\
         --- in the page ---\n{current}\n--- from --help ---\n{generated}"
    );
}

/// Every option the help lists has an entry in the rendering (this would
/// catch a renderer that silently dropped lines).
#[test]
fn every_option_is_rendered() {
    let help = help_text();
    let generated = render(&help);
    let mut count = 0;
    for line in help.lines() {
        let Some((spec, _)) = split_option(line) else {
            continue;
        };
        count += 1;
        let rendered = render_option(spec);
        assert!(
            generated.contains(&format!(".TP\n{rendered}\n")),
            "{spec} ({rendered}) is not rendered:\n{generated}"
        );
    }
    assert!(count >= 15, "only {count} options found in --help:\n{help}");
}

/// The page is valid roff that man can format without warnings.
#[test]
fn man_formats_the_page() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/vigil.1");
    let Ok(out) = std::process::Command::new("man")
        .args(["--warnings", "-l", "-E", "UTF-8"])
        .arg(&path)
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .output()
    else {
        skip("man_formats_the_page", "no `man` command (Debian's man-db)");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--grace-period"), "{text}");
}
