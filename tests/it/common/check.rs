//! The tests' side of the log schema: reads docs/logging-schema.json and
//! checks records against it, JSON ones read by serde_json and logfmt ones
//! by a strict parser here. A record with a field the schema does not list,
//! without a required one, or with a value of the wrong type fails.
//!
//! Uses only std and serde_json, so that vigil's unit tests can include it
//! as it is (src/log/mod.rs) and hold the records they build to the same
//! schema as what vigil really writes.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// docs/logging-schema.json, read.
pub struct Schema {
    doc: Value,
}

impl Schema {
    pub fn load() -> Schema {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/logging-schema.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        Schema { doc }
    }

    /// The schema's version.
    pub fn version(&self) -> u64 {
        self.doc["schema"].as_u64().expect("schema version")
    }

    /// Every event's name.
    pub fn events(&self) -> Vec<String> {
        self.doc["events"]
            .as_object()
            .expect("events")
            .keys()
            .cloned()
            .collect()
    }

    /// The levels an event is written at.
    pub fn level_names(&self, event: &str) -> Vec<String> {
        self.doc["events"][event]["levels"]
            .as_array()
            .expect("levels")
            .iter()
            .filter_map(|l| l.as_str().map(String::from))
            .collect()
    }

    /// Every object type's name.
    pub fn objects(&self) -> Vec<String> {
        self.doc["objects"]
            .as_object()
            .expect("objects")
            .keys()
            .cloned()
            .collect()
    }

    /// The fields of an event, or of an object type, as `(name, required,
    /// type)`.
    pub fn fields_of(&self, section: &str, name: &str) -> Vec<(String, bool, Value)> {
        let fields = match section {
            "events" => &self.doc["events"][name]["fields"],
            "objects" => &self.doc["objects"][name],
            _ => &self.doc["common"],
        };
        fields
            .as_object()
            .unwrap_or_else(|| panic!("no {section} {name} in the schema"))
            .iter()
            .map(|(key, ty)| match key.strip_suffix('?') {
                Some(bare) => (bare.to_string(), false, ty.clone()),
                None => (key.clone(), true, ty.clone()),
            })
            .collect()
    }

    /// Checks one record, as serde_json read it.
    pub fn check_json(&self, record: &Value) -> Result<(), String> {
        let object = record.as_object().ok_or("a record is a JSON object")?;
        let event = object
            .get("event")
            .and_then(Value::as_str)
            .ok_or("a record has an event (a string)")?;
        let spec = self.doc["events"]
            .get(event)
            .ok_or_else(|| format!("event {event:?} is not in the schema"))?;
        let level = object.get("level").and_then(Value::as_str).unwrap_or("");
        let levels = spec["levels"].as_array().expect("levels");
        if !levels.iter().any(|l| l == level) {
            return Err(format!("{event}: level {level:?} is not one of {levels:?}"));
        }
        if object.get("schema").and_then(Value::as_u64) != Some(self.version()) {
            return Err(format!("{event}: schema is not {}", self.version()));
        }
        let mut fields = self.fields_of("common", "");
        fields.extend(self.fields_of("events", event));
        self.check_object(event, object, &fields)
    }

    fn check_object(
        &self,
        path: &str,
        object: &Map<String, Value>,
        fields: &[(String, bool, Value)],
    ) -> Result<(), String> {
        for (name, required, ty) in fields {
            match object.get(name) {
                Some(value) => self.check_value(&format!("{path}.{name}"), value, ty)?,
                None if *required => return Err(format!("{path}: no {name}, which is required")),
                None => {}
            }
        }
        for (key, value) in object {
            if fields.iter().any(|(name, _, _)| name == key) {
                continue;
            }
            let more_of_a_list = key.strip_suffix("_more").is_some_and(|list| {
                fields.iter().any(|(name, _, ty)| {
                    name == list && ty.as_str().is_some_and(|t| t.starts_with('['))
                }) && object.contains_key(list)
            });
            if more_of_a_list && value.is_u64() {
                continue;
            }
            return Err(format!("{path}: {key} is not in the schema"));
        }
        Ok(())
    }

    fn check_value(&self, path: &str, value: &Value, ty: &Value) -> Result<(), String> {
        let bad = |what: &str| Err(format!("{path}: {value} is not {what}"));
        if let Some(choices) = ty.as_array() {
            return match value.as_str() {
                Some(s) if choices.iter().any(|c| c == s) => Ok(()),
                _ => bad(&format!("one of {choices:?}")),
            };
        }
        let ty = ty
            .as_str()
            .expect("a type is a string or a list of strings");
        if let Some(item) = ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            let Some(items) = value.as_array() else {
                return bad("a list");
            };
            for (i, item_value) in items.iter().enumerate() {
                self.check_value(&format!("{path}.{i}"), item_value, &Value::from(item))?;
            }
            return Ok(());
        }
        let ok = match ty {
            "int" => value.is_i64() || value.is_u64(),
            "str" => value.is_string(),
            "bool" => value.is_boolean(),
            "secs" => value.as_number().is_some_and(|n| is_secs(&n.to_string())),
            "time" => value.as_str().is_some_and(is_time),
            "signal" => value.as_str().is_some_and(is_signal),
            object => {
                let Some(map) = value.as_object() else {
                    return bad(&format!("an object ({object})"));
                };
                self.check_object(path, map, &self.fields_of("objects", object))?;
                return check_conditions(path, object, map);
            }
        };
        if ok { Ok(()) } else { bad(ty) }
    }

    /// Reads a logfmt line into the JSON object it stands for, guided by
    /// the schema (logfmt has only strings: the schema says which are
    /// numbers), and checks it. Every pair must be used: a key the schema
    /// does not list fails.
    pub fn check_logfmt(&self, line: &str) -> Result<Value, String> {
        let pairs = parse_logfmt(line)?;
        let mut map = BTreeMap::new();
        for (key, value) in pairs {
            if map.insert(key.clone(), value).is_some() {
                return Err(format!("{key} appears twice"));
            }
        }
        let event = map.get("event").cloned().ok_or("no event")?;
        if !self.doc["events"].get(&event).is_some_and(Value::is_object) {
            return Err(format!("event {event:?} is not in the schema"));
        }
        let mut fields = self.fields_of("common", "");
        fields.extend(self.fields_of("events", &event));
        let object = self.read_pairs(&mut map, "", &fields)?;
        if let Some(key) = map.keys().next() {
            return Err(format!("{event}: {key} is not in the schema"));
        }
        let record = Value::Object(object);
        self.check_json(&record)?;
        Ok(record)
    }

    fn read_pairs(
        &self,
        pairs: &mut BTreeMap<String, String>,
        prefix: &str,
        fields: &[(String, bool, Value)],
    ) -> Result<Map<String, Value>, String> {
        let mut object = Map::new();
        for (name, _, ty) in fields {
            let key = format!("{prefix}{name}");
            let named = ty.as_str().unwrap_or("");
            if let Some(item) = named.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                let Some(count) = pairs.remove(&key) else {
                    continue;
                };
                let count: usize = count
                    .parse()
                    .map_err(|_| format!("{key}={count} is not a count of items"))?;
                let item_fields = self.fields_of("objects", item);
                let mut items = Vec::new();
                for i in 0..count {
                    let item_prefix = format!("{key}.{i}.");
                    items.push(Value::Object(self.read_pairs(
                        pairs,
                        &item_prefix,
                        &item_fields,
                    )?));
                }
                object.insert(name.clone(), Value::Array(items));
                if let Some(more) = pairs.remove(&format!("{key}_more")) {
                    object.insert(format!("{name}_more"), number(&key, &more)?);
                }
            } else if self.doc["objects"].get(named).is_some() {
                let inner_prefix = format!("{key}.");
                if pairs.keys().any(|k| k.starts_with(&inner_prefix)) {
                    let inner =
                        self.read_pairs(pairs, &inner_prefix, &self.fields_of("objects", named))?;
                    object.insert(name.clone(), Value::Object(inner));
                }
            } else if let Some(text) = pairs.remove(&key) {
                let value = match named {
                    "int" | "secs" => number(&key, &text)?,
                    "bool" => match text.as_str() {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        _ => return Err(format!("{key}={text} is not a boolean")),
                    },
                    _ => Value::String(text),
                };
                object.insert(name.clone(), value);
            }
        }
        Ok(object)
    }
}

/// What the schema's types cannot say: an exited ending has a code, a
/// killed one a signal.
fn check_conditions(path: &str, object: &str, map: &Map<String, Value>) -> Result<(), String> {
    let needs = |field: &str| {
        if map.contains_key(field) {
            Ok(())
        } else {
            Err(format!("{path}: no {field}"))
        }
    };
    if object == "ending" {
        match map.get("kind").and_then(Value::as_str) {
            Some("exited") => needs("code")?,
            Some("killed") => {
                needs("signal")?;
                needs("core_dumped")?;
            }
            _ => {}
        }
        if map.get("cause").and_then(Value::as_str) == Some("forwarded") {
            needs("forwarded")?;
        }
    }
    Ok(())
}

fn number(key: &str, text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(n @ Value::Number(_)) => Ok(n),
        _ => Err(format!("{key}={text} is not a number")),
    }
}

/// At most three decimals, not negative: `0`, `1.5`, `0.002`.
fn is_secs(text: &str) -> bool {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && fraction.len() <= 3
        && fraction.bytes().all(|b| b.is_ascii_digit())
        && !fraction.ends_with('0')
        && (text.contains('.') != fraction.is_empty())
}

/// `2026-12-01T18:06:20.123Z`.
fn is_time(text: &str) -> bool {
    let pattern = b"dddd-dd-ddTdd:dd:dd.dddZ";
    text.len() == pattern.len()
        && text.bytes().zip(pattern.iter()).all(|(b, p)| match p {
            b'd' => b.is_ascii_digit(),
            _ => b == *p,
        })
}

fn is_signal(text: &str) -> bool {
    let named = text.strip_prefix("SIG").is_some_and(|n| {
        !n.is_empty()
            && n.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'+' || b == b'-')
    });
    named || matches!(text, "signal 32" | "signal 33")
}

/// Parses a logfmt line strictly: `key=value` pairs separated by single
/// spaces, keys of `[a-z0-9_.]`, values bare (no space, `"`, `=`, `\` or
/// control character) or in double quotes with JSON's escapes. Ends with
/// one newline or none. Anything else is an error, where lenient parsers
/// would guess.
pub fn parse_logfmt(line: &str) -> Result<Vec<(String, String)>, String> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    if line.contains('\n') {
        return Err("a line holds no newline".into());
    }
    let mut pairs = Vec::new();
    let mut rest = line;
    loop {
        let (key, after) = rest
            .split_once('=')
            .ok_or_else(|| format!("no = after {rest:?}"))?;
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
        {
            return Err(format!("bad key {key:?}"));
        }
        let (value, after) = if let Some(quoted) = after.strip_prefix('"') {
            unquote(quoted)?
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            let value = &after[..end];
            if value.is_empty()
                || value
                    .chars()
                    .any(|c| c == '"' || c == '=' || c == '\\' || c.is_control())
            {
                return Err(format!("bad bare value {value:?} for {key}"));
            }
            (value.to_string(), &after[end..])
        };
        pairs.push((key.to_string(), value));
        if after.is_empty() {
            return Ok(pairs);
        }
        rest = after
            .strip_prefix(' ')
            .ok_or_else(|| format!("no space before {after:?}"))?;
    }
}

/// A quoted value (after its opening quote): the text, and what follows
/// the closing quote.
fn unquote(text: &str) -> Result<(String, &str), String> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((value, &text[i + 1..])),
            '\\' => {
                let (_, e) = chars.next().ok_or("a \\ at the end")?;
                match e {
                    '"' => value.push('"'),
                    '\\' => value.push('\\'),
                    '/' => value.push('/'),
                    'b' => value.push('\u{8}'),
                    'f' => value.push('\u{c}'),
                    'n' => value.push('\n'),
                    'r' => value.push('\r'),
                    't' => value.push('\t'),
                    'u' => {
                        let hex: String = (0..4)
                            .filter_map(|_| chars.next().map(|(_, h)| h))
                            .collect();
                        let code =
                            u32::from_str_radix(&hex, 16).map_err(|_| format!("bad \\u{hex}"))?;
                        value.push(
                            char::from_u32(code)
                                .ok_or_else(|| format!("\\u{hex} is not a character"))?,
                        );
                    }
                    other => return Err(format!("unknown escape \\{other}")),
                }
            }
            c if c.is_control() => return Err(format!("a raw control character {c:?} in quotes")),
            c => value.push(c),
        }
    }
    Err("no closing quote".into())
}
