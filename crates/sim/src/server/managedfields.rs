//! Field ownership for server-side apply: structured-merge-diff's field sets, merge, compare and
//! prune over `serde_json::Value`, and `metadata.managedFields` in the `FieldsV1` format.
//!
//! Semantics follow sigs.k8s.io/structured-merge-diff v4 (`merge/update.go` `Updater.Apply`,
//! `Updater.Update`, `Updater.update`, `Updater.prune`; `typed/merge.go`, `typed/compare.go`,
//! `typed/tofieldset.go`, `typed/remove.go`; `fieldpath/serialize.go` `emitContentsV1`,
//! `fieldpath/element.go` `PathElement.Compare`/`String`) and k8s.io/apiserver's
//! `pkg/endpoints/handlers/fieldmanager` (`stripmeta.go` strip set, `managedfields.go` entry
//! order, `conflict.go` messages, `lastappliedmanager.go`/`lastappliedupdater.go`).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::schema::{Field, ListType, Node, Shape};

/// Errors of field-ownership bookkeeping.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The applied configuration cannot be tracked (e.g. a list item without its key).
    #[error("{0}")]
    BadRequest(String),
    /// Fields the apply changes are owned by other managers.
    #[error("{}", conflict_message(.0))]
    Conflicts(Vec<Conflict>),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One conflicting field: the other manager (as upstream prints it) and the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// Sort key and display of the manager (`"kubectl" using apps/v1 at 2026-…`).
    pub manager: ManagerId,
    /// `.spec.replicas`-style path.
    pub path: String,
}

/// A path element of a field set (`fieldpath.PathElement`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pe {
    /// `f:<name>`: a struct field or map key.
    Field(String),
    /// `k:{…}`: a list item of an associative list, by its key fields (sorted by name).
    Key(Vec<(String, Value)>),
    /// `v:<json>`: an item of a set.
    Value(Value),
    /// `i:<n>`: a list item by position.
    Index(usize),
}

fn value_rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Null => 3,
        _ => 4,
    }
}

fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .unwrap_or_default()
            .partial_cmp(&y.as_f64().unwrap_or_default())
            .unwrap_or(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => value_rank(a).cmp(&value_rank(b)).then_with(|| a.to_string().cmp(&b.to_string())),
    }
}

impl Ord for Pe {
    // fieldpath/element.go PathElement.Compare: field names < keys < values < indexes.
    fn cmp(&self, other: &Self) -> Ordering {
        let rank = |pe: &Pe| match pe {
            Pe::Field(_) => 0,
            Pe::Key(_) => 1,
            Pe::Value(_) => 2,
            Pe::Index(_) => 3,
        };
        match (self, other) {
            (Pe::Field(a), Pe::Field(b)) => a.cmp(b),
            (Pe::Key(a), Pe::Key(b)) => a.len().cmp(&b.len()).then_with(|| {
                for ((an, av), (bn, bv)) in a.iter().zip(b) {
                    let c = an.cmp(bn).then_with(|| compare_values(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                Ordering::Equal
            }),
            (Pe::Value(a), Pe::Value(b)) => compare_values(a, b),
            (Pe::Index(a), Pe::Index(b)) => a.cmp(b),
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl PartialOrd for Pe {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Pe {
    /// The `FieldsV1` key (`fieldpath/serialize-pe.go`).
    pub fn serialize(&self) -> String {
        match self {
            Pe::Field(name) => format!("f:{name}"),
            Pe::Key(fields) => {
                let map: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(map))
            }
            Pe::Value(v) => format!("v:{v}"),
            Pe::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `FieldsV1` key; `None` for unknown prefixes (skipped, as upstream does).
    pub fn parse(key: &str) -> Option<Pe> {
        let (prefix, rest) = key.split_at_checked(2)?;
        match prefix {
            "f:" => Some(Pe::Field(rest.to_string())),
            "k:" => {
                let Value::Object(map) = serde_json::from_str(rest).ok()? else { return None };
                let mut fields: Vec<(String, Value)> = map.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Some(Pe::Key(fields))
            }
            "v:" => serde_json::from_str(rest).ok().map(Pe::Value),
            "i:" => rest.parse().ok().map(Pe::Index),
            _ => None,
        }
    }

    /// `PathElement.String()`: `.name`, `[k=v,…]`, `[=v]`, `[i]`.
    pub fn display(&self) -> String {
        match self {
            Pe::Field(name) => format!(".{name}"),
            Pe::Key(fields) => {
                let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("[{}]", parts.join(","))
            }
            Pe::Value(v) => format!("[={v}]"),
            Pe::Index(i) => format!("[{i}]"),
        }
    }
}

/// A set of field paths as a trie (`fieldpath.Set`). No child set is ever empty (every
/// operation below keeps it so), which makes emptiness a constant-time question: a deep set is
/// not walked once per level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<Pe>,
    children: BTreeMap<Pe, Set>,
}

impl Set {
    /// True when the set holds no path.
    pub fn is_empty(&self) -> bool {
        debug_assert!(
            self.children.values().all(|child| !child.members.is_empty() || !child.children.is_empty())
        );
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds a path (the empty path is not a member of anything).
    pub fn insert(&mut self, path: &[Pe]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Puts `below` under `pe` (merged with what is there already), unless it is empty.
    pub fn graft(&mut self, pe: &Pe, below: Set) {
        if below.is_empty() {
            return;
        }
        match self.children.get_mut(pe) {
            Some(existing) => existing.union_in_place(&below),
            None => {
                self.children.insert(pe.clone(), below);
            }
        }
    }

    /// True when `path` is a member.
    pub fn has(&self, path: &[Pe]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// `Set.Union`.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.union_in_place(other);
        out
    }

    /// Adds `other`'s paths to this set (each node visited once, whatever the depth).
    fn union_in_place(&mut self, other: &Set) {
        self.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            match self.children.get_mut(pe) {
                Some(mine) => mine.union_in_place(child),
                None => {
                    self.children.insert(pe.clone(), child.clone());
                }
            }
        }
    }

    /// `Set.Intersection`.
    pub fn intersection(&self, other: &Set) -> Set {
        let mut out =
            Set { members: self.members.intersection(&other.members).cloned().collect(), ..Set::default() };
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    out.children.insert(pe.clone(), both);
                }
            }
        }
        out
    }

    /// `Set.Difference`: removes `other`'s members, not the subtrees under them.
    pub fn difference(&self, other: &Set) -> Set {
        let mut out =
            Set { members: self.members.difference(&other.members).cloned().collect(), ..Set::default() };
        for (pe, child) in &self.children {
            let rest = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// `Set.RecursiveDifference`: also drops subtrees under `other`'s members.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let mut out =
            Set { members: self.members.difference(&other.members).cloned().collect(), ..Set::default() };
        for (pe, child) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let rest = match other.children.get(pe) {
                Some(theirs) => child.recursive_difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// Every member path, in order.
    pub fn paths(&self) -> Vec<Vec<Pe>> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<Pe>, out: &mut Vec<Vec<Pe>>) {
        let mut keys: BTreeSet<&Pe> = self.members.iter().collect();
        keys.extend(self.children.keys());
        for pe in keys {
            prefix.push(pe.clone());
            if self.members.contains(pe) {
                out.push(prefix.clone());
            }
            if let Some(child) = self.children.get(pe) {
                child.collect_paths(prefix, out);
            }
            prefix.pop();
        }
    }

    /// The `FieldsV1` JSON (`emitContentsV1`: `"."` first, then path elements in order).
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !(self.members.is_empty() && self.children.is_empty()) {
            out.insert(".".into(), json!({}));
        }
        let mut keys: BTreeSet<&Pe> = self.members.iter().collect();
        keys.extend(self.children.keys());
        for pe in keys {
            let value = match self.children.get(pe) {
                Some(child) => Value::Object(child.emit(self.members.contains(pe))),
                None => json!({}),
            };
            out.insert(pe.serialize(), value);
        }
        out
    }

    /// Parses `FieldsV1` JSON (`readIterV1`).
    pub fn from_fields_v1(value: &Value) -> Set {
        Self::read(value).0.unwrap_or_default()
    }

    fn read(value: &Value) -> (Option<Set>, bool) {
        let mut children: Option<Set> = None;
        let mut is_member = false;
        if let Value::Object(map) = value {
            for (key, sub) in map {
                if key == "." {
                    is_member = true;
                    continue;
                }
                let Some(pe) = Pe::parse(key) else { continue };
                let (grandchildren, child_is_member) = Self::read(sub);
                let set = children.get_or_insert_with(Set::default);
                if child_is_member {
                    set.members.insert(pe.clone());
                }
                if let Some(grandchildren) = grandchildren {
                    set.children.insert(pe, grandchildren);
                }
            }
        }
        if children.is_none() {
            is_member = true;
        }
        (children, is_member)
    }
}

/// A path as `Path.String()` prints it.
pub fn display_path(path: &[Pe]) -> String {
    path.iter().map(Pe::display).collect()
}

// ---------------------------------------------------------------------------------------------
// Schema-directed walking.

/// How a value at some position is tracked.
#[derive(Debug, Clone, Copy)]
enum Kind<'a> {
    /// An object whose keys are declared fields (node) or free (schemaless).
    Struct(Option<Node<'a>>),
    /// A granular map (`additionalProperties`) whose values have `elem`'s schema.
    Map(Option<Node<'a>>),
    /// A set or associative list.
    List(ListType, Option<Node<'a>>),
    /// A leaf: scalar, atomic list/map/struct, opaque object.
    Atomic,
}

fn kind_of<'a>(value: Option<&Value>, node: Option<Node<'a>>, field: Option<Field<'a>>) -> Kind<'a> {
    if field.is_some_and(|f| f.atomic_map) {
        return Kind::Atomic;
    }
    let is_object = value.is_none_or(Value::is_object);
    let is_array = value.is_none_or(Value::is_array);
    match node {
        Some(node) => match node.shape() {
            Shape::Struct if is_object && !node.is_atomic_struct() => Kind::Struct(Some(node)),
            Shape::Map(elem) if is_object => Kind::Map(Some(elem)),
            Shape::List(elem) if is_array => match field.map(|f| f.list).unwrap_or(ListType::Atomic) {
                ListType::Atomic => Kind::Atomic,
                list => Kind::List(list, Some(elem)),
            },
            _ => Kind::Atomic,
        },
        None => match value {
            Some(Value::Object(_)) => Kind::Struct(None),
            _ => Kind::Atomic,
        },
    }
}

fn child_of<'a>(kind: Kind<'a>, key: &str, value: Option<&Value>) -> Kind<'a> {
    match kind {
        Kind::Struct(Some(node)) => match node.field(key) {
            Some(field) => kind_of(value, Some(field.node), Some(field)),
            None => kind_of(value, None, None),
        },
        Kind::Map(elem) => kind_of(value, elem, None),
        _ => kind_of(value, None, None),
    }
}

fn declared(kind: Kind<'_>, key: &str) -> bool {
    matches!(kind, Kind::Struct(Some(node)) if node.field(key).is_some())
}

/// The path element of a list item (`listItemToPathElement`); associative-list keys missing
/// from the item take their schema default (`protocol: TCP` is the only one the served types have).
fn item_pe(list: ListType, index: usize, item: &Value) -> Result<Pe> {
    match list {
        ListType::Set => Ok(Pe::Value(item.clone())),
        ListType::Map(keys) => {
            let mut fields = Vec::with_capacity(keys.len());
            for key in keys {
                let value = match item.get(*key) {
                    Some(v) if !v.is_null() => v.clone(),
                    _ if *key == "protocol" => Value::String("TCP".into()),
                    _ => {
                        return Err(Error::BadRequest(format!(
                            "element {index}: associative list with keys has an element that omits key field {key:?} (and doesn't have default value)"
                        )));
                    }
                };
                fields.push((key.to_string(), value));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(Pe::Key(fields))
        }
        ListType::Atomic => Ok(Pe::Index(index)),
    }
}

fn item_kind<'a>(elem: Option<Node<'a>>, item: &Value) -> Kind<'a> {
    kind_of(Some(item), elem, None)
}

/// The field set an applied configuration sets (`typed/tofieldset.go`).
pub fn field_set(value: &Value, node: Option<Node<'_>>) -> Result<Set> {
    let mut set = Set::default();
    walk_set(value, kind_of(Some(value), node, None), &mut Vec::new(), &mut set)?;
    Ok(set)
}

/// True when a value of `kind` is walked into (its members are tracked below it) rather than
/// being a leaf of the set.
fn walked(kind: Kind<'_>, value: &Value) -> bool {
    matches!(
        (kind, value),
        (Kind::Struct(_) | Kind::Map(_), Value::Object(_)) | (Kind::List(..), Value::Array(_))
    )
}

/// Adds the members below `value` (at `path`) to `set`, the set at that path: the trie is built
/// as the walk descends, so a deep value costs its size, not its depth squared.
fn walk_set(value: &Value, kind: Kind<'_>, path: &mut Vec<Pe>, set: &mut Set) -> Result<()> {
    match (kind, value) {
        (Kind::Struct(_) | Kind::Map(_), Value::Object(map)) => {
            for (key, child) in map {
                if child.is_null() {
                    continue;
                }
                let pe = Pe::Field(key.clone());
                let leaf = walk_child(child, child_of(kind, key, Some(child)), &pe, path, set)?;
                if leaf || !declared(kind, key) {
                    set.members.insert(pe);
                }
            }
        }
        (Kind::List(list, elem), Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                let pe = item_pe(list, index, item).map_err(|e| at_path(e, path))?;
                walk_child(item, item_kind(elem, item), &pe, path, set)?;
                set.members.insert(pe);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Walks `child` (at `pe` below `set`) into `set`'s child set; true when it is a leaf instead.
fn walk_child(child: &Value, kind: Kind<'_>, pe: &Pe, path: &mut Vec<Pe>, set: &mut Set) -> Result<bool> {
    if !walked(kind, child) {
        return Ok(true);
    }
    path.push(pe.clone());
    let mut below = set.children.remove(pe).unwrap_or_default();
    let walked = walk_set(child, kind, path, &mut below);
    path.pop();
    set.graft(pe, below);
    walked.map(|()| false)
}

fn at_path(error: Error, path: &[Pe]) -> Error {
    match error {
        Error::BadRequest(message) => Error::BadRequest(format!("{}: {message}", display_path(path))),
        other => other,
    }
}

fn list_pes(list: ListType, items: &[Value]) -> Result<Vec<Pe>> {
    items.iter().enumerate().map(|(i, item)| item_pe(list, i, item)).collect()
}

/// Merges an applied configuration into the live object (`typed/merge.go`, rhs wins).
pub fn merge(live: &Value, config: &Value, node: Option<Node<'_>>) -> Result<Value> {
    merge_values(Some(live), Some(config), kind_of(Some(config), node, None))
        .map(|v| v.unwrap_or(Value::Null))
}

fn merge_values(lhs: Option<&Value>, rhs: Option<&Value>, kind: Kind<'_>) -> Result<Option<Value>> {
    match (kind, lhs, rhs) {
        (_, None, None) => Ok(None),
        (_, Some(l), None) => Ok(Some(l.clone())),
        (Kind::Struct(_) | Kind::Map(_), Some(Value::Object(l)), Some(Value::Object(r))) => {
            let mut out = Map::new();
            for (key, lv) in l {
                let rv = r.get(key);
                if let Some(v) = merge_values(Some(lv), rv, child_of(kind, key, rv.or(Some(lv))))? {
                    out.insert(key.clone(), v);
                }
            }
            for (key, rv) in r {
                if !l.contains_key(key)
                    && let Some(v) = merge_values(None, Some(rv), child_of(kind, key, Some(rv)))?
                {
                    out.insert(key.clone(), v);
                }
            }
            Ok(Some(Value::Object(out)))
        }
        (Kind::List(list, elem), Some(Value::Array(l)), Some(Value::Array(r))) => {
            merge_list(l, r, list, elem).map(|items| Some(Value::Array(items)))
        }
        (_, _, Some(r)) => Ok(Some(r.clone())),
    }
}

/// `mergingWalker.visitListItems`: keeps the live order, placing shared items in the applied
/// order and applied-only items after the shared item they follow.
fn merge_list(lhs: &[Value], rhs: &[Value], list: ListType, elem: Option<Node<'_>>) -> Result<Vec<Value>> {
    let lhs_pes = list_pes(list, lhs)?;
    let rhs_pes = list_pes(list, rhs)?;
    let find = |pes: &[Pe], pe: &Pe| pes.iter().position(|p| p == pe);
    let shared: Vec<&Pe> = rhs_pes.iter().filter(|pe| find(&lhs_pes, pe).is_some()).collect();
    let mut shared = shared.into_iter();
    let mut next_shared = shared.next();
    let mut merged_rhs: Vec<Pe> = Vec::new();
    let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
    let (mut li, mut ri) = (0, 0);
    let merge_item = |pe: &Pe| -> Result<Option<Value>> {
        let l = find(&lhs_pes, pe).map(|i| &lhs[i]);
        let r = find(&rhs_pes, pe).map(|i| &rhs[i]);
        let sample = r.or(l).cloned().unwrap_or(Value::Null);
        merge_values(l, r, item_kind(elem, &sample))
    };
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            let pe = &lhs_pes[li];
            if *pe == rhs_pes[ri] {
                merged_rhs.push(pe.clone());
                out.extend(merge_item(pe)?);
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if find(&rhs_pes, pe).is_some() && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            let pe = &lhs_pes[li];
            if find(&rhs_pes, pe).is_none() {
                out.extend(merge_values(Some(&lhs[li]), None, item_kind(elem, &lhs[li]))?);
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
                continue;
            }
        }
        if ri < rhs.len() {
            let pe = rhs_pes[ri].clone();
            if !merged_rhs.contains(&pe) {
                out.extend(merge_item(&pe)?);
            }
            merged_rhs.push(pe.clone());
            ri += 1;
            if next_shared.is_some_and(|n| *n == pe) {
                next_shared = shared.next();
            }
        }
    }
    Ok(out)
}

/// The difference between two objects (`typed/compare.go`).
#[derive(Debug, Default, Clone)]
pub struct Comparison {
    /// Paths only in the new object.
    pub added: Set,
    /// Paths whose leaf value changed.
    pub modified: Set,
    /// Paths only in the old object.
    pub removed: Set,
}

/// Compares `old` and `new` as objects of `node`'s type.
pub fn compare(old: &Value, new: &Value, node: Option<Node<'_>>) -> Result<Comparison> {
    let compared = compare_values_at(Some(old), Some(new), kind_of(Some(new), node, None), &mut Vec::new())?;
    Ok(compared.below)
}

/// How a path changed, as a member of one of [`Comparison`]'s sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Added,
    Modified,
    Removed,
}

/// A comparison at one path: how the path itself changed, and the comparison of what is below
/// it (relative to it), so the parent grafts it in place without walking the path again.
#[derive(Debug, Default)]
struct Compared {
    at: Option<Change>,
    below: Comparison,
}

impl Comparison {
    /// Records `child`, the comparison at `pe` below this one.
    fn graft(&mut self, pe: &Pe, child: Compared) {
        let Compared { at, below } = child;
        match at {
            Some(Change::Added) => self.added.members.insert(pe.clone()),
            Some(Change::Modified) => self.modified.members.insert(pe.clone()),
            Some(Change::Removed) => self.removed.members.insert(pe.clone()),
            None => false,
        };
        self.added.graft(pe, below.added);
        self.modified.graft(pe, below.modified);
        self.removed.graft(pe, below.removed);
    }
}

fn compare_values_at(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    kind: Kind<'_>,
    path: &mut Vec<Pe>,
) -> Result<Compared> {
    let mut out = Compared::default();
    if lhs.is_none() && rhs.is_none() {
        return Ok(out);
    }
    let mut child =
        |pe: &Pe, lhs: Option<&Value>, rhs: Option<&Value>, kind: Kind<'_>, out: &mut Compared| {
            path.push(pe.clone());
            let compared = compare_values_at(lhs, rhs, kind, path);
            path.pop();
            out.below.graft(pe, compared?);
            Ok::<(), Error>(())
        };
    let leaf = match (kind, lhs.or(rhs)) {
        (Kind::Struct(_) | Kind::Map(_), Some(Value::Object(_))) => {
            let empty = Map::new();
            let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
            let mut keys: Vec<&String> = l.keys().collect();
            keys.extend(r.keys().filter(|k| !l.contains_key(*k)));
            for key in keys {
                let (lv, rv) = (l.get(key).filter(|v| !v.is_null()), r.get(key).filter(|v| !v.is_null()));
                child(&Pe::Field(key.clone()), lv, rv, child_of(kind, key, rv.or(lv)), &mut out)?;
            }
            false
        }
        (Kind::List(list, elem), Some(Value::Array(_))) => {
            let empty = Vec::new();
            let l = lhs.and_then(Value::as_array).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_array).unwrap_or(&empty);
            let l_pes = list_pes(list, l)?;
            let r_pes = list_pes(list, r)?;
            for (pe, item) in l_pes.iter().zip(l) {
                let other = r_pes.iter().position(|p| p == pe).map(|i| &r[i]);
                child(pe, Some(item), other, item_kind(elem, item), &mut out)?;
            }
            for (pe, item) in r_pes.iter().zip(r) {
                if !l_pes.contains(pe) {
                    child(pe, None, Some(item), item_kind(elem, item), &mut out)?;
                }
            }
            false
        }
        _ => true,
    };
    out.at = match (leaf, lhs, rhs) {
        (_, None, Some(_)) => Some(Change::Added),
        (_, Some(_), None) => Some(Change::Removed),
        (true, Some(l), Some(r)) if l != r => Some(Change::Modified),
        _ => None,
    };
    Ok(out)
}

/// Removes the member paths of `set` from `value` (`typed/remove.go`), except those with a
/// descendant in `protected` (fields another manager still owns keep their parents).
fn remove_items(value: &mut Value, set: &Set, protected: Option<&Set>, kind: Kind<'_>) {
    match (kind, value) {
        (Kind::Struct(_) | Kind::Map(_), Value::Object(map)) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let pe = Pe::Field(key.clone());
                let guard = protected.and_then(|p| p.children.get(&pe));
                if set.members.contains(&pe) && guard.is_none_or(Set::is_empty) {
                    map.remove(&key);
                    continue;
                }
                if let (Some(child_set), Some(child)) = (set.children.get(&pe), map.get_mut(&key)) {
                    let child_kind = child_of(kind, &key, Some(child));
                    remove_items(child, child_set, guard, child_kind);
                    // Go drops maps and lists left empty (`omitempty`), e.g. `labels: {}`.
                    let emptied = match (child_kind, &*child) {
                        (Kind::Map(_), Value::Object(m)) => m.is_empty(),
                        (Kind::List(..), Value::Array(items)) => items.is_empty(),
                        _ => false,
                    };
                    if emptied {
                        map.remove(&key);
                    }
                }
            }
        }
        (Kind::List(list, elem), Value::Array(items)) => {
            let Ok(pes) = list_pes(list, items) else { return };
            let mut keep = Vec::with_capacity(items.len());
            for (pe, mut item) in pes.into_iter().zip(std::mem::take(items)) {
                let guard = protected.and_then(|p| p.children.get(&pe));
                if set.members.contains(&pe) && guard.is_none_or(Set::is_empty) {
                    continue;
                }
                if let Some(child_set) = set.children.get(&pe) {
                    let child_kind = item_kind(elem, &item);
                    remove_items(&mut item, child_set, guard, child_kind);
                }
                keep.push(item);
            }
            *items = keep;
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Managers.

/// The operation a managedFields entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update, and the other patch types.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// A manager's identity (`BuildManagerIdentifier`: the API version counts only for Update).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ManagerId {
    /// `fieldManager`.
    pub manager: String,
    /// Apply or Update.
    pub operation: Operation,
    /// Empty for Apply.
    pub api_version: String,
    /// `status`, `scale`, or empty.
    pub subresource: String,
    /// The entry's time, for messages only (not part of the identity when comparing).
    time: Option<String>,
}

impl ManagerId {
    fn same(&self, other: &ManagerId) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.api_version == other.api_version
            && self.subresource == other.subresource
    }

    /// `printManager` in fieldmanager/internal/conflict.go.
    pub fn display(&self) -> String {
        let mut out = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            out = format!("{out} with subresource {:?}", self.subresource);
        }
        if self.operation == Operation::Update {
            out = match &self.time {
                Some(time) => format!("{out} using {} at {time}", self.api_version),
                None => format!("{out} using {}", self.api_version),
            };
        }
        out
    }
}

/// One managedFields entry.
#[derive(Debug, Clone)]
struct Entry {
    id: ManagerId,
    api_version: String,
    time: Option<String>,
    set: Set,
}

fn decode(object: &Value) -> Vec<Entry> {
    let Some(Value::Array(entries)) = object.pointer("/metadata/managedFields") else { return Vec::new() };
    entries
        .iter()
        .filter_map(|e| {
            let operation = match e.get("operation")?.as_str()? {
                "Apply" => Operation::Apply,
                _ => Operation::Update,
            };
            let api_version = e.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
            let time = e.get("time").and_then(Value::as_str).map(str::to_string);
            let id = ManagerId {
                manager: e.get("manager").and_then(Value::as_str).unwrap_or_default().to_string(),
                operation,
                api_version: if operation == Operation::Apply { String::new() } else { api_version.clone() },
                subresource: e.get("subresource").and_then(Value::as_str).unwrap_or_default().to_string(),
                time: time.clone(),
            };
            Some(Entry {
                id,
                api_version,
                time,
                set: Set::from_fields_v1(e.get("fieldsV1").unwrap_or(&Value::Null)),
            })
        })
        .collect()
}

/// Writes entries back in upstream's order (`sortEncodedManagedFields`: operation, time,
/// manager, apiVersion, subresource).
fn encode(object: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|a, b| {
        a.id.operation
            .cmp(&b.id.operation)
            .then_with(|| a.time.cmp(&b.time))
            .then_with(|| a.id.manager.cmp(&b.id.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| a.id.subresource.cmp(&b.id.subresource))
    });
    let encoded: Vec<Value> = entries
        .into_iter()
        .map(|e| {
            let mut entry = Map::new();
            entry.insert("manager".into(), e.id.manager.into());
            entry.insert("operation".into(), e.id.operation.as_str().into());
            entry.insert("apiVersion".into(), e.api_version.into());
            if let Some(time) = e.time {
                entry.insert("time".into(), time.into());
            }
            entry.insert("fieldsType".into(), "FieldsV1".into());
            entry.insert("fieldsV1".into(), e.set.to_fields_v1());
            if !e.id.subresource.is_empty() {
                entry.insert("subresource".into(), e.id.subresource.into());
            }
            Value::Object(entry)
        })
        .collect();
    if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
        if encoded.is_empty() {
            metadata.remove("managedFields");
        } else {
            metadata.insert("managedFields".into(), Value::Array(encoded));
        }
    }
}

/// Paths never tracked (`stripmeta.go` `NewStripMetaManager`).
fn strip_set() -> Set {
    let mut set = Set::default();
    for path in [
        &["apiVersion"][..],
        &["kind"],
        &["metadata"],
        &["metadata", "name"],
        &["metadata", "namespace"],
        &["metadata", "creationTimestamp"],
        &["metadata", "selfLink"],
        &["metadata", "uid"],
        &["metadata", "clusterName"],
        &["metadata", "generation"],
        &["metadata", "managedFields"],
        &["metadata", "resourceVersion"],
    ] {
        let pes: Vec<Pe> = path.iter().map(|p| Pe::Field(p.to_string())).collect();
        set.insert(&pes);
    }
    set
}

/// What the request writes: the main resource or a subresource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// The object itself; `status` is reset when the kind has a status subresource.
    Main {
        /// True when the kind serves `/status` (then `status` is not tracked here).
        has_status: bool,
    },
    /// A subresource such as `status`: only its part of the object is tracked.
    Subresource(&'a str),
}

impl Target<'_> {
    fn subresource(&self) -> &str {
        match self {
            Target::Main { .. } => "",
            Target::Subresource(name) => name,
        }
    }

    /// Restricts a set to what this target may own (`ResetFieldsStrategy` of the kinds).
    fn filter(&self, set: &Set) -> Set {
        let status = Set { members: [Pe::Field("status".into())].into(), ..Set::default() };
        let tracked = match self {
            Target::Main { has_status: true } => set.recursive_difference(&status),
            Target::Main { has_status: false } => set.clone(),
            Target::Subresource("status") => {
                let mut only = Set::default();
                if let Some(child) = set.children.get(&Pe::Field("status".into())) {
                    only.children.insert(Pe::Field("status".into()), child.clone());
                }
                if set.members.contains(&Pe::Field("status".into())) {
                    only.members.insert(Pe::Field("status".into()));
                }
                only
            }
            Target::Subresource(_) => set.clone(),
        };
        tracked.difference(&strip_set())
    }

    fn filter_comparison(&self, comparison: Comparison) -> Comparison {
        Comparison {
            added: self.filter(&comparison.added),
            modified: self.filter(&comparison.modified),
            removed: self.filter(&comparison.removed),
        }
    }
}

fn rfc3339(now: Timestamp) -> String {
    Timestamp::from_second(now.as_second()).unwrap_or(now).to_string()
}

fn without_managed_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(Value::Object(metadata)) = copy.get_mut("metadata") {
        metadata.remove("managedFields");
    }
    copy
}

fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// `Updater.update`: finds conflicts of the change `old → new` with managers other than
/// `workflow`, takes conflicting fields from them when forced, and drops removed fields from all.
fn update_managers(
    entries: &mut [Entry],
    comparison: &Comparison,
    workflow: &ManagerId,
    force: bool,
) -> Result<()> {
    let changed = comparison.modified.union(&comparison.added);
    let mut conflicts = Vec::new();
    for entry in entries.iter_mut() {
        if entry.id.same(workflow) {
            continue;
        }
        let conflict = entry.set.intersection(&changed);
        if conflict.is_empty() {
            continue;
        }
        if force {
            entry.set = entry.set.difference(&conflict);
        } else {
            for path in conflict.paths() {
                let manager = ManagerId { time: entry.time.clone(), ..entry.id.clone() };
                conflicts.push(Conflict { manager, path: display_path(&path) });
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(Error::Conflicts(conflicts));
    }
    for entry in entries.iter_mut() {
        entry.set = entry.set.difference(&comparison.removed);
    }
    Ok(())
}

/// Upstream's conflict text (`getConflictMessage` in fieldmanager/internal/conflict.go), without
/// the `Apply failed with N conflict(s): ` prefix.
pub fn conflict_details(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!("conflict with {}: {}", only.manager.display(), only.path);
    }
    let mut by_manager: BTreeMap<&ManagerId, Vec<&str>> = BTreeMap::new();
    for conflict in conflicts {
        by_manager.entry(&conflict.manager).or_default().push(&conflict.path);
    }
    let mut lines = Vec::new();
    for (manager, paths) in by_manager {
        lines.push(format!("conflicts with {}", manager.display()));
        lines.extend(paths.iter().map(|p| format!("- {p}")));
    }
    lines.join("\n")
}

fn conflict_message(conflicts: &[Conflict]) -> String {
    let noun = if conflicts.len() == 1 { "conflict" } else { "conflicts" };
    format!("Apply failed with {} {noun}: {}", conflicts.len(), conflict_details(conflicts))
}

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Server-side apply of `config` by `manager` onto `live` (`None` when creating).
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: Option<&Value>,
    config: &Value,
    node: Option<Node<'_>>,
    manager: &str,
    api_version: &str,
    target: Target<'_>,
    force: bool,
    now: Timestamp,
) -> Result<Value> {
    let mut entries = live.map(decode).unwrap_or_default();
    let live_object = live.map(without_managed_fields).unwrap_or_else(|| json!({}));
    let mut config = without_managed_fields(config);
    drop_nulls(&mut config);
    let id = ManagerId {
        manager: manager.to_string(),
        operation: Operation::Apply,
        api_version: String::new(),
        subresource: target.subresource().to_string(),
        time: None,
    };
    let applied_set = target.filter(&field_set(&config, node)?);
    let mut merged = merge(&live_object, &config, node)?;
    let previous = entries.iter().position(|e| e.id.same(&id));
    let last_set = previous.map(|i| entries[i].set.clone()).unwrap_or_default();
    match previous {
        Some(i) => {
            entries[i].set = applied_set.clone();
            entries[i].api_version = api_version.to_string();
        }
        None => entries.push(Entry {
            id: id.clone(),
            api_version: api_version.to_string(),
            time: None,
            set: applied_set,
        }),
    }
    // prune: what this manager applied last time and nobody owns now goes away.
    let owned = entries.iter().fold(Set::default(), |acc, e| acc.union(&e.set));
    let stale = last_set.difference(&owned);
    if !stale.is_empty() {
        let kind = kind_of(Some(&merged), node, None);
        remove_items(&mut merged, &stale, Some(&owned), kind);
    }
    let comparison = target.filter_comparison(compare(&live_object, &merged, node)?);
    if let Err(Error::Conflicts(conflicts)) = update_managers(&mut entries, &comparison, &id, force) {
        // lastappliedmanager.go: kubectl's server-side apply takes over fields that only
        // client-side apply (`kubectl-client-side-apply`) owned, without a conflict.
        let from_client_side_apply = conflicts.iter().all(|c| {
            c.manager.manager == "kubectl-client-side-apply" && c.manager.operation == Operation::Update
        });
        if manager == "kubectl"
            && from_client_side_apply
            && live_object.pointer("/metadata/annotations").is_some_and(|a| a.get(LAST_APPLIED).is_some())
        {
            update_managers(&mut entries, &comparison, &id, true)?;
        } else {
            return Err(Error::Conflicts(conflicts));
        }
    }
    // lastappliedupdater.go: kubectl's apply keeps an existing client-side annotation in step.
    if manager == "kubectl"
        && let Some(Value::Object(annotations)) = merged.pointer_mut("/metadata/annotations")
        && annotations.contains_key(LAST_APPLIED)
    {
        // buildLastApplied: the applied object without the annotation itself (and without an
        // `annotations` map left empty), encoded compactly.
        let mut last = config.clone();
        if let Some(Value::Object(metadata)) = last.get_mut("metadata") {
            if let Some(Value::Object(a)) = metadata.get_mut("annotations") {
                a.remove(LAST_APPLIED);
            }
            if metadata.get("annotations").is_some_and(|a| a.as_object().is_some_and(Map::is_empty)) {
                metadata.remove("annotations");
            }
        }
        annotations.insert(LAST_APPLIED.into(), Value::String(last.to_string()));
    }
    let changed = merged != live_object;
    if let Some(entry) = entries.iter_mut().find(|e| e.id.same(&id))
        && (changed || entry.time.is_none())
    {
        entry.time = Some(rfc3339(now));
    }
    encode(&mut merged, entries);
    Ok(merged)
}

/// Records an Update operation by `manager` that turned `old` (`None`: created) into `new`,
/// writing `new.metadata.managedFields` (`managedFieldsUpdater.Update`).
#[allow(clippy::too_many_arguments)]
pub fn update(
    old: Option<&Value>,
    new: &mut Value,
    node: Option<Node<'_>>,
    manager: &str,
    api_version: &str,
    target: Target<'_>,
    now: Timestamp,
) -> Result<()> {
    // A client that sends managedFields different from the stored ones sets them; otherwise
    // the stored ones carry over (fieldmanager.go `decodeLiveOrNew`).
    let mut entries = match (old, new.pointer("/metadata/managedFields")) {
        (Some(old), Some(sent)) if old.pointer("/metadata/managedFields") != Some(sent) => decode(new),
        (Some(old), _) => decode(old),
        (None, _) => decode(new),
    };
    let old_object =
        old.map(without_managed_fields).unwrap_or_else(|| json!({"metadata": {}, "spec": {}, "status": {}}));
    let new_object = without_managed_fields(new);
    let comparison = target.filter_comparison(compare(&old_object, &new_object, node)?);
    let id = ManagerId {
        manager: manager.to_string(),
        operation: Operation::Update,
        api_version: api_version.to_string(),
        subresource: target.subresource().to_string(),
        time: None,
    };
    let current = ManagerId { manager: "current-operation".into(), ..id.clone() };
    update_managers(&mut entries, &comparison, &current, true)?;
    let taken = comparison.modified.union(&comparison.added);
    if !taken.is_empty() {
        match entries.iter_mut().find(|e| e.id.same(&id)) {
            Some(entry) => {
                entry.set = entry.set.union(&taken);
                entry.time = Some(rfc3339(now));
            }
            None => entries.push(Entry {
                id,
                api_version: api_version.to_string(),
                time: Some(rfc3339(now)),
                set: taken,
            }),
        }
    }
    encode(new, entries);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_v1_round_trips_in_upstream_order() {
        let text = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}, "f:name": {}}}}
        });
        let set = Set::from_fields_v1(&text);
        assert!(set.has(&[Pe::Field("metadata".into()), Pe::Field("labels".into())]));
        assert_eq!(set.to_fields_v1(), text);
        assert_eq!(
            serde_json::to_string(&set.to_fields_v1()).unwrap(),
            serde_json::to_string(&text).unwrap()
        );
    }

    #[test]
    fn path_display_matches_fieldpath_string() {
        let path = vec![
            Pe::Field("spec".into()),
            Pe::Key(vec![("containerPort".into(), json!(80)), ("protocol".into(), json!("TCP"))]),
            Pe::Value(json!("x")),
        ];
        assert_eq!(display_path(&path), ".spec[containerPort=80,protocol=\"TCP\"][=\"x\"]");
    }
}
