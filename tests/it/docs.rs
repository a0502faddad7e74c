//! What a new user meets is true: every code block of the README and
//! docs/*.md is run as written, is output a run printed, is held by
//! another test, or is marked a sketch with the reason
//! (CONTRIBUTING.md, "Examples in the docs"; the markers and the
//! placeholders are in tests/it/common/docs.rs). This module checks the
//! markers and runs what needs no container engine: the Kubernetes
//! manifests against the API's schema (kubernetes-validate), the Compose
//! files (docker-compose), the shell examples on this machine.
//! tests/it/e2e/docs.rs runs what needs Docker or podman.
//!
//!     cargo test --test it docs -- --nocapture

use crate::common::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------------------
// The markers
// ---------------------------------------------------------------------------

/// Every block carries a marker the tests act on; a `run` names a runner
/// the tests have, an `output` a run that makes it, a `checked` a file
/// that exists and names the doc; and no example hides in an indented
/// code block, which has no info string and no marker.
#[test]
fn every_example_is_marked() {
    let blocks = all_blocks();
    let mut wrong = Vec::new();
    let names: Vec<&str> = blocks.iter().filter_map(run_name).collect();
    for b in &blocks {
        match &b.marker {
            Marker::Missing(None) => wrong.push(format!(
                "{b}: no marker on the line before the fence (`<!-- run: ... -->`, `<!-- output: ... -->`, `<!-- checked: ... -->` or `<!-- sketch: WHY -->`)"
            )),
            Marker::Missing(Some(c)) => {
                wrong.push(format!("{b}: a marker the tests do not know: <!-- {c} -->"))
            }
            Marker::Run { runner, .. } if !RUNNERS.contains(&runner.as_str()) => wrong.push(
                format!("{b}: no runner {runner:?} (the runners: {})", RUNNERS.join(", ")),
            ),
            Marker::Output(name) if !names.contains(&name.as_str()) && !SCENARIOS.contains(&name.as_str()) => {
                wrong.push(format!("{b}: no `run: docker {name}` or `run: shell {name}` block, and no scenario {name:?} in the tests"))
            }
            Marker::Checked(what) => {
                // `PATH, how` (CONTRIBUTING.md) or `PATH how`.
                let path = what.split_whitespace().next().unwrap();
                let path = path.trim_end_matches(',');
                if !repo().join(path).is_file() {
                    wrong.push(format!("{b}: checked by {path}, which is not a file"));
                }
            }
            _ => {}
        }
    }
    for name in names
        .iter()
        .filter(|n| names.iter().filter(|m| m == n).count() > 1)
    {
        wrong.push(format!("two `run` blocks are named {name:?}"));
    }
    for file in doc_files() {
        let text = fs::read_to_string(&file).unwrap();
        for line in indented_code_lines(&text) {
            wrong.push(format!(
                "{}:{line}: an indented code block; fence it (```sh, ```text, ...) and mark it",
                file.strip_prefix(repo()).unwrap().display()
            ));
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    say_uncaptured(&tally(&blocks));
}

// ---------------------------------------------------------------------------
// The README
// ---------------------------------------------------------------------------

/// The README is read whole, by someone deciding whether to use vigil:
/// it stays short, and the details live in docs/, which it links to.
#[test]
fn the_readme_is_at_most_250_lines() {
    let lines = fs::read_to_string(repo().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: keep it to 250, and move details to docs/"
    );
}

/// The README's first Dockerfile works with what its "Install" leaves a
/// new user with: one release binary, `vigil-ARCH`, in the build
/// context. A `COPY --from=IMAGE` would need an image made first:
/// docs/docker.md's `vigil` image, which Docker 20.10's classic builder
/// makes only with all seven binaries in dist/, or the release image,
/// from a registry the project has not published. (tests/it/e2e/docs.rs
/// builds the block with this run's binary under that name.)
#[test]
fn the_readmes_first_dockerfile_needs_only_a_binary() {
    let readme = blocks_of(&repo().join("README.md"));
    let first = readme
        .iter()
        .find(|b| b.lang == "dockerfile")
        .expect("a Dockerfile in the README");
    assert!(
        !first.text.contains("--from="),
        "{first}: takes vigil from an image:\n{}",
        first.text
    );
    assert!(
        first
            .text
            .lines()
            .any(|l| l.trim() == "COPY vigil-x86_64 /vigil"),
        "{first}: does not copy the release binary:\n{}",
        first.text
    );
}

/// The verbosity levels are said alike wherever a user meets them, each
/// by its number and its spelling: `--help`, the README, and
/// docs/options.md's table, whose rows give both ways to ask for a level
/// (an image sets `VIGIL_VERBOSITY=2` where a command line says `-v`: the
/// `ready` event is shown "at `-v`", which is not `VIGIL_VERBOSITY=1`).
#[test]
fn the_verbosity_levels_are_said_alike() {
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let help = words(&help_text());
    for said in [
        "1 is the default",
        "-v 2",
        "-vv 3",
        "-vvv 4",
        "0-4 (0: errors alone)",
    ] {
        assert!(help.contains(said), "--help does not say {said:?}:\n{help}");
    }
    let readme = words(&fs::read_to_string(repo().join("README.md")).unwrap());
    for said in [
        "`VIGIL_VERBOSITY=N`",
        "0 is errors alone",
        "default 1",
        "2 (`-v`)",
        "3 (`-vv`)",
        "4 (`-vvv`)",
        "the `ready` event",
    ] {
        assert!(
            readme.contains(said),
            "the README's verbosity does not say {said:?}"
        );
    }
    let options = fs::read_to_string(repo().join("docs/options.md")).unwrap();
    let section = options
        .split("## Verbosity")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/options.md has a Verbosity section");
    for level in 0..=4 {
        let row = section
            .lines()
            .find(|l| l.starts_with(&format!("| {level} |")))
            .unwrap_or_else(|| panic!("docs/options.md: no row for verbosity {level}"));
        let given = row.split('|').nth(2).unwrap();
        assert!(
            given.contains(&format!("`VIGIL_VERBOSITY={level}`")),
            "docs/options.md, verbosity {level}: {row}"
        );
        if level >= 2 {
            let flag = format!("`-{}`", "v".repeat(level - 1));
            assert!(
                given.contains(&flag),
                "docs/options.md, verbosity {level}: {row}"
            );
        }
    }
}

/// How many blocks of each doc are run, output, held by another test,
/// sketches.
fn tally(blocks: &[Block]) -> String {
    let mut per_file: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for b in blocks {
        let i = match b.marker {
            Marker::Run { .. } => 0,
            Marker::Output(_) | Marker::Records => 1,
            Marker::Checked(_) => 2,
            Marker::Sketch(_) => 3,
            Marker::Missing(_) => continue,
        };
        per_file.entry(&b.file).or_default()[i] += 1;
    }
    let mut s = String::from("docs: examples (run / output / checked elsewhere / sketch):");
    for (file, [r, o, c, k]) in per_file {
        s.push_str(&format!("\n  {file}: {r} / {o} / {c} / {k}"));
    }
    s
}

/// The first lines of the indented code blocks of a markdown text: a line
/// indented four columns past the list item it belongs to (or the margin),
/// after a blank line, outside a fenced block.
fn indented_code_lines(text: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let (mut fence, mut blank, mut item) = (None::<String>, true, 0usize);
    for (n, line) in text.lines().enumerate() {
        let rest = line.trim_start();
        let indent = line.len() - rest.len();
        if let Some(f) = &fence {
            if rest.starts_with(f.as_str()) {
                fence = None;
            }
            continue;
        }
        if rest.starts_with("```") || rest.starts_with("~~~") {
            fence = Some(rest[..3].to_string());
            blank = false;
            continue;
        }
        if rest.is_empty() {
            blank = true;
            continue;
        }
        if blank && indent >= item + 4 {
            found.push(n + 1);
            // The rest of the block is not another one.
            blank = false;
            continue;
        }
        if let Some(width) = list_marker(rest) {
            item = indent + width;
        } else if indent < item && blank {
            item = 0;
        }
        blank = false;
    }
    found
}

/// The width of a list item's marker and its space (`- `, `12. `).
fn list_marker(rest: &str) -> Option<usize> {
    if rest.starts_with("- ") || rest.starts_with("* ") || rest.starts_with("+ ") {
        return Some(2);
    }
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    (digits > 0 && rest[digits..].starts_with(". ")).then_some(digits + 2)
}

#[test]
fn indented_code_blocks_are_found_and_list_text_is_not() {
    let text = "Para\n\n    code\n\n- item\n  more\n\n  still the item\n\n      code in the item\n\n1. one\n   text\n\n       code in one\n";
    assert_eq!(indented_code_lines(text), [3, 10, 15]);
}

#[test]
fn normalize_leaves_out_what_varies_and_keeps_the_rest() {
    let doc = "vigil[7]: warning: grace period (2s) over: SIGKILL to 7 (sleep 1000), 31 (worker)\n\
               stop: SIGTERM from pid 0 (outside this PID namespace), child ended 2.001s later; command: sh (pid 7)\n\
               started 2026-12-04T16:54:06.489Z; HTTP status 200 (OK) in 0.002s\n\
               commit 0123456789ab, built for aarch64-unknown-linux-musl\n";
    let run = "vigil[12]: warning: grace period (2s) over: SIGKILL to 8 (sleep 1000), 40 (worker)\n\
               stop: SIGTERM from pid 0 (outside this PID namespace), child ended 2.000s later; command: sh (pid 8)\n\
               started 2027-01-01T00:00:00.000Z; HTTP status 200 (OK) in 0.000s\n\
               commit 614b9bd-modified, built for x86_64-unknown-linux-musl\n\n";
    assert_eq!(normalize(doc), normalize(run));
    for (from, to) in [
        ("grace period (2s)", "grace period (3s)"),
        ("from pid 0 (outside", "from pid 1 (outside"),
        ("status 200 (OK)", "status 201 (OK)"),
        ("2.000s later", "2.00s later"),
        ("sleep 1000)", "sleep 100)"),
    ] {
        let other = run.replacen(from, to, 1);
        assert_ne!(normalize(doc), normalize(&other), "{from} -> {to}");
    }
}

// ---------------------------------------------------------------------------
// Kubernetes manifests, against the API's schema
// ---------------------------------------------------------------------------

/// The venv .ci/run makes for kubernetes-validate (its schemas bundled).
const KUBERNETES_VALIDATE: &str = "/var/cache/vigil-docs/kubernetes-validate-1.37.0";

/// kubernetes-validate, or None after a skip.
fn kubernetes_validate(test: &str) -> Option<PathBuf> {
    let venv = Path::new(KUBERNETES_VALIDATE).join("bin/kubernetes-validate");
    if venv.is_file() {
        return Some(venv);
    }
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("kubernetes-validate"))
        .find(|p| p.is_file());
    if on_path.is_none() {
        skip(
            test,
            &format!(
                "no kubernetes-validate (PyPI; .ci/run installs it into {KUBERNETES_VALIDATE})"
            ),
        );
    }
    on_path
}

/// A manifest as kubernetes-validate reads it: a whole object as it is; a
/// fragment (`in container`, `in pod-spec`) wrapped into the smallest Pod
/// that holds it, so that its fields' names and types are checked too.
fn manifest(block: &Block) -> String {
    let inside = block.run().and_then(|(_, args)| {
        args.iter()
            .position(|a| a == "in")
            .map(|i| args[i + 1].as_str())
    });
    let indent = |text: &str, n: usize| -> String {
        let cut = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        text.lines()
            .map(|l| {
                if l.trim().is_empty() {
                    "\n".to_string()
                } else {
                    format!("{}{}\n", " ".repeat(n), &l[cut..])
                }
            })
            .collect()
    };
    let head = "apiVersion: v1\nkind: Pod\nmetadata: {name: docs}\nspec:\n";
    match inside {
        None => block.text.clone(),
        Some("pod-spec") => format!("{head}{}", indent(&block.text, 2)),
        Some("container") => format!(
            "{head}  containers:\n    - name: docs\n      image: docs\n{}",
            indent(&block.text, 6)
        ),
        Some(other) => panic!("{block}: no wrapper {other:?} (container, pod-spec)"),
    }
}

/// Every `run: kubernetes VERSION...` block is valid, strictly (no field
/// the API does not have), for each Kubernetes version its marker names.
#[test]
fn kubernetes_manifests_are_valid() {
    const T: &str = "kubernetes_manifests_are_valid";
    let blocks = run_blocks("kubernetes");
    assert!(!blocks.is_empty(), "no `run: kubernetes` block in the docs");
    let Some(validate) = kubernetes_validate(T) else {
        return;
    };
    let dir = TempDir::new("docs-k8s");
    let mut failed = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let versions: Vec<&String> = b
            .run()
            .unwrap()
            .1
            .iter()
            .take_while(|a| *a != "in")
            .collect();
        assert!(
            !versions.is_empty(),
            "{b}: name the Kubernetes versions in its marker"
        );
        let file = dir.join(format!("{i}.yaml"));
        fs::write(&file, manifest(b)).unwrap();
        for v in versions {
            let out = run_cmd(
                Command::new(&validate)
                    .args(["--strict", "--no-warn", "-k", v])
                    .arg(&file),
                Duration::from_secs(60),
            );
            let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
            if out.status.success() {
                note(T, format!("{b}: valid for Kubernetes {v}"));
            } else {
                failed.push(format!(
                    "{b} against Kubernetes {v}:\n{said}\n{}",
                    manifest(b)
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn kubernetes_fragments_are_wrapped_into_a_pod() {
    let mut b = parse_blocks(
        "x.md",
        "<!-- run: kubernetes 1.35 in container -->\n```yaml\nreadinessProbe:\n  httpGet: {port: 8080}\n```\n",
    );
    let b = b.remove(0);
    assert_eq!(
        manifest(&b),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: docs}\nspec:\n  containers:\n    - name: docs\n      image: docs\n      readinessProbe:\n        httpGet: {port: 8080}\n"
    );
}

// ---------------------------------------------------------------------------
// Compose files
// ---------------------------------------------------------------------------

/// Every `run: compose` block is a Compose file `docker-compose config`
/// takes.
#[test]
fn compose_files_are_valid() {
    const T: &str = "compose_files_are_valid";
    let blocks = run_blocks("compose");
    assert!(!blocks.is_empty(), "no `run: compose` block in the docs");
    let Some(compose) = need_program(T, "docker-compose", "docker-compose") else {
        return;
    };
    let dir = TempDir::new("docs-compose");
    for (i, b) in blocks.iter().enumerate() {
        let file = dir.join(format!("compose-{i}.yaml"));
        fs::write(&file, &b.text).unwrap();
        let out = run_cmd(
            Command::new(&compose)
                .args(["--project-directory"])
                .arg(dir.path())
                .arg("-f")
                .arg(&file)
                .args(["config", "-q"]),
            Duration::from_secs(60),
        );
        assert!(
            out.status.success(),
            "{b}: docker-compose config -q:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        note(T, format!("{b}: docker-compose config -q: valid"));
    }
}

// ---------------------------------------------------------------------------
// Shell examples on this machine
// ---------------------------------------------------------------------------

/// Every `run: shell` block, run by bash as written (no `-e`, as a
/// user's shell runs it): in the repository
/// (`run: shell`), or in a CI job's directory whose Makefile has an
/// `integration-test` target (`run: shell job`); with this run's vigil
/// first in PATH. Each must exit 0.
#[test]
fn shell_examples_run() {
    let blocks = run_blocks("shell");
    assert!(!blocks.is_empty(), "no `run: shell` block in the docs");
    let bin = TempDir::new("docs-shell-bin");
    std::os::unix::fs::symlink(vigil_bin(), bin.join("vigil")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for b in blocks {
        let job = TempDir::new("docs-shell-job");
        let dir = if b.has_word("job") {
            fs::write(
                job.join("Makefile"),
                "integration-test:\n\t@echo integration tests passed\n",
            )
            .unwrap();
            job.path()
        } else {
            repo()
        };
        let mut bash = Command::new("bash");
        bash.arg("-c")
            .arg(format!("exec 2>&1\n{}", b.text))
            .current_dir(dir)
            .env("PATH", &path);
        without_vigil_settings(&mut bash);
        if dir == repo() {
            // cargo test hands build.rs's VIGIL_COMMIT and VIGIL_TARGET to
            // the tests; the block's `cargo build` would rebuild without
            // them (vigil then warns of two variables it does not read).
            for k in ["VIGIL_COMMIT", "VIGIL_TARGET"] {
                if let Some(v) = std::env::var_os(k) {
                    bash.env(k, v);
                }
            }
        }
        let out = run_cmd(&mut bash, Duration::from_secs(900));
        let printed = text(&out.stdout);
        assert!(out.status.success(), "{b}: {}:\n{printed}", out.status);
        note("shell_examples_run", format!("{b}: ran:\n{printed}"));
        if let Some(name) = run_name(&b).filter(|n| *n != "job") {
            assert_output(&output_block(name), &printed);
        }
    }
}

/// install.md's `vigil --version` lines are what vigil prints.
#[test]
fn version_output_is_what_vigil_prints() {
    let out = run_cmd(
        Command::new(vigil_bin()).arg("--version"),
        Duration::from_secs(10),
    );
    assert!(out.status.success());
    assert_output(&output_block("version"), &text(&out.stdout));
}
