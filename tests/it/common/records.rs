//! vigil's records (`--log-format json`), read by the tests: a fact that
//! a record carries is asserted on the record's fields, not on the words
//! of the text line (docs/logging.md lists the events and their fields).
//! Every record read here is held to docs/logging-schema.json first.

use super::check::Schema;
use super::{Output, Running, Vigil, wait_until};
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

impl Vigil {
    /// `--log-format json`: every line vigil writes is a record.
    pub fn json(self) -> Vigil {
        self.args(["--log-format", "json"])
    }
}

/// docs/logging-schema.json, read once.
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(Schema::load)
}

/// One line as vigil's JSON record, held to the schema; None for a line
/// that is not one of vigil's (the application's own output, its own
/// JSON lines).
pub fn vigil_record(line: &str) -> Result<Option<Value>, String> {
    let line = line.trim_end_matches('\r');
    let Some(start) = line.find("{\"time\":") else {
        return Ok(None);
    };
    // A record may follow the child's last, unfinished line.
    let Ok(value) = serde_json::from_str::<Value>(&line[start..]) else {
        return if line.contains("\"logger\":\"vigil\"") {
            Err(format!("a broken record: {line}"))
        } else {
            Ok(None)
        };
    };
    if value["logger"] != "vigil" {
        return Ok(None);
    }
    schema()
        .check_json(&value)
        .map_err(|e| format!("{e}\n{line}"))?;
    Ok(Some(value))
}

/// vigil's records in a log (its stderr, `docker logs`, a pty's output),
/// in order.
#[derive(Clone, Debug, Default)]
pub struct Records(pub Vec<Value>);

impl Records {
    /// Every record in `log`; panics on a line that is a broken record or
    /// one the schema does not allow.
    pub fn of(log: &str) -> Records {
        Records(
            log.lines()
                .filter_map(|l| {
                    vigil_record(l).unwrap_or_else(|e| panic!("{e}\n--- log ---\n{log}"))
                })
                .collect(),
        )
    }

    /// The records of `event`.
    pub fn all(&self, event: &str) -> Vec<&Value> {
        self.0.iter().filter(|r| r["event"] == event).collect()
    }

    /// Whether there is a record of `event`.
    pub fn has(&self, event: &str) -> bool {
        self.0.iter().any(|r| r["event"] == event)
    }

    /// The one record of `event`; panics unless there is exactly one.
    pub fn one(&self, event: &str) -> &Value {
        match self.all(event).as_slice() {
            [one] => one,
            found => panic!("{} {event} records in:\n{self}", found.len()),
        }
    }

    /// The exit record (the exit report).
    pub fn exit(&self) -> &Value {
        self.one("exit")
    }

    /// The events, in order.
    pub fn events(&self) -> Vec<&str> {
        self.0.iter().filter_map(|r| r["event"].as_str()).collect()
    }
}

impl fmt::Display for Records {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.0 {
            writeln!(f, "{r}")?;
        }
        Ok(())
    }
}

impl Output {
    /// vigil's records in its stderr.
    pub fn records(&self) -> Records {
        Records::of(&self.stderr)
    }
}

impl Running {
    /// vigil's records in its stderr so far.
    pub fn records_now(&self) -> Records {
        Records::of(&self.stderr_now())
    }

    /// Waits until vigil has written a record of `event` for which `pick`
    /// holds; returns it, or None after `timeout`.
    pub fn wait_record(
        &self,
        event: &str,
        timeout: Duration,
        pick: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let mut found = None;
        wait_until(timeout, || {
            found = self
                .records_now()
                .0
                .into_iter()
                .find(|r| r["event"] == event && pick(r));
            found.is_some()
        });
        found
    }

    /// Waits for a record of `event`; panics with what ran after
    /// `timeout`.
    pub fn expect_record(&self, event: &str, timeout: Duration) -> Value {
        self.wait_record(event, timeout, |_| true)
            .unwrap_or_else(|| panic!("no {event} record\n{}", self.describe()))
    }
}

/// Whether `record` holds every field of `want`, with the same value:
/// objects are compared field by field (the record may have more), lists
/// item by item (as many items), every other value exactly. Err names the
/// first field that differs.
pub fn fields_match(record: &Value, want: &Value) -> Result<(), String> {
    fn walk(path: &str, got: &Value, want: &Value) -> Result<(), String> {
        match (got, want) {
            (Value::Object(got), Value::Object(want)) => {
                for (key, w) in want {
                    let here = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    match got.get(key) {
                        Some(g) => walk(&here, g, w)?,
                        None => return Err(format!("{here} is missing (want {w})")),
                    }
                }
                Ok(())
            }
            (Value::Array(got), Value::Array(want)) => {
                if got.len() != want.len() {
                    return Err(format!(
                        "{path} has {} items, want {}: {}",
                        got.len(),
                        want.len(),
                        Value::Array(want.clone())
                    ));
                }
                for (i, (g, w)) in got.iter().zip(want).enumerate() {
                    walk(&format!("{path}.{i}"), g, w)?;
                }
                Ok(())
            }
            _ if got == want => Ok(()),
            _ => Err(format!("{path} is {got}, want {want}")),
        }
    }
    walk("", record, want)
}

/// Asserts that `record` holds every field of `want` (`fields_match`).
#[track_caller]
pub fn assert_fields(record: &Value, want: Value, context: impl fmt::Display) {
    if let Err(why) = fields_match(record, &want) {
        panic!("{why}\nrecord: {record}\n{context}");
    }
}

/// The pids in a list of `proc` objects (`killed`, `grace_kills`, ...).
pub fn pids_of(list: &Value) -> Vec<i64> {
    list.as_array()
        .map(|l| l.iter().filter_map(|p| p["pid"].as_i64()).collect())
        .unwrap_or_default()
}

/// The names in a list of `proc` objects.
pub fn names_of(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|l| {
            l.iter()
                .filter_map(|p| p["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}
