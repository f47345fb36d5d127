//! Partial-object matching: maps are subsets, lists follow their declared semantics, scalars are
//! equal (as quantities where the path holds one).

use std::{
    cmp::Ordering,
    collections::{BTreeMap, BTreeSet},
};

use serde_json::Value;

use super::path::{self, FieldPath};
use crate::{
    english_display,
    i18n::{Localized, Message},
    k8s::quantity::Quantity,
    lab::model::ListSemantics,
    msg,
};

/// Keys under which Kubernetes keeps quantities: a scalar below one of them compares as a
/// quantity (`1Gi` equals `1024Mi`).
pub const QUANTITY_KEYS: [&str; 7] =
    ["resources", "requests", "limits", "capacity", "allocatable", "hard", "used"];

/// Errors from building match rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A declared path is not a valid path.
    Path(#[from] path::Error),
    /// A declared list path has an index in it; list semantics apply to every element.
    IndexedListPath(String),
}

impl Localized for Error {
    fn message(&self) -> Message {
        match self {
            Error::Path(error) => error.message(),
            Error::IndexedListPath(path) => msg!("grade-error-indexed-list-path", path = format!("{path:?}")),
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Per-path rules of one match: list semantics and extra quantity paths, keyed by paths without
/// list indices.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    lists: BTreeMap<FieldPath, ListSemantics>,
    quantities: BTreeSet<FieldPath>,
}

impl Rules {
    /// Rules from a `match` expectation's `lists` and `quantities`.
    pub fn new<'a>(
        lists: impl IntoIterator<Item = (&'a String, &'a ListSemantics)>,
        quantities: impl IntoIterator<Item = &'a String>,
    ) -> Result<Rules> {
        let mut rules = Rules::default();
        for (text, semantics) in lists {
            let path: FieldPath = text.parse()?;
            if path.without_indices() != path {
                return Err(Error::IndexedListPath(text.clone()));
            }
            rules.lists.insert(path, *semantics);
        }
        for text in quantities {
            rules.quantities.insert(text.parse::<FieldPath>()?.without_indices());
        }
        Ok(rules)
    }

    /// Declares the semantics of the list at `path` (no indices).
    pub fn with_list(mut self, path: &str, semantics: ListSemantics) -> Result<Rules> {
        self.lists.insert(path.parse()?, semantics);
        Ok(self)
    }

    fn compares_as_quantity(&self, path: &FieldPath) -> bool {
        path.has_key_in(&QUANTITY_KEYS) || self.quantities.contains(&path.without_indices())
    }
}

/// One difference between the expected partial object and what was observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Where (with list indices of the observed object).
    pub path: FieldPath,
    /// What: `is 4, expected 8`.
    pub detail: Detail,
}

/// What differs at a path; values as evidence shows them ([`show`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail {
    /// Something is there where the expected object says `null`: only what is observed is said
    /// ("expected it absent" would state the fix, which is the task).
    Present {
        /// What is there.
        found: String,
    },
    /// Nothing is there.
    Missing {
        /// What should be.
        expected: String,
    },
    /// A map is expected.
    NotAMap {
        /// What is there.
        found: String,
    },
    /// A scalar differs.
    Differs {
        /// What is there.
        found: String,
        /// What should be.
        expected: String,
    },
    /// A list is expected.
    NotAList {
        /// What is there.
        found: String,
    },
    /// A `contains` list has no element matching one expected element.
    NoElement {
        /// The expected element.
        item: String,
        /// How the closest element differs; empty when the list is empty.
        closest: Vec<Mismatch>,
    },
    /// An `exactly` list has another length.
    Length {
        /// Elements observed.
        found: usize,
        /// Elements expected.
        expected: usize,
    },
    /// An `each` list is empty or missing.
    EachEmpty,
    /// A `none` list has an element matching an expected one.
    NoneExpected {
        /// The expected element that matched.
        item: String,
    },
}

impl Localized for Mismatch {
    fn message(&self) -> Message {
        let path: crate::i18n::Arg = if self.path.segments().is_empty() {
            msg!("partial-the-object").into()
        } else {
            self.path.to_string().into()
        };
        match &self.detail {
            Detail::Present { found } => msg!("partial-present", path = path, found = found),
            Detail::Missing { expected } => msg!("partial-missing", path = path, expected = expected),
            Detail::NotAMap { found } => msg!("partial-not-a-map", path = path, found = found),
            Detail::Differs { found, expected } => {
                msg!("partial-differs", path = path, found = found, expected = expected)
            }
            Detail::NotAList { found } => msg!("partial-not-a-list", path = path, found = found),
            Detail::NoElement { item, closest } if closest.is_empty() => {
                msg!("partial-no-element-empty", path = path, item = item)
            }
            Detail::NoElement { item, closest } => msg!(
                "partial-no-element",
                path = path,
                item = item,
                closest = closest.iter().map(Mismatch::message).collect::<Vec<_>>()
            ),
            Detail::Length { found, expected } => {
                msg!("partial-length", path = path, found = *found, expected = *expected)
            }
            Detail::EachEmpty => msg!("partial-each-empty", path = path),
            Detail::NoneExpected { item } => msg!("partial-none-expected", path = path, item = item),
        }
    }
}
english_display!(Mismatch);

/// The paths (without indices) of lists in `expected` that have no declared semantics.
pub fn undeclared_lists(expected: &Value, rules: &Rules) -> Vec<FieldPath> {
    let mut found = BTreeSet::new();
    each_list(expected, &FieldPath::root(), &mut |path, _| {
        if !rules.lists.contains_key(path) {
            found.insert(path.clone());
        }
    });
    found.into_iter().collect()
}

/// The paths of lists declared `each` whose expected list does not hold exactly one element (the
/// element every observed one must match).
pub fn each_lists_without_one_element(expected: &Value, rules: &Rules) -> Vec<FieldPath> {
    let mut found = BTreeSet::new();
    each_list(expected, &FieldPath::root(), &mut |path, items| {
        if rules.lists.get(path) == Some(&ListSemantics::Each) && items.len() != 1 {
            found.insert(path.clone());
        }
    });
    found.into_iter().collect()
}

/// Maps whose values Kubernetes keeps as strings only.
const STRING_MAPS: [&str; 4] = ["labels", "annotations", "nodeSelector", "matchLabels"];

/// Paths in `expected` where a label, annotation or node-selector value is not a string (nor
/// `null`): `gpu.replicas: 4` can never equal the observed `"4"`.
pub fn non_string_label_values(expected: &Value) -> Vec<FieldPath> {
    fn walk(value: &Value, path: &FieldPath, in_string_map: bool, found: &mut Vec<FieldPath>) {
        match value {
            Value::Object(map) if !in_string_map => {
                for (key, v) in map {
                    walk(v, &path.key(key), STRING_MAPS.contains(&key.as_str()), found);
                }
            }
            Value::Object(map) => {
                for (key, v) in map {
                    if !(v.is_string() || v.is_null()) {
                        found.push(path.key(key));
                    }
                }
            }
            Value::Array(items) => {
                items.iter().enumerate().for_each(|(i, v)| walk(v, &path.index(i), false, found))
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(expected, &FieldPath::root(), false, &mut found);
    found
}

/// Calls `visit` with the path (without indices) and elements of every list in `value`.
fn each_list(value: &Value, path: &FieldPath, visit: &mut impl FnMut(&FieldPath, &[Value])) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| each_list(v, &path.key(k), visit)),
        Value::Array(items) => {
            visit(&path.without_indices(), items);
            items.iter().enumerate().for_each(|(i, v)| each_list(v, &path.index(i), visit));
        }
        _ => {}
    }
}

/// Compares `observed` with the partial object `expected` and returns every mismatch (none: it
/// matches). A list without declared semantics is compared as `contains`; check
/// [`undeclared_lists`] first to report it as an authoring error instead.
///
/// ```
/// use lab_runner::grade::partial::{matches, Rules};
/// let rules = Rules::default();
/// let node = serde_json::json!({"status": {"allocatable": {"nvidia.com/gpu": "4", "memory": "1Gi"}}});
/// let expected = serde_json::json!({"status": {"allocatable": {"nvidia.com/gpu": 8, "memory": "1024Mi"}}});
/// let found = matches(&expected, &node, &rules);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].to_string(), "status.allocatable.nvidia.com/gpu is 4, expected 8");
/// ```
pub fn matches(expected: &Value, observed: &Value, rules: &Rules) -> Vec<Mismatch> {
    let mut out = Vec::new();
    compare(expected, Some(observed), &FieldPath::root(), rules, &mut out);
    out
}

fn compare(
    expected: &Value,
    observed: Option<&Value>,
    path: &FieldPath,
    rules: &Rules,
    out: &mut Vec<Mismatch>,
) {
    let mut push = |detail: Detail| out.push(Mismatch { path: path.clone(), detail });
    match (expected, observed) {
        (Value::Null, None | Some(Value::Null)) => {}
        // What is observed only: "expected it absent" would state the fix, which is the task
        // (gpu-sharing's `limits.` quota key; issue #15).
        (Value::Null, Some(found)) => push(Detail::Present { found: show(found) }),
        (Value::Array(items), found) => {
            let semantics =
                rules.lists.get(&path.without_indices()).copied().unwrap_or(ListSemantics::Contains);
            compare_list(items, found, semantics, path, rules, out);
        }
        (_, None) => push(Detail::Missing { expected: show(expected) }),
        (Value::Object(map), Some(Value::Object(found))) => {
            for (key, value) in map {
                compare(value, found.get(key), &path.key(key), rules, out);
            }
        }
        (Value::Object(_), Some(found)) => push(Detail::NotAMap { found: show(found) }),
        (scalar, Some(found)) => {
            if !scalars_equal(scalar, found, rules.compares_as_quantity(path)) {
                let (found_text, expected_text) = match (show(found), show(scalar)) {
                    // `"4"` against `4`: show the JSON forms so the difference is visible.
                    (a, b) if a == b => (found.to_string(), scalar.to_string()),
                    pair => pair,
                };
                push(Detail::Differs { found: found_text, expected: expected_text });
            }
        }
    }
}

fn compare_list(
    expected: &[Value],
    observed: Option<&Value>,
    semantics: ListSemantics,
    path: &FieldPath,
    rules: &Rules,
    out: &mut Vec<Mismatch>,
) {
    let empty = Vec::new();
    let found = match observed {
        None | Some(Value::Null) => &empty,
        Some(Value::Array(found)) => found,
        Some(other) => {
            out.push(Mismatch { path: path.clone(), detail: Detail::NotAList { found: show(other) } });
            return;
        }
    };
    let mut push = |detail: Detail| out.push(Mismatch { path: path.clone(), detail });
    match semantics {
        ListSemantics::Contains => {
            for item in expected {
                let candidates: Vec<Vec<Mismatch>> =
                    found.iter().enumerate().map(|(i, f)| element(item, f, &path.index(i), rules)).collect();
                if candidates.iter().any(Vec::is_empty) {
                    continue;
                }
                let closest = candidates.into_iter().min_by_key(Vec::len).unwrap_or_default();
                push(Detail::NoElement { item: show(item), closest });
            }
        }
        ListSemantics::Exactly => {
            if expected.len() != found.len() {
                push(Detail::Length { found: found.len(), expected: expected.len() });
                return;
            }
            for (i, (item, f)) in expected.iter().zip(found).enumerate() {
                compare(item, Some(f), &path.index(i), rules, out);
            }
        }
        ListSemantics::Each => {
            if found.is_empty() {
                push(Detail::EachEmpty);
                return;
            }
            for (i, f) in found.iter().enumerate() {
                for item in expected {
                    compare(item, Some(f), &path.index(i), rules, out);
                }
            }
        }
        ListSemantics::None => {
            for (i, f) in found.iter().enumerate() {
                for item in expected {
                    if element(item, f, &path.index(i), rules).is_empty() {
                        out.push(Mismatch {
                            path: path.index(i),
                            detail: Detail::NoneExpected { item: show(item) },
                        });
                    }
                }
            }
        }
    }
}

fn element(expected: &Value, observed: &Value, path: &FieldPath, rules: &Rules) -> Vec<Mismatch> {
    let mut out = Vec::new();
    compare(expected, Some(observed), path, rules, &mut out);
    out
}

/// Scalar equality: numbers by value, quantities by exact quantity where the path holds one.
pub fn scalars_equal(expected: &Value, observed: &Value, as_quantity: bool) -> bool {
    if expected == observed {
        return true;
    }
    if as_quantity && let (Ok(a), Ok(b)) = (Quantity::from_json(expected), Quantity::from_json(observed)) {
        return a == b;
    }
    match (expected, observed) {
        (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()) == Some(Ordering::Equal),
        _ => false,
    }
}

/// A value as evidence shows it: strings bare, everything else as compact JSON.
pub fn show(value: &Value) -> String {
    match value {
        Value::String(text) if !text.is_empty() && !text.contains(char::is_whitespace) => text.clone(),
        other => {
            let text = other.to_string();
            if text.chars().count() > 120 {
                format!("{}…", text.chars().take(117).collect::<String>())
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rules(lists: &[(&str, ListSemantics)]) -> Rules {
        lists.iter().fold(Rules::default(), |r, (p, s)| r.with_list(p, *s).unwrap())
    }

    fn mismatches(expected: Value, observed: Value, rules: &Rules) -> Vec<String> {
        matches(&expected, &observed, rules).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn maps_are_subsets_and_scalars_equal() {
        let observed =
            json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "spec": {"replicas": 3}});
        assert!(
            mismatches(json!({"metadata": {"labels": {"x": "1"}}}), observed.clone(), &Rules::default())
                .is_empty()
        );
        assert!(
            mismatches(json!({"spec": {"replicas": 3.0}}), observed.clone(), &Rules::default()).is_empty()
        );
        assert_eq!(
            mismatches(
                json!({"metadata": {"labels": {"x": "2", "z": "3"}}, "spec": {"paused": true}}),
                observed.clone(),
                &Rules::default()
            ),
            [
                "metadata.labels.x is 1, expected 2",
                "metadata.labels.z is missing, expected 3",
                "spec.paused is missing, expected true"
            ]
        );
        assert_eq!(
            mismatches(json!({"spec": {"replicas": {"a": 1}}}), observed, &Rules::default()),
            ["spec.replicas is 3, expected a map"]
        );
    }

    #[test]
    fn a_string_is_not_a_number_and_the_evidence_shows_it() {
        let observed = json!({"metadata": {"labels": {"nvidia.com/gpu.replicas": "4"}}});
        assert_eq!(
            mismatches(
                json!({"metadata": {"labels": {"nvidia.com/gpu.replicas": 4}}}),
                observed,
                &Rules::default()
            ),
            [r#"metadata.labels.nvidia.com/gpu.replicas is "4", expected 4"#]
        );
    }

    #[test]
    fn label_values_must_be_strings() {
        let expected = json!({"metadata": {"labels": {"a": "1", "b": 2, "c": null}},
                              "spec": {"template": {"spec": {"nodeSelector": {"gpu": true}}}}});
        let found: Vec<String> = non_string_label_values(&expected).iter().map(ToString::to_string).collect();
        assert_eq!(found, ["metadata.labels.b", "spec.template.spec.nodeSelector.gpu"]);
    }

    #[test]
    fn null_means_absent() {
        let observed = json!({"status": {"numberReady": 3}});
        assert!(
            mismatches(json!({"status": {"numberUnavailable": null}}), observed.clone(), &Rules::default())
                .is_empty()
        );
        assert_eq!(
            mismatches(json!({"status": {"numberReady": null}}), observed, &Rules::default()),
            ["status.numberReady is 3"]
        );
    }

    #[test]
    fn quantities_compare_exactly_under_resource_keys() {
        let observed = json!({"spec": {"containers": [{"resources": {"limits": {"memory": "1Gi", "nvidia.com/gpu": "2"}}}]},
                              "status": {"capacity": {"cpu": "500m"}}, "data": {"size": "1Gi"}});
        let r = rules(&[("spec.containers", ListSemantics::Contains)]);
        let expected = json!({"spec": {"containers": [{"resources": {"limits": {"memory": "1024Mi", "nvidia.com/gpu": 2}}}]},
                              "status": {"capacity": {"cpu": 0.5}}});
        assert!(mismatches(expected, observed.clone(), &r).is_empty());
        // Outside the quantity keys, strings are just strings ...
        assert_eq!(
            mismatches(json!({"data": {"size": "1024Mi"}}), observed.clone(), &r),
            ["data.size is 1Gi, expected 1024Mi"]
        );
        // ... unless declared.
        let declared = Rules::new([], [&"data.size".to_string()]).unwrap();
        assert!(mismatches(json!({"data": {"size": "1024Mi"}}), observed, &declared).is_empty());
    }

    #[test]
    fn list_contains_any_order_with_the_closest_element_as_evidence() {
        let observed = json!({"c": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]});
        let r = rules(&[("c", ListSemantics::Contains)]);
        assert!(
            mismatches(json!({"c": [{"name": "b"}, {"name": "a", "image": "x:1"}]}), observed.clone(), &r)
                .is_empty()
        );
        assert_eq!(
            mismatches(json!({"c": [{"name": "b", "image": "y:2"}]}), observed, &r),
            [
                r#"c has no element matching {"name":"b","image":"y:2"} (closest: c[1].image is y:1, expected y:2)"#
            ]
        );
        assert_eq!(
            mismatches(json!({"c": [{"name": "b"}]}), json!({}), &r),
            [r#"c has no element matching {"name":"b"} (the list is empty)"#]
        );
    }

    #[test]
    fn list_exactly_is_length_and_order() {
        let observed = json!({"args": ["--a", "--b"]});
        let r = rules(&[("args", ListSemantics::Exactly)]);
        assert!(mismatches(json!({"args": ["--a", "--b"]}), observed.clone(), &r).is_empty());
        assert_eq!(
            mismatches(json!({"args": ["--b", "--a"]}), observed.clone(), &r),
            ["args[0] is --a, expected --b", "args[1] is --b, expected --a"]
        );
        assert_eq!(
            mismatches(json!({"args": ["--a"]}), observed, &r),
            ["args has 2 elements, expected exactly 1"]
        );
        assert!(
            mismatches(json!({"args": []}), json!({}), &r).is_empty(),
            "an omitted list is an empty list"
        );
    }

    #[test]
    fn list_each_requires_every_element_and_at_least_one() {
        let observed =
            json!({"t": [{"effect": "NoSchedule", "key": "a"}, {"effect": "NoExecute", "key": "b"}]});
        let r = rules(&[("t", ListSemantics::Each)]);
        assert!(mismatches(json!({"t": [{"key": "a"}]}), json!({"t": [{"key": "a"}]}), &r).is_empty());
        assert_eq!(
            mismatches(json!({"t": [{"effect": "NoSchedule"}]}), observed, &r),
            ["t[1].effect is NoExecute, expected NoSchedule"]
        );
        assert_eq!(
            mismatches(json!({"t": [{"key": "a"}]}), json!({"t": []}), &r),
            ["t is empty or missing, expected every element to match"]
        );
    }

    #[test]
    fn list_none_forbids_matching_elements() {
        let observed = json!({"c": [{"image": "good:1"}, {"image": "bad:0"}]});
        let r = rules(&[("c", ListSemantics::None)]);
        assert!(mismatches(json!({"c": [{"image": "other"}]}), observed.clone(), &r).is_empty());
        assert!(mismatches(json!({"c": [{"image": "bad:0"}]}), json!({}), &r).is_empty());
        assert_eq!(
            mismatches(json!({"c": [{"image": "bad:0"}]}), observed, &r),
            [r#"c[1] matches {"image":"bad:0"}, expected no element to"#]
        );
    }

    #[test]
    fn nested_lists_use_paths_without_indices() {
        let observed = json!({"c": [{"name": "a", "env": [{"name": "X", "value": "1"}]}]});
        let expected = json!({"c": [{"name": "a", "env": [{"name": "X", "value": "2"}]}]});
        let r = rules(&[("c", ListSemantics::Exactly), ("c.env", ListSemantics::Contains)]);
        assert_eq!(
            mismatches(expected.clone(), observed, &r),
            [
                r#"c[0].env has no element matching {"name":"X","value":"2"} (closest: c[0].env[0].value is 1, expected 2)"#
            ]
        );
        assert_eq!(
            undeclared_lists(&expected, &rules(&[("c", ListSemantics::Exactly)])),
            ["c.env".parse::<FieldPath>().unwrap()]
        );
        assert!(undeclared_lists(&expected, &r).is_empty());
        let each = rules(&[("c", ListSemantics::Each), ("c.env", ListSemantics::Each)]);
        assert!(each_lists_without_one_element(&expected, &each).is_empty());
        let two = json!({"c": [{"name": "a"}, {"name": "b"}]});
        assert_eq!(each_lists_without_one_element(&two, &each), ["c".parse::<FieldPath>().unwrap()]);
        assert!(matches!(
            Rules::new([(&"c[0]".to_string(), &ListSemantics::Each)], []),
            Err(Error::IndexedListPath(_))
        ));
    }
}
