//! The layers of docs/design.md, held against the code: every `crate::`
//! path in `src/` (outside the unit tests) names a module on a lower floor
//! than its own, or `sys`, which any module may use and which uses only
//! lib.rs's `run`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The floors docs/design.md gives, by module.
fn floors() -> BTreeMap<String, u32> {
    let design = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/design.md"))
        .expect("docs/design.md");
    let table = design
        .split_once("<!-- layers -->")
        .and_then(|(_, rest)| rest.split_once("<!-- /layers -->"))
        .map(|(table, _)| table)
        .expect("docs/design.md has the layers table between <!-- layers --> markers");
    let mut floors = BTreeMap::new();
    for row in table.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Ok(floor) = cells[1].parse::<u32>() else {
            continue;
        };
        for module in cells[2].split(',') {
            let module = module.trim().trim_matches('`');
            assert!(
                floors.insert(module.to_string(), floor).is_none(),
                "{module} is on two floors"
            );
        }
    }
    floors
}

/// The production source of a top-level module: `src/NAME.rs` and the
/// files under `src/NAME/`, without the unit tests (files named
/// `tests.rs`, folders named `tests`, and an inline `mod tests` at the end
/// of a file).
fn sources(module: &str) -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let file = src.join(format!("{module}.rs"));
    if file.is_file() {
        files.push(file);
    }
    let mut dirs = vec![src.join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() && name != "tests" {
                dirs.push(path);
            } else if name.ends_with(".rs") && name != "tests.rs" {
                files.push(path);
            }
        }
    }
    files
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).expect("a source file");
            let code = match text.find("#[cfg(test)]\nmod tests {") {
                Some(at) => text[..at].to_string(),
                None => text,
            };
            (path, code)
        })
        .collect()
}

/// The modules `code` names as `crate::NAME`, outside comments, with the
/// line each is on.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            // `crate::{a::x, b}`: each module the group names.
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(str::trim)
                    .collect(),
                None => vec![rest],
            };
            for name in names {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push((n + 1, name));
                }
            }
        }
    }
    found
}

#[test]
fn every_module_has_a_floor() {
    let floors = floors();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in fs::read_dir(src).expect("src/") {
        let path = entry.expect("an entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if stem == "sys" {
            continue;
        }
        assert!(
            floors.contains_key(stem),
            "src/{stem} has no floor in docs/design.md's layers table"
        );
    }
    for module in floors.keys() {
        assert!(
            !sources(module).is_empty(),
            "the layers table names {module}, which src/ does not have"
        );
    }
}

#[test]
fn each_module_imports_only_from_below() {
    let floors = floors();
    let mut wrong = Vec::new();
    for (module, floor) in &floors {
        for (path, code) in sources(module) {
            for (line, used) in crate_paths(&code) {
                let allowed = used == *module
                    || used == "sys"
                    || floors.get(&used).is_some_and(|f| f < floor);
                if !allowed {
                    wrong.push(format!(
                        "{}:{line}: {module} (floor {floor}) uses {used} (floor {})",
                        path.display(),
                        floors
                            .get(&used)
                            .map_or("none".to_string(), |f| f.to_string())
                    ));
                }
            }
        }
    }
    for (path, code) in sources("sys") {
        for (line, used) in crate_paths(&code) {
            if used != "sys" && used != "run" {
                wrong.push(format!("{}:{line}: sys uses {used}", path.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

/// The check itself: a path on the same floor or above is caught.
#[test]
fn the_check_sees_a_wrong_import() {
    let code = "use crate::text::duration;\n// crate::supervisor in a comment\nlet x = crate::supervisor::run;\nuse crate::{cli::Config, log};";
    let found = crate_paths(code);
    assert_eq!(
        found,
        [
            (1, "text".to_string()),
            (3, "supervisor".to_string()),
            (4, "cli".to_string()),
            (4, "log".to_string())
        ]
    );
}
