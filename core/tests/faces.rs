//! The faces of the values declared once in the core, generated for each language and
//! committed: Python's `python/recuo/_values.py`, TypeScript's `js/values.d.ts` and the
//! array shapes in PHP's stub. This test regenerates them from the declarations (the Rust
//! items listed in [`VALUES`]: their fields, types, variants and doc comments) and fails when
//! a committed face differs; with `RECUO_UPDATE_FACES=1` (what `make faces` sets) it rewrites
//! them instead. No face is parsed at run time.
//!
//! A struct's face is its plain form (what `to_dict`, `toArray` and JSON give), named
//! `{Name}Value` (`PolicyValue` keeps its name); an enum of names is a union of its names.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The declarations: a core source file and the values it declares, each after the values
/// it uses, in the order the faces present them.
const VALUES: &[(&str, &[&str])] = &[
    ("src/policy_value.rs", &["PolicyValue"]),
    ("src/attempts.rs", &["GiveUpReason", "Report"]),
    ("src/stats.rs", &["Stats"]),
    ("src/plan.rs", &["Plan"]),
    ("src/origin.rs", &["Origin", "Confidence", "WhoAnswered"]),
    ("src/retry_after.rs", &["RetryAfterKind", "RetryAfterValue"]),
    (
        "src/queue.rs",
        &[
            "BatchProgress",
            "BatchStatus",
            "BatchResultValue",
            "BatchReportValue",
        ],
    ),
];

/// A field's type, as the faces need it.
#[derive(Debug)]
enum Type {
    Int,
    Float,
    Str,
    Bool,
    Optional(Box<Type>),
    Map(Box<Type>),
    List(Box<Type>),
    /// Another declared value, by its face's name.
    Value(String),
}

/// One field of a value: its name, type and documentation.
struct Field {
    name: String,
    ty: Type,
    doc: String,
}

/// What a declaration is.
enum Shape {
    /// A struct: its fields, whether a field may be left out of its plain form
    /// (`serde(default)`), and whether its default is every field's zero (`derive(Default)`:
    /// 0, false, empty, null), which a class may then take as its fields' defaults.
    Struct {
        fields: Vec<Field>,
        defaulted: bool,
        zero_default: bool,
    },
    /// An enum of unit variants: their names as serde spells them (`rename_all =
    /// "snake_case"`).
    Names(Vec<String>),
}

/// One declared value: its face's name, its documentation and its shape.
struct Value {
    name: String,
    doc: String,
    shape: Shape,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The name of the face of the declaration `name`.
fn face_name(name: &str) -> String {
    let is_enum = VALUES.iter().any(|(file, names)| {
        names.contains(&name) && {
            let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file));
            text.is_ok_and(|t| t.contains(&format!("pub enum {name} ")))
        }
    });
    if is_enum || name.ends_with("Value") {
        name.to_owned()
    } else {
        format!("{name}Value")
    }
}

/// `AttemptsExhausted` as `attempts_exhausted`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}
/// The doc comment's text, its lines joined by spaces into paragraphs.
fn doc_of(attrs: &[syn::Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut paragraphs = vec![String::new()];
    for line in lines {
        if line.is_empty() {
            paragraphs.push(String::new());
        } else {
            let last = paragraphs.last_mut().unwrap();
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(&line);
        }
    }
    paragraphs.retain(|p| !p.is_empty());
    paragraphs
        .join("\n\n")
        .replace("[`", "`")
        .replace("`]", "`")
}

fn type_of(ty: &syn::Type) -> Type {
    let syn::Type::Path(path) = ty else {
        panic!("a value's field must be a named type, not {ty:?}")
    };
    let last = path.path.segments.last().unwrap();
    let args: Vec<&syn::Type> = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    match last.ident.to_string().as_str() {
        "u8" | "u16" | "u32" | "u64" | "i32" | "i64" | "usize" => Type::Int,
        "f32" | "f64" => Type::Float,
        "String" | "str" => Type::Str,
        "bool" => Type::Bool,
        "Option" => Type::Optional(Box::new(type_of(args[0]))),
        "Vec" => Type::List(Box::new(type_of(args[0]))),
        "BTreeMap" | "HashMap" => {
            assert!(
                matches!(type_of(args[0]), Type::Str),
                "a value's maps are keyed by strings"
            );
            Type::Map(Box::new(type_of(args[1])))
        }
        other => Type::Value(face_name(other)),
    }
}

/// Whether the item's `#[derive(…)]` lists `name`.
fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|a| {
            let text = a.meta.require_list().unwrap().tokens.to_string();
            text.split(',').any(|d| d.trim() == name)
        })
}

/// Whether the item's `cfg_attr(feature = "serde", …, serde(…))` says `word`.
fn serde_says(attrs: &[syn::Attribute], word: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg_attr"))
        .any(|a| {
            let text = a.meta.require_list().unwrap().tokens.to_string();
            let serde = text.rfind("serde (").map_or("", |i| &text[i..]);
            serde.contains(word)
        })
}

fn declarations() -> Vec<Value> {
    let mut values = Vec::new();
    for (file, names) in VALUES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for name in *names {
            let value = parsed.items.iter().find_map(|item| match item {
                syn::Item::Struct(s) if s.ident == name => Some(Value {
                    name: face_name(name),
                    doc: doc_of(&s.attrs),
                    shape: Shape::Struct {
                        fields: s
                            .fields
                            .iter()
                            .map(|f| Field {
                                name: f.ident.as_ref().unwrap().to_string(),
                                ty: type_of(&f.ty),
                                doc: doc_of(&f.attrs),
                            })
                            .collect(),
                        defaulted: serde_says(&s.attrs, "default"),
                        zero_default: derives(&s.attrs, "Default"),
                    },
                }),
                syn::Item::Enum(e) if e.ident == name => {
                    assert!(
                        serde_says(&e.attrs, "rename_all = \"snake_case\""),
                        "{name}: an enum of names is spelled in snake_case"
                    );
                    Some(Value {
                        name: face_name(name),
                        doc: doc_of(&e.attrs),
                        shape: Shape::Names(
                            e.variants
                                .iter()
                                .map(|v| snake(&v.ident.to_string()))
                                .collect(),
                        ),
                    })
                }
                _ => None,
            });
            values.push(value.unwrap_or_else(|| panic!("{file} declares no {name}")));
        }
    }
    values
}

const NOTICE: &str =
    "Generated by `make faces` from recuo's core (the values it declares once); do not edit.";

fn python_type(ty: &Type) -> String {
    match ty {
        Type::Int => "int".into(),
        Type::Float => "float".into(),
        Type::Str => "str".into(),
        Type::Bool => "bool".into(),
        Type::Optional(t) => format!("{} | None", python_type(t)),
        Type::Map(t) => format!("dict[str, {}]", python_type(t)),
        Type::List(t) => format!("list[{}]", python_type(t)),
        Type::Value(n) => n.clone(),
    }
}

fn python_doc(text: &str, indent: &str) -> String {
    // The declarations say JSON's null; Python reads it as None.
    let text = text
        .replace('`', "``")
        .replace("\"\"\"", "'''")
        .replace(" null", " ``None``");
    let mut out = format!("{indent}\"\"\"");
    let mut width = indent.len() + 3;
    let mut line_empty = true;
    for (i, paragraph) in text.split("\n\n").enumerate() {
        if i > 0 {
            let _ = write!(out, "\n\n{indent}");
            (width, line_empty) = (indent.len(), true);
        }
        for word in paragraph.split(' ') {
            if !line_empty && width + word.len() + 1 > 96 {
                let _ = write!(out, "\n{indent}");
                width = indent.len();
            } else if !line_empty {
                out.push(' ');
                width += 1;
            }
            out.push_str(word);
            width += word.len();
            line_empty = false;
        }
    }
    out.push_str("\"\"\"\n");
    out
}

/// The values Python answers as instances of generated frozen dataclasses (not slotted: on
/// Python 3.11 a slotted frozen dataclass answers a write to a name that is not a field with
/// a `TypeError` from its own `__setattr__`, not the `AttributeError` every frozen value gives): the declaration's
/// name, and the hand-written base of `recuo/_faces.py` that adds what is derived from the
/// fields (seconds from milliseconds, a merge through the core), if any.
const PYTHON_CLASSES: &[(&str, &str)] = &[
    ("Plan", ""),
    ("WhoAnswered", ""),
    ("Report", "ReportFace"),
    ("Stats", "StatsFace"),
    ("RetryAfter", ""),
    ("BatchProgress", ""),
];

/// A field's type in a dataclass: lists are tuples (the instances are immutable).
fn python_field_type(ty: &Type) -> String {
    match ty {
        Type::Optional(t) => format!("{} | None", python_field_type(t)),
        Type::List(t) => format!("tuple[{}, ...]", python_type(t)),
        other => python_type(other),
    }
}

/// The expression of a field's plain form in `to_dict` (tuples back to lists).
fn python_plain(ty: &Type, expr: &str) -> String {
    match ty {
        Type::List(_) => format!("list({expr})"),
        Type::Optional(t) if matches!(**t, Type::List(_)) => {
            format!("None if {expr} is None else list({expr})")
        }
        _ => expr.to_owned(),
    }
}

fn python_class(v: &Value, base: &str) -> String {
    let Shape::Struct {
        fields,
        zero_default,
        ..
    } = &v.shape
    else {
        panic!("{}: only a struct is a class", v.name)
    };
    let name = v.name.strip_suffix("Value").unwrap();
    let mut out = format!(
        "\n\n@dataclass(frozen=True)\nclass {name}({}):\n",
        if base.is_empty() { "" } else { base }
    );
    out = out.replace("()", "");
    out += &python_doc(&v.doc, "    ");
    for f in fields {
        let zero = match &f.ty {
            _ if !zero_default => "",
            Type::Int => " = 0",
            Type::Float => " = 0.0",
            Type::Bool => " = False",
            Type::Str => " = \"\"",
            Type::Optional(_) => " = None",
            Type::List(_) => " = ()",
            Type::Map(_) | Type::Value(_) => panic!("{name}.{}: no zero to default to", f.name),
        };
        let _ = write!(
            out,
            "\n    {}: {}{zero}\n",
            f.name,
            python_field_type(&f.ty)
        );
        out += &python_doc(&f.doc, "    ");
    }
    let _ = write!(
        out,
        "\n    def to_dict(self) -> {}:\n        \"\"\"The plain form: a ``dict`` of plain data, as JSON \
         writes it.\"\"\"\n        return {{\n",
        v.name
    );
    for f in fields {
        let expr = python_plain(&f.ty, &format!("self.{}", f.name));
        let _ = writeln!(out, "            \"{}\": {expr},", f.name);
    }
    let _ = write!(
        out,
        "        }}\n\n    @classmethod\n    def from_dict(cls, value: {}) -> {name}:\n        \
         \"\"\"The value whose plain form is ``value``, checked by recuo's core: ``TypeError`` \
         for\n        a value that is not a mapping, ``ValueError`` for a missing or unknown \
         field or a\n        value of the wrong type.\"\"\"\n        \
         return _recuo._read_value(\"{name}\", value)  # type: ignore[no-any-return]\n",
        v.name
    );
    let _ = writeln!(out, "\n\n{name}.__module__ = \"recuo\"");
    out
}

fn python(values: &[Value]) -> String {
    let bases: Vec<&str> = PYTHON_CLASSES
        .iter()
        .map(|(_, base)| *base)
        .filter(|base| !base.is_empty())
        .collect();
    let mut imports = String::from("from typing import Literal, TypeAlias, TypedDict\n");
    if !PYTHON_CLASSES.is_empty() {
        imports = format!("from dataclasses import dataclass\n{imports}\nfrom . import _recuo\n");
    }
    if !bases.is_empty() {
        let _ = writeln!(imports, "from ._faces import {}", bases.join(", "));
    }
    let names: String = values
        .iter()
        .map(|v| v.name.as_str())
        .chain(PYTHON_CLASSES.iter().map(|(n, _)| *n))
        .map(|n| format!("    \"{n}\",\n"))
        .collect();
    let mut out = format!(
        "\"\"\"recuo's values as Python sees them: each one's plain form (a ``TypedDict``, what\n\
         ``to_dict`` answers and JSON writes), and the frozen dataclasses recuo answers.\n\n\
         {NOTICE}\n\"\"\"\n\nfrom __future__ import annotations\n\n{imports}\n__all__ = [\n{names}]\n"
    );
    for v in values {
        match &v.shape {
            Shape::Names(names) => {
                // A union of one-name Literals: stubtest reads a many-name Literal at run time
                // as no union at all.
                let quoted: Vec<String> =
                    names.iter().map(|n| format!("Literal[\"{n}\"]")).collect();
                let _ = write!(
                    out,
                    "\n\n{}: TypeAlias = (\n    {}\n)\n",
                    v.name,
                    quoted.join("\n    | ")
                );
                out += &python_doc(&v.doc, "");
            }
            Shape::Struct {
                fields, defaulted, ..
            } => {
                let total = if *defaulted { ", total=False" } else { "" };
                let _ = write!(out, "\n\nclass {}(TypedDict{total}):\n", v.name);
                out += &python_doc(&v.doc, "    ");
                for f in fields {
                    let _ = write!(out, "\n    {}: {}\n", f.name, python_type(&f.ty));
                    out += &python_doc(&f.doc, "    ");
                }
                let class = PYTHON_CLASSES
                    .iter()
                    .find(|(n, _)| format!("{n}Value") == v.name);
                if let Some((_, base)) = class {
                    out += &python_class(v, base);
                }
            }
        }
    }
    out
}

fn ts_type(ty: &Type) -> String {
    match ty {
        Type::Int | Type::Float => "number".into(),
        Type::Str => "string".into(),
        Type::Bool => "boolean".into(),
        Type::Optional(t) => format!("{} | null", ts_type(t)),
        Type::Map(t) => format!("Record<string, {}>", ts_type(t)),
        Type::List(t) => format!("Array<{}>", ts_type(t)),
        Type::Value(n) => n.clone(),
    }
}

fn ts_doc(text: &str, indent: &str) -> String {
    let mut out = format!("{indent}/**\n");
    for (i, paragraph) in text.split("\n\n").enumerate() {
        if i > 0 {
            let _ = writeln!(out, "{indent} *");
        }
        let mut line = String::new();
        for word in paragraph.split(' ') {
            if !line.is_empty() && indent.len() + 3 + line.len() + word.len() + 1 > 100 {
                let _ = writeln!(out, "{indent} * {line}");
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        let _ = writeln!(out, "{indent} * {line}");
    }
    out + &format!("{indent} */\n")
}

/// The values JavaScript hands out as objects with camelCase names (what a callback is
/// given), beside their plain forms: the declaration's name, which the interface takes.
const JS_CLASSES: &[&str] = &["BatchProgress"];

fn typescript(values: &[Value]) -> String {
    let mut out = format!("// The plain forms of recuo's values, as JSON objects.\n// {NOTICE}\n");
    for v in values {
        out.push('\n');
        out += &ts_doc(&v.doc, "");
        match &v.shape {
            Shape::Names(names) => {
                let quoted: String = names.iter().map(|n| format!("\n  | '{n}'")).collect();
                let _ = writeln!(out, "export type {} ={quoted};", v.name);
            }
            Shape::Struct {
                fields, defaulted, ..
            } => {
                let _ = writeln!(out, "export interface {} {{", v.name);
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    out += &ts_doc(&f.doc, "  ");
                    let optional = if *defaulted { "?" } else { "" };
                    let _ = writeln!(out, "  {}{optional}: {};", f.name, ts_type(&f.ty));
                }
                out += "}\n";
            }
        }
    }
    for v in values {
        let name = v.name.strip_suffix("Value").unwrap_or(&v.name);
        let Shape::Struct { fields, .. } = &v.shape else {
            continue;
        };
        if !JS_CLASSES.contains(&name) {
            continue;
        }
        out.push('\n');
        out += &ts_doc(&v.doc, "");
        let _ = writeln!(out, "export interface {name} {{");
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out += &ts_doc(&f.doc, "  ");
            let _ = writeln!(out, "  readonly {}: {};", camel(&f.name), ts_type(&f.ty));
        }
        out += "}\n";
    }
    out
}

fn php_type(ty: &Type, values: &[Value]) -> String {
    match ty {
        Type::Int => "int".into(),
        Type::Float => "float".into(),
        Type::Str => "string".into(),
        Type::Bool => "bool".into(),
        Type::Optional(t) => format!("{}|null", php_type(t, values)),
        // PHP turns a decimal-string key ("418") into an int key.
        Type::Map(t) => format!("array<array-key, {}>", php_type(t, values)),
        Type::List(t) => format!("list<{}>", php_type(t, values)),
        // PHPStan's local type aliases do not nest across classes: spell names out.
        Type::Value(n) => match values.iter().find(|v| v.name == *n).map(|v| &v.shape) {
            Some(Shape::Names(names)) => names
                .iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join("|"),
            _ => "array".into(),
        },
    }
}

/// The PHP stub's lines for `value`: a `@phpstan-type` array shape, one field per line, for
/// the docblock of the class that reads and writes it (names spelled out in place).
fn php_shape(v: &Value, values: &[Value]) -> String {
    let Shape::Struct {
        fields, defaulted, ..
    } = &v.shape
    else {
        return String::new();
    };
    let optional = if *defaulted { "?" } else { "" };
    let mut out = format!("     * @phpstan-type {} array{{\n", v.name);
    for f in fields {
        let _ = writeln!(
            out,
            "     *     {}{optional}: {},",
            f.name,
            php_type(&f.ty, values)
        );
    }
    out + "     * }\n"
}

/// The values PHP answers as instances of final classes with typed, readonly public
/// properties, declared from the generated table `php/src/faces.rs` (properties in
/// camelCase) and mirrored in the stub between `// <faces: {Name} properties>` and
/// `// </faces>`.
const PHP_CLASSES: &[&str] = &[
    "Report",
    "WhoAnswered",
    "Plan",
    "RetryAfter",
    "BatchProgress",
];

/// `elapsed_ms` as `elapsedMs`.
fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A property's declared PHP type (`?int`, `array`, …) and, where PHP's type says less than
/// the value, the `@var` type.
fn php_property_type(ty: &Type, values: &[Value]) -> (String, Option<String>) {
    let (inner, nullable) = match ty {
        Type::Optional(t) => (&**t, true),
        t => (t, false),
    };
    let declared = match inner {
        Type::Int => "int",
        Type::Float => "float",
        Type::Str | Type::Value(_) => "string",
        Type::Bool => "bool",
        Type::Map(_) | Type::List(_) => "array",
        Type::Optional(_) => panic!("an optional optional"),
    };
    let q = if nullable { "?" } else { "" };
    let detailed = match inner {
        Type::Value(_) | Type::List(_) | Type::Map(_) => {
            let null = if nullable { "|null" } else { "" };
            Some(format!("{}{null}", php_type(inner, values)))
        }
        _ => None,
    };
    (format!("{q}{declared}"), detailed)
}

/// The stub's property declarations of `v`'s class.
fn php_properties(v: &Value, values: &[Value]) -> String {
    let Shape::Struct { fields, .. } = &v.shape else {
        panic!("{}: only a struct is a class", v.name)
    };
    let mut out = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let (declared, detailed) = php_property_type(&f.ty, values);
        let doc = f.doc.replace("\n\n", " ");
        match detailed {
            Some(t) => {
                let _ = writeln!(out, "        /** @var {t} {doc} */");
            }
            None => {
                let _ = writeln!(out, "        /** {doc} */");
            }
        }
        let _ = writeln!(
            out,
            "        public readonly {declared} ${};",
            camel(&f.name)
        );
    }
    out
}

/// `php/src/faces.rs`: the table the extension declares its value classes from.
fn php_table(values: &[Value]) -> String {
    let mut out = format!(
        "//! The value classes' properties, as the core declares the values. {NOTICE}\n\n\
         use crate::values::{{FaceClass, Prop}};\n\n\
         /// Every value class the extension declares from the core's declarations.\n\
         pub const CLASSES: &[FaceClass] = &[\n"
    );
    for name in PHP_CLASSES {
        let v = values
            .iter()
            .find(|v| v.name == format!("{name}Value"))
            .unwrap();
        let Shape::Struct { fields, .. } = &v.shape else {
            unreachable!()
        };
        let _ = writeln!(
            out,
            "    FaceClass {{\n        name: \"Recuo\\\\{name}\",\n        props: &["
        );
        for f in fields {
            let (declared, _) = php_property_type(&f.ty, values);
            let _ = writeln!(
                out,
                "            Prop::new(\"{}\", \"{}\", \"{declared}\"),",
                camel(&f.name),
                f.name,
            );
        }
        out += "        ],\n    },\n";
    }
    out + "];\n"
}

/// A stub type with its class names in full (`?Report` in `Recuo` is `?Recuo\\Report`).
fn php_qualified(namespace: &str, ty: &str) -> String {
    let (nullable, base) = match ty.strip_prefix('?') {
        Some(base) => ("?", base),
        None => ("", ty),
    };
    let base = match base {
        "int" | "string" | "bool" | "float" | "array" | "mixed" => base.to_string(),
        _ => match base.strip_prefix('\\') {
            Some(global) => global.to_string(),
            None => format!("{namespace}\\{base}"),
        },
    };
    format!("{nullable}{base}")
}

/// The `public readonly` properties the stub declares on the extension's other classes (the
/// handles, and values the core does not declare yet): (class, [(property, type)]), names in
/// full, in the stub's order.
fn php_stub_properties(stub: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut namespace = String::new();
    let mut classes: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in stub.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("namespace ") {
            namespace = rest.trim_end_matches(['{', ';', ' ']).to_string();
        } else if let Some(rest) = line
            .strip_prefix("final class ")
            .or_else(|| line.strip_prefix("class "))
        {
            let name = rest.split_whitespace().next().unwrap_or_default();
            classes.push((format!("{namespace}\\{name}"), Vec::new()));
        } else if let Some(rest) = line.strip_prefix("public readonly ") {
            let mut words = rest.split_whitespace();
            let (Some(ty), Some(name)) = (words.next(), words.next()) else {
                continue;
            };
            let name = name.trim_start_matches('$').trim_end_matches(';');
            let (_, props) = classes.last_mut().expect("a property outside a class");
            props.push((name.to_string(), php_qualified(&namespace, ty)));
        }
    }
    classes.retain(|(class, props)| {
        !props.is_empty() && !PHP_CLASSES.iter().any(|c| *class == format!("Recuo\\{c}"))
    });
    classes
}

/// The part of `php/src/faces.rs` that types the other classes' properties, from the stub.
fn php_stub_table(stub: &str) -> String {
    let mut out = String::from(
        "\n/// The typed, readonly properties of the extension's other classes (its handles, and\n\
         /// values the core does not declare yet), as `php/recuo.stub.php` declares them: (class,\n\
         /// property, type), class names in full.\n\
         pub const STUB_PROPERTIES: &[(&str, &str, &str)] = &[\n",
    );
    for (class, props) in php_stub_properties(stub) {
        for (name, ty) in props {
            let _ = writeln!(out, "    ({class:?}, {name:?}, {ty:?}),");
        }
    }
    out + "];\n"
}

/// `text` with the lines between `begin` and `end` (both kept) replaced by `body`.
fn replace_between(text: &str, begin: &str, end: &str, body: &str, file: &str) -> String {
    let start = text
        .find(begin)
        .unwrap_or_else(|| panic!("{file} has no line `{begin}`"));
    let start = start + text[start..].find('\n').unwrap() + 1;
    let stop = start
        + text[start..]
            .find(end)
            .unwrap_or_else(|| panic!("{file} has no line `{end}`"));
    let stop = text[..stop].rfind('\n').map_or(stop, |i| i + 1);
    format!("{}{}{}", &text[..start], body, &text[stop..])
}

/// The stub with each marked array shape regenerated. A class whose methods read or write a
/// value's plain form carries the marker `<faces: {Name}Value>` in its docblock; values no
/// PHP method takes or answers as an array have no marker.
fn php_stub(values: &[Value]) -> String {
    let file = "php/recuo.stub.php";
    let mut text = std::fs::read_to_string(root().join(file)).unwrap();
    for v in values {
        let begin = format!("* <faces: {}>", v.name);
        if text.contains(&begin) {
            text = replace_between(&text, &begin, "* </faces>", &php_shape(v, values), file);
        }
    }
    for name in PHP_CLASSES {
        let v = values
            .iter()
            .find(|v| v.name == format!("{name}Value"))
            .unwrap();
        let begin = format!("// <faces: {name} properties>");
        text = replace_between(
            &text,
            &begin,
            "// </faces>",
            &php_properties(v, values),
            file,
        );
    }
    text
}

#[test]
fn committed_faces_are_current() {
    let values = declarations();
    let stub = php_stub(&values);
    let table = php_table(&values) + &php_stub_table(&stub);
    let faces = [
        ("python/recuo/_values.py", python(&values)),
        ("js/values.d.ts", typescript(&values)),
        ("php/recuo.stub.php", stub),
        ("php/src/faces.rs", table),
    ];
    let update = std::env::var_os("RECUO_UPDATE_FACES").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (file, generated) in faces {
        let path = root().join(file);
        if update {
            std::fs::write(&path, &generated).unwrap_or_else(|e| panic!("{file}: {e}"));
        } else if std::fs::read_to_string(&path).unwrap_or_default() != generated {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "{stale:?} differ from the core's declarations: run `make faces` and commit"
    );
}
