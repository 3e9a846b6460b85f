//! The wire contract and what each language is given from it.
//!
//! `schema/shardline.schema.json` is the JSON Schema the core derives for its wire forms
//! ([`shardline_core::schema::wire_schema`]). From it this crate writes the TypeScript
//! declarations of the Node binding, the Python `TypedDict`s and the Java constants. The
//! schema uses a small part of JSON Schema (objects, arrays, maps, string constants, unions,
//! `$ref`), so the generators read that part and reject anything else by name: a new shape in
//! the core fails the generation instead of being typed loosely.
//!
//! Payload bytes are `$ref: Payload` (base64 text in JSON) and become each language's bytes
//! type; no key name is special.
//!
//! `tests/generated.rs` compares every generated file with the committed one;
//! `BLESS=1 cargo test -p shardline-schema` rewrites them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

pub use shardline_core::schema::wire_schema;

/// The committed schema, relative to the repository root.
pub const SCHEMA_FILE: &str = "schema/shardline.schema.json";
/// The Node declarations: the generated part sits between two marker lines of the
/// hand-written file (napi prepends the whole file to index.d.ts).
pub const TYPESCRIPT_FILE: &str = "bindings/node/src/types.d.ts";
pub const PYTHON_FILE: &str = "bindings/python/python/shardline/wire.py";
pub const JAVA_FILE: &str = "bindings/java/shardline/src/main/java/org/shardline/Wire.java";

pub const TS_BEGIN: &str =
    "// ---- wire forms: generated from schema/shardline.schema.json (BLESS=1 cargo test -p shardline-schema); do not edit ----";
pub const TS_END: &str = "// ---- end of the generated wire forms ----";

/// Where a generated text goes in its file.
pub enum Placement {
    /// The whole file.
    Whole,
    /// Between the lines `begin` and `end`, which stay.
    Between(&'static str, &'static str),
}

pub struct Generated {
    pub path: &'static str,
    pub placement: Placement,
    pub text: String,
}

/// Every generated file, from the schema the core derives now.
pub fn generate() -> Vec<Generated> {
    let schema = wire_schema();
    let defs = Defs::read(&schema);
    let warnings = warning_notices(&schema);
    let mut json = serde_json::to_string_pretty(&schema).expect("a JSON value serializes");
    json.push('\n');
    vec![
        Generated {
            path: SCHEMA_FILE,
            placement: Placement::Whole,
            text: json,
        },
        Generated {
            path: TYPESCRIPT_FILE,
            placement: Placement::Between(TS_BEGIN, TS_END),
            text: typescript(&defs, &warnings),
        },
        Generated {
            path: PYTHON_FILE,
            placement: Placement::Whole,
            text: python(&defs, &warnings),
        },
        Generated {
            path: JAVA_FILE,
            placement: Placement::Whole,
            text: java(&defs, &warnings),
        },
    ]
}

/// The `type` of every variant the core marks `"x-severity": "warning"` (a notice that reports
/// something refused, failed or lost), sorted: what each language's logging bridge logs as a
/// warning, so that no bridge keeps its own list.
pub fn warning_notices(schema: &Value) -> Vec<String> {
    let variants = schema["$defs"]
        .as_object()
        .into_iter()
        .flat_map(|defs| defs.values())
        .filter_map(|d| d.get("oneOf").and_then(Value::as_array))
        .flatten();
    let mut out: Vec<String> = variants
        .filter(|v| v.get("x-severity").is_some())
        .map(|v| {
            assert_eq!(
                v["x-severity"], "warning",
                "the generators know only the severity \"warning\": {v}"
            );
            v["properties"]["type"]["const"]
                .as_str()
                .unwrap_or_else(|| panic!("a severity on a variant without a type: {v}"))
                .to_owned()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `current` with the generated part replaced (or `None` when the markers are missing).
pub fn place(current: &str, g: &Generated) -> Option<String> {
    match g.placement {
        Placement::Whole => Some(g.text.clone()),
        Placement::Between(begin, end) => {
            let b = current.find(begin)? + begin.len();
            let e = b + current[b..].find(end)?;
            Some(format!("{}\n{}{}", &current[..b], g.text, &current[e..]))
        }
    }
}

// ---- the part of JSON Schema the core's forms use ----------------------------------------

/// A type as the generators see it.
#[derive(Debug, Clone)]
pub enum Ty {
    Ref(String),
    Str,
    Int,
    Num,
    Bool,
    Null,
    Lit(String),
    Array(Box<Ty>),
    Map(Box<Ty>),
    Union(Vec<Variant>),
    Object(Vec<Field>),
}

#[derive(Debug, Clone)]
pub struct Variant {
    pub ty: Ty,
    pub doc: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
    pub required: bool,
    pub doc: Option<String>,
}

pub struct Def {
    pub name: String,
    pub doc: Option<String>,
    pub ty: Ty,
}

/// The definitions by name (sorted: generated files do not depend on map order).
pub struct Defs(pub BTreeMap<String, Def>);

/// The bytes definition: every language maps it to its bytes type.
const PAYLOAD: &str = "Payload";

impl Defs {
    pub fn read(schema: &Value) -> Defs {
        let defs = schema["$defs"].as_object().expect("the schema has $defs");
        Defs(
            defs.iter()
                .map(|(name, s)| {
                    let def = Def {
                        name: name.clone(),
                        doc: doc(s),
                        ty: parse(s, name, defs),
                    };
                    (name.clone(), def)
                })
                .collect(),
        )
    }

    /// The definitions in an order where each comes after those it names (Python evaluates
    /// its aliases at import).
    fn in_dependency_order(&self) -> Vec<&Def> {
        fn visit<'a>(defs: &'a Defs, name: &str, seen: &mut Vec<String>, out: &mut Vec<&'a Def>) {
            if seen.iter().any(|s| s == name) {
                return;
            }
            seen.push(name.to_owned());
            let def = &defs.0[name];
            let mut refs = Vec::new();
            refs_of(&def.ty, &mut refs);
            for r in refs {
                visit(defs, &r, seen, out);
            }
            out.push(def);
        }
        let (mut seen, mut out) = (Vec::new(), Vec::new());
        for name in self.0.keys() {
            visit(self, name, &mut seen, &mut out);
        }
        out
    }
}

fn refs_of(ty: &Ty, out: &mut Vec<String>) {
    match ty {
        Ty::Ref(r) => out.push(r.clone()),
        Ty::Array(t) | Ty::Map(t) => refs_of(t, out),
        Ty::Union(vs) => vs.iter().for_each(|v| refs_of(&v.ty, out)),
        Ty::Object(fs) => fs.iter().for_each(|f| refs_of(&f.ty, out)),
        _ => {}
    }
}

fn doc(s: &Value) -> Option<String> {
    // Rustdoc links read as plain code in other languages.
    s.get("description")
        .and_then(Value::as_str)
        .map(|d| d.replace("[`", "`").replace("`]", "`"))
}

type Schemas = serde_json::Map<String, Value>;

fn parse(s: &Value, at: &str, defs: &Schemas) -> Ty {
    let fail = |what: &str| -> ! { panic!("{at}: the generators do not know {what}: {s}") };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| fail("this $ref"));
        let Some(Value::Object(own)) = s.get("properties") else {
            return Ty::Ref(name.to_owned());
        };
        // A tagged variant that carries a struct: the tag's fields, then the struct's.
        let base = defs.get(name).unwrap_or_else(|| fail("a $ref to nothing"));
        let mut here = s.clone();
        here.as_object_mut().expect("an object").remove("$ref");
        let (Ty::Object(mut fields), Ty::Object(more)) =
            (parse(&here, at, defs), parse(base, name, defs))
        else {
            fail("a $ref with properties to a non-object")
        };
        fields.extend(more.into_iter().filter(|f| !own.contains_key(&f.name)));
        return Ty::Object(fields);
    }
    if let Some(c) = s.get("const") {
        return Ty::Lit(
            c.as_str()
                .unwrap_or_else(|| fail("a non-string const"))
                .to_owned(),
        );
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        let lits: Vec<Variant> = e
            .iter()
            .map(|v| Variant {
                ty: Ty::Lit(
                    v.as_str()
                        .unwrap_or_else(|| fail("a non-string enum"))
                        .to_owned(),
                ),
                doc: None,
            })
            .collect();
        return union(lits);
    }
    if let Some(vs) = s
        .get("oneOf")
        .or_else(|| s.get("anyOf"))
        .and_then(Value::as_array)
    {
        return union(
            vs.iter()
                .map(|v| Variant {
                    ty: parse(v, at, defs),
                    doc: doc(v),
                })
                .collect(),
        );
    }
    match s.get("type") {
        Some(Value::Array(ts)) => union(
            ts.iter()
                .map(|t| {
                    let mut one = s.clone();
                    one["type"] = t.clone();
                    Variant {
                        ty: parse(&one, at, defs),
                        doc: None,
                    }
                })
                .collect(),
        ),
        Some(Value::String(t)) => match t.as_str() {
            "string" => Ty::Str,
            "integer" => Ty::Int,
            "number" => Ty::Num,
            "boolean" => Ty::Bool,
            "null" => Ty::Null,
            "array" => Ty::Array(Box::new(parse(
                s.get("items")
                    .unwrap_or_else(|| fail("an array without items")),
                at,
                defs,
            ))),
            "object" => match (s.get("properties"), s.get("additionalProperties")) {
                (Some(Value::Object(props)), _) => {
                    let required: Vec<&str> = s
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    // Required fields in declaration order (`required` keeps it), then the
                    // optional ones by name.
                    let mut names: Vec<&str> = required.clone();
                    names.extend(
                        props
                            .keys()
                            .map(String::as_str)
                            .filter(|k| !required.contains(k)),
                    );
                    Ty::Object(
                        names
                            .into_iter()
                            .map(|n| {
                                let p = props
                                    .get(n)
                                    .unwrap_or_else(|| fail("a required field with no property"));
                                Field {
                                    name: n.to_owned(),
                                    ty: parse(p, &format!("{at}.{n}"), defs),
                                    required: required.contains(&n),
                                    doc: doc(p),
                                }
                            })
                            .collect(),
                    )
                }
                (None, Some(v @ Value::Object(_))) => Ty::Map(Box::new(parse(v, at, defs))),
                _ => fail("an object without properties"),
            },
            _ => fail("this type"),
        },
        _ => fail("this schema"),
    }
}

/// Flattens nested unions (schemars groups undocumented literals into one `enum`).
fn union(vs: Vec<Variant>) -> Ty {
    let mut flat = Vec::new();
    for v in vs {
        match v.ty {
            Ty::Union(inner) => flat.extend(inner),
            ty => flat.push(Variant { ty, doc: v.doc }),
        }
    }
    if flat.len() == 1 && flat[0].doc.is_none() {
        return flat.pop().expect("one").ty;
    }
    Ty::Union(flat)
}

/// The constant that tells an object variant apart (`type`, `outcome`), with its value.
fn discriminator(fields: &[Field]) -> Option<(&str, &str)> {
    fields.iter().find_map(|f| match &f.ty {
        Ty::Lit(v) => Some((f.name.as_str(), v.as_str())),
        _ => None,
    })
}

fn pascal(s: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in s.chars() {
        if c == '-' || c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn constant_case(s: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c == '-' || c == '_' {
            out.push('_');
            prev_lower = false;
        } else if c.is_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c);
            prev_lower = false;
        } else {
            out.extend(c.to_uppercase());
            prev_lower = true;
        }
    }
    out
}

fn comment_lines(doc: &str, prefix: &str) -> String {
    doc.lines()
        .map(|l| format!("{prefix}{l}").trim_end().to_owned() + "\n")
        .collect()
}

// ---- TypeScript ------------------------------------------------------------------------------

fn typescript(defs: &Defs, warnings: &[String]) -> String {
    let mut out = String::new();
    for def in defs.0.values() {
        if def.name == PAYLOAD {
            continue;
        }
        out.push('\n');
        if let Some(d) = &def.doc {
            out.push_str(&ts_doc(d, ""));
        }
        match &def.ty {
            Ty::Object(fields) => {
                let _ = writeln!(out, "export interface {} {{", def.name);
                for f in fields {
                    if let Some(d) = &f.doc {
                        out.push_str(&ts_doc(d, "  "));
                    }
                    let opt = if f.required { "" } else { "?" };
                    let _ = writeln!(out, "  {}{opt}: {}", ts_key(&f.name), ts(&f.ty));
                }
                out.push_str("}\n");
            }
            Ty::Union(vs)
                if vs
                    .iter()
                    .any(|v| matches!(v.ty, Ty::Object(_)) || v.doc.is_some()) =>
            {
                let _ = writeln!(out, "export type {} =", def.name);
                for v in vs {
                    if let Some(d) = &v.doc {
                        out.push_str(&ts_doc(d, "  "));
                    }
                    let _ = writeln!(out, "  | {}", ts(&v.ty));
                }
            }
            ty => {
                let _ = writeln!(out, "export type {} = {}", def.name, ts(ty));
            }
        }
    }
    out.push_str("\n/** The notice types the core marks as warnings: something refused, failed or lost. */\n");
    let quoted: Vec<String> = warnings.iter().map(|w| format!("'{w}'")).collect();
    let _ = writeln!(out, "export type WarningNotice = {}", quoted.join(" | "));
    out.push('\n');
    out
}

fn ts_doc(doc: &str, indent: &str) -> String {
    if !doc.contains('\n') {
        return format!("{indent}/** {doc} */\n");
    }
    format!(
        "{indent}/**\n{}{indent} */\n",
        comment_lines(doc, &format!("{indent} * "))
    )
}

fn ts_key(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        name.to_owned()
    } else {
        format!("'{name}'")
    }
}

fn ts(ty: &Ty) -> String {
    match ty {
        // Node hands payloads out as Buffers (any Uint8Array is accepted).
        Ty::Ref(r) if r == PAYLOAD => "Buffer".to_owned(),
        Ty::Ref(r) => r.clone(),
        Ty::Str => "string".to_owned(),
        Ty::Int | Ty::Num => "number".to_owned(),
        Ty::Bool => "boolean".to_owned(),
        Ty::Null => "null".to_owned(),
        Ty::Lit(v) => format!("'{v}'"),
        Ty::Array(t) => match **t {
            Ty::Union(_) => format!("({})[]", ts(t)),
            _ => format!("{}[]", ts(t)),
        },
        Ty::Map(t) => format!("Record<string, {}>", ts(t)),
        Ty::Union(vs) => vs.iter().map(|v| ts(&v.ty)).collect::<Vec<_>>().join(" | "),
        Ty::Object(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|f| {
                    let opt = if f.required { "" } else { "?" };
                    format!("{}{opt}: {}", ts_key(&f.name), ts(&f.ty))
                })
                .collect();
            format!("{{ {} }}", inner.join("; "))
        }
    }
}

// ---- Python ----------------------------------------------------------------------------------

fn python(defs: &Defs, warnings: &[String]) -> String {
    let mut out = String::from(
        "# Generated from schema/shardline.schema.json by `BLESS=1 cargo test -p shardline-schema`;\n\
         # do not edit. The JSON forms of shardline's inputs, outputs, notices, envelopes, stored\n\
         # records and snapshots as TypedDicts; payload bytes are `bytes`.\n\
         \n\
         from typing import Literal, TypedDict, Union\n",
    );
    let mut names = Vec::new();
    for def in defs.in_dependency_order() {
        if def.name == PAYLOAD {
            continue;
        }
        names.push(def.name.clone());
        out.push_str("\n\n");
        match &def.ty {
            Ty::Object(fields) => {
                out.push_str(&py_typed_dict(&def.name, fields, def.doc.as_deref()));
            }
            Ty::Union(vs) => {
                let mut members = Vec::new();
                for v in vs {
                    match &v.ty {
                        Ty::Object(fields) => {
                            let tag = discriminator(fields)
                                .map(|(_, value)| value)
                                .unwrap_or_else(|| fields[0].name.as_str());
                            let name = format!("{}{}", def.name, pascal(tag));
                            out.push_str(&py_typed_dict(&name, fields, v.doc.as_deref()));
                            out.push('\n');
                            members.push(name.clone());
                            names.push(name);
                        }
                        ty => members.push(py(ty)),
                    }
                }
                if let Some(d) = &def.doc {
                    out.push_str(&comment_lines(d, "# "));
                }
                let _ = writeln!(
                    out,
                    "{} = Union[\n    {},\n]",
                    def.name,
                    members.join(",\n    ")
                );
            }
            ty => {
                if let Some(d) = &def.doc {
                    out.push_str(&comment_lines(d, "# "));
                }
                let _ = writeln!(out, "{} = {}", def.name, py(ty));
            }
        }
    }
    out.push_str(
        "\n\n#: The notice types the core marks as warnings: something refused, failed or lost.\n\
         WARNING_NOTICES = frozenset({\n",
    );
    for w in warnings {
        let _ = writeln!(out, "    \"{w}\",");
    }
    out.push_str("})\n");
    names.push("WARNING_NOTICES".into());
    names.sort();
    out.push_str("\n\n__all__ = [\n");
    for n in names {
        let _ = writeln!(out, "    \"{n}\",");
    }
    out.push_str("]\n");
    out
}

/// The functional form, since keys such as `from` are Python keywords; optional fields go in
/// a `total=False` subclass (NotRequired needs Python 3.11).
fn py_typed_dict(name: &str, fields: &[Field], doc: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(d) = doc {
        out.push_str(&comment_lines(d, "# "));
    }
    // One key a line, as a formatter would lay it out.
    let typed_dict = |name: &str, fs: &[&Field], total: &str| -> String {
        let mut t = format!("{name} = TypedDict(\n    \"{name}\",\n    {{\n");
        for f in fs {
            let _ = writeln!(t, "        \"{}\": {},", f.name, py(&f.ty));
        }
        let _ = writeln!(t, "    }},\n{total})");
        t
    };
    let required: Vec<&Field> = fields.iter().filter(|f| f.required).collect();
    let optional: Vec<&Field> = fields.iter().filter(|f| !f.required).collect();
    if optional.is_empty() {
        out.push_str(&typed_dict(name, &required, ""));
    } else if required.is_empty() {
        out.push_str(&typed_dict(name, &optional, "    total=False,\n"));
    } else {
        out.push_str(&typed_dict(&format!("_{name}Required"), &required, ""));
        out.push_str("\n\n");
        let _ = writeln!(out, "class {name}(_{name}Required, total=False):");
        for f in optional {
            assert!(
                f.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{name}.{}: an optional field needs a Python identifier as its name",
                f.name
            );
            let _ = writeln!(out, "    {}: {}", f.name, py(&f.ty));
        }
    }
    out
}

fn py(ty: &Ty) -> String {
    match ty {
        Ty::Ref(r) if r == PAYLOAD => "bytes".to_owned(),
        Ty::Ref(r) => r.clone(),
        Ty::Str => "str".to_owned(),
        Ty::Int => "int".to_owned(),
        Ty::Num => "float".to_owned(),
        Ty::Bool => "bool".to_owned(),
        Ty::Null => "None".to_owned(),
        Ty::Lit(v) => format!("Literal[\"{v}\"]"),
        Ty::Array(t) => format!("list[{}]", py(t)),
        Ty::Map(t) => format!("dict[str, {}]", py(t)),
        Ty::Union(vs) => format!(
            "Union[{}]",
            vs.iter().map(|v| py(&v.ty)).collect::<Vec<_>>().join(", ")
        ),
        Ty::Object(_) => panic!("an object inside a field is not a wire form the core has"),
    }
}

// ---- Java ------------------------------------------------------------------------------------

/// The names that tell forms apart: each tagged union's discriminator values and each string
/// enumeration, as `String` constants.
fn java(defs: &Defs, warnings: &[String]) -> String {
    let mut out = String::from(
        "// Generated from schema/shardline.schema.json by `BLESS=1 cargo test -p shardline-schema`;\n\
         // do not edit.\n\
         package org.shardline;\n\
         \n\
         /**\n \
         * The names the JSON forms use: the {@code type} (or {@code outcome}) of every input, output,\n \
         * notice, command, directive and stored event, and the values of every enumeration, as every\n \
         * binding spells them.\n \
         */\n\
         public final class Wire {\n  \
         private Wire() {}\n",
    );
    for def in defs.0.values() {
        let Ty::Union(vs) = &def.ty else { continue };
        let values: Option<Vec<(&str, Option<&str>)>> = vs
            .iter()
            .map(|v| match &v.ty {
                Ty::Lit(l) => Some((l.as_str(), v.doc.as_deref())),
                Ty::Object(fields) => discriminator(fields).map(|(_, l)| (l, v.doc.as_deref())),
                _ => None,
            })
            .collect();
        let Some(values) = values else { continue };
        let key = match &vs[0].ty {
            Ty::Object(fields) => discriminator(fields).map(|(k, _)| k),
            _ => None,
        };
        out.push('\n');
        let what = match key {
            Some(k) => format!("The {{@code {k}}} values of {{@code {}}}.", def.name),
            None => format!("The values of {{@code {}}}.", def.name),
        };
        let _ = writeln!(out, "  /** {what} */");
        let _ = writeln!(out, "  public static final class {} {{", def.name);
        let _ = writeln!(out, "    private {}() {{}}\n", def.name);
        for (value, doc) in values {
            if let Some(d) = doc {
                out.push_str(&java_doc(d));
            }
            let _ = writeln!(
                out,
                "    public static final String {} = \"{value}\";",
                constant_case(value)
            );
        }
        out.push_str("  }\n");
    }
    let quoted: Vec<String> = warnings.iter().map(|w| format!("\"{w}\"")).collect();
    let _ = write!(
        out,
        "\n  /** The notice types the core marks as warnings: something refused, failed or lost. */\n  \
         public static final java.util.Set<String> WARNING_NOTICES =\n      \
         java.util.Set.of(\n          {});\n",
        quoted.join(",\n          ")
    );
    out.push_str("}\n");
    out
}

/// Javadoc is HTML: markup characters are escaped and `code` becomes {@code code}.
fn java_doc(doc: &str) -> String {
    let escaped = doc
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace("*/", "*&#47;")
        .replace('@', "&#64;");
    let doc: String = escaped
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("{{@code {part}}}")
            } else {
                part.to_owned()
            }
        })
        .collect();
    if !doc.contains('\n') {
        return format!("    /** {doc} */\n");
    }
    format!("    /**\n{}     */\n", comment_lines(&doc, "     * "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_convert() {
        assert_eq!(constant_case("acquiringLease"), "ACQUIRING_LEASE");
        assert_eq!(constant_case("keep-owner"), "KEEP_OWNER");
        assert_eq!(constant_case("WeaklyUp"), "WEAKLY_UP");
        assert_eq!(pascal("force-reallocate"), "ForceReallocate");
        assert_eq!(pascal("saveSnapshot"), "SaveSnapshot");
    }

    #[test]
    fn warnings_are_the_notices_the_core_marks() {
        let w = warning_notices(&wire_schema());
        for kind in [
            "steppedDown",
            "handOffTimedOut",
            "directiveRefused",
            "inputRefused",
        ] {
            assert!(w.iter().any(|k| k == kind), "{kind} is a warning: {w:?}");
        }
        for kind in ["active", "allocated", "rebalanceRound", "registered"] {
            assert!(
                !w.iter().any(|k| k == kind),
                "{kind} is not a warning: {w:?}"
            );
        }
    }

    #[test]
    fn unknown_shapes_are_refused_by_name() {
        let schema = serde_json::json!({"$defs": {"X": {"type": "object", "properties": {"a": {"type": "tuple"}}, "required": ["a"]}}});
        let err = std::panic::catch_unwind(|| Defs::read(&schema).0.len()).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(
            msg.starts_with("X.a: the generators do not know this type"),
            "{msg}"
        );
    }
}
