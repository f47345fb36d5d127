//! Label selectors (`a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`) and field selectors.
//!
//! Parsing follows `k8s.io/apimachinery/pkg/labels/selector.go` and `pkg/fields/selector.go`;
//! the fields each kind can be selected on follow the per-kind `ToSelectableFields` functions of
//! `k8s.io/kubernetes/pkg/registry/*/strategy.go` and `pkg/apis/core/v1/conversion.go` (v1.33).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use serde_json::Value;

/// Errors from parsing a selector.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The label selector is not in the grammar (upstream: `unable to parse requirement: …`).
    #[error("unable to parse requirement: {0}")]
    LabelSyntax(String),
    /// A field selector term has no `=`, `==` or `!=` (upstream `fields.ParseSelector`).
    #[error("invalid selector: '{0}'; can't understand '{1}'")]
    FieldSyntax(String, String),
    /// The kind cannot be selected on this field (upstream text, `pkg/apis/core/v1/conversion.go`).
    #[error("field label not supported: {0}")]
    FieldNotSupported(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How one label requirement compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelOp {
    /// `key=value`, `key==value`, `key in (a,b)`.
    In(Vec<String>),
    /// `key!=value`, `key notin (a,b)`.
    NotIn(Vec<String>),
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>5` (integer comparison).
    GreaterThan(i64),
    /// `key<5` (integer comparison).
    LessThan(i64),
}

/// One term of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelRequirement {
    /// Label key.
    pub key: String,
    /// Comparison.
    pub op: LabelOp,
}

/// A parsed label selector: all requirements must hold. Empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// The requirements, ANDed.
    pub requirements: Vec<LabelRequirement>,
}

impl LabelSelector {
    /// Parses the `labelSelector` query parameter.
    ///
    /// ```
    /// use lab_runner_k8s::selector::LabelSelector;
    /// use std::collections::BTreeMap;
    /// let sel = LabelSelector::parse("app in (web,api),!canary,tier!=db").unwrap();
    /// let labels = BTreeMap::from([("app".to_string(), "web".to_string())]);
    /// assert!(sel.matches(&labels));
    /// ```
    pub fn parse(text: &str) -> Result<LabelSelector> {
        let mut requirements = Vec::new();
        for term in split_top_level(text) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            requirements.push(parse_label_term(term)?);
        }
        Ok(LabelSelector { requirements })
    }

    /// True when the selector has no requirement.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// True when `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|req| {
            let value = labels.get(&req.key);
            match &req.op {
                LabelOp::In(values) => value.is_some_and(|v| values.contains(v)),
                LabelOp::NotIn(values) => value.is_none_or(|v| !values.contains(v)),
                LabelOp::Exists => value.is_some(),
                LabelOp::DoesNotExist => value.is_none(),
                LabelOp::GreaterThan(n) => value.and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v > *n),
                LabelOp::LessThan(n) => value.and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v < *n),
            }
        })
    }
}

/// `metav1.LabelSelectorAsSelector` over the API type: every `matchLabels` pair is an `In` of
/// one value, every expression its operator. `None` for an operator upstream refuses
/// (`"x" is not a valid label selector operator`), which callers treat as selecting nothing.
/// An absent or empty selector selects everything here; callers that must refuse it
/// (`LabelSelectorAsSelector` of nil selects nothing) check emptiness first.
pub fn from_api(selector: &metav1::LabelSelector) -> Option<LabelSelector> {
    let labels = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(key, value)| LabelRequirement { key: key.clone(), op: LabelOp::In(vec![value.clone()]) });
    let mut requirements: Vec<LabelRequirement> = labels.collect();
    for expression in selector.match_expressions.iter().flatten() {
        let values = expression.values.clone().unwrap_or_default();
        let op = match expression.operator.as_str() {
            "In" => LabelOp::In(values),
            "NotIn" => LabelOp::NotIn(values),
            "Exists" => LabelOp::Exists,
            "DoesNotExist" => LabelOp::DoesNotExist,
            _ => return None,
        };
        requirements.push(LabelRequirement { key: expression.key.clone(), op });
    }
    Some(LabelSelector { requirements })
}

/// `metav1.LabelSelectorAsSelector(selector).Matches(labels)` for the API type; an invalid
/// operator matches nothing.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
/// use lab_runner_k8s::selector::api_selector_matches;
/// use std::collections::BTreeMap;
/// let selector = LabelSelector { match_labels: Some(BTreeMap::from([("app".into(), "web".into())])), ..Default::default() };
/// assert!(api_selector_matches(&selector, &BTreeMap::from([("app".into(), "web".into())])));
/// assert!(!api_selector_matches(&selector, &BTreeMap::new()));
/// ```
pub fn api_selector_matches(selector: &metav1::LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    from_api(selector).is_some_and(|selector| selector.matches(labels))
}

/// [`api_selector_matches`] over JSON as stored: the selector (`spec.selector`) and a label map.
/// A selector that is not a `LabelSelector` at all (the schema check refuses those before
/// admission) matches nothing; non-string label values are ignored as in [`labels_of`].
pub fn json_selector_matches(selector: &Value, labels: Option<&serde_json::Map<String, Value>>) -> bool {
    let Ok(selector) = serde_json::from_value::<metav1::LabelSelector>(selector.clone()) else {
        return false;
    };
    let labels: BTreeMap<String, String> = labels
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect();
    api_selector_matches(&selector, &labels)
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 316
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63 && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn parse_label_term(term: &str) -> Result<LabelRequirement> {
    if let Some(key) = term.strip_prefix('!') {
        let key = key.trim();
        if !valid_key(key) {
            return Err(Error::LabelSyntax(format!("invalid label key {key:?}")));
        }
        return Ok(LabelRequirement { key: key.to_string(), op: LabelOp::DoesNotExist });
    }
    // Operators in the order that avoids prefix clashes: `!=` and `==` before `=`.
    for (symbol, negated) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((key, value)) = term.split_once(symbol) {
            let (key, value) = (key.trim(), value.trim());
            check_key_value(key, value)?;
            let values = vec![value.to_string()];
            let op = if negated { LabelOp::NotIn(values) } else { LabelOp::In(values) };
            return Ok(LabelRequirement { key: key.to_string(), op });
        }
    }
    for (symbol, greater) in [(">", true), ("<", false)] {
        if let Some((key, value)) = term.split_once(symbol) {
            let (key, value) = (key.trim(), value.trim());
            let number: i64 = value.parse().map_err(|_| {
                Error::LabelSyntax(format!("for 'Gt', 'Lt' operators, the value must be an integer: {value}"))
            })?;
            check_key_value(key, "")?;
            let op = if greater { LabelOp::GreaterThan(number) } else { LabelOp::LessThan(number) };
            return Ok(LabelRequirement { key: key.to_string(), op });
        }
    }
    let mut words = term.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or_default().trim();
    let rest = words.next().unwrap_or_default().trim();
    if rest.is_empty() {
        if !valid_key(key) {
            return Err(Error::LabelSyntax(format!("invalid label key {key:?}")));
        }
        return Ok(LabelRequirement { key: key.to_string(), op: LabelOp::Exists });
    }
    let (negated, set) = if let Some(set) = rest.strip_prefix("notin") {
        (true, set)
    } else if let Some(set) = rest.strip_prefix("in") {
        (false, set)
    } else {
        let found = rest.split_whitespace().next().unwrap_or_default();
        return Err(Error::LabelSyntax(format!("found '{found}', expected: '=', '!=', '==', 'in', notin'")));
    };
    let set = set.trim();
    let inner = set
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| Error::LabelSyntax(format!("found '{set}', expected: '('")))?;
    let values: Vec<String> =
        inner.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
    for value in &values {
        check_key_value(key, value)?;
    }
    if values.is_empty() {
        return Err(Error::LabelSyntax("for 'in', 'notin' operators, values set can't be empty".into()));
    }
    let op = if negated { LabelOp::NotIn(values) } else { LabelOp::In(values) };
    Ok(LabelRequirement { key: key.to_string(), op })
}

fn check_key_value(key: &str, value: &str) -> Result<()> {
    if !valid_key(key) {
        return Err(Error::LabelSyntax(format!("invalid label key {key:?}")));
    }
    if !valid_value(value) {
        return Err(Error::LabelSyntax(format!("invalid label value: {value:?}")));
    }
    Ok(())
}

/// How a field term compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldOp {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

/// One term of a field selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// Field path, e.g. `spec.nodeName`.
    pub field: String,
    /// Comparison.
    pub op: FieldOp,
    /// Value (unescaped).
    pub value: String,
}

/// A parsed field selector: all terms must hold. Empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// The terms, ANDed.
    pub requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` query parameter (`\,`, `\=` and `\\` escape as upstream).
    ///
    /// ```
    /// use lab_runner_k8s::selector::FieldSelector;
    /// let sel = FieldSelector::parse("spec.nodeName=node-a,status.phase!=Failed").unwrap();
    /// assert_eq!(sel.requirements.len(), 2);
    /// ```
    pub fn parse(text: &str) -> Result<FieldSelector> {
        let mut requirements = Vec::new();
        for term in split_unescaped(text, ',') {
            if term.is_empty() {
                continue;
            }
            let (field, op, value) = if let Some(at) = find_unescaped(&term, "!=") {
                (&term[..at], FieldOp::NotEquals, &term[at + 2..])
            } else if let Some(at) = find_unescaped(&term, "==") {
                (&term[..at], FieldOp::Equals, &term[at + 2..])
            } else if let Some(at) = find_unescaped(&term, "=") {
                (&term[..at], FieldOp::Equals, &term[at + 1..])
            } else {
                return Err(Error::FieldSyntax(text.to_string(), term.clone()));
            };
            requirements.push(FieldRequirement { field: field.to_string(), op, value: unescape(value) });
        }
        Ok(FieldSelector { requirements })
    }

    /// True when the selector has no term.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Checks every field is one of `supported`, the kind's selectable fields (`field label not
    /// supported: X`).
    pub fn check_supported(&self, supported: &[&str]) -> Result<()> {
        match self.requirements.iter().find(|req| !supported.contains(&req.field.as_str())) {
            Some(req) => Err(Error::FieldNotSupported(req.field.clone())),
            None => Ok(()),
        }
    }

    /// True when `fields` (an object's selectable fields) satisfy every term.
    pub fn matches(&self, fields: &Fields) -> bool {
        self.requirements.iter().all(|req| {
            let value = fields.get(&req.field).unwrap_or("");
            match req.op {
                FieldOp::Equals => value == req.value,
                FieldOp::NotEquals => value != req.value,
            }
        })
    }
}

fn split_unescaped(text: &str, separator: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            parts.last_mut().expect("one part").extend(['\\', c]);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == separator {
            parts.push(String::new());
        } else {
            parts.last_mut().expect("one part").push(c);
        }
    }
    parts
}

fn find_unescaped(text: &str, needle: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if text[i..].starts_with(needle) {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// An object's selectable fields and their string values (upstream's `fields.Set`). Compact, as
/// the simulator keeps one beside every stored object (66,000 Events at cluster scale, issue
/// #17): the names are the kind's static list and the values share one allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fields {
    /// The kind's field names; `metadata.namespace`, when the list lacks it, is the value after
    /// the last.
    names: &'static [&'static str],
    /// The values one after another: value `i` ends at `ends[i]`.
    text: Box<str>,
    ends: [u32; MAX_FIELDS],
}

/// The most fields a kind may have (Events: 13), plus `metadata.namespace`.
pub const MAX_FIELDS: usize = 14;

impl Default for Fields {
    fn default() -> Self {
        Fields { names: &[], text: Box::from(""), ends: [0; MAX_FIELDS] }
    }
}

impl Fields {
    /// The fields `names` (a kind's list, fewer than [`MAX_FIELDS`]) and `metadata.namespace`,
    /// each valued by `value`.
    ///
    /// ```
    /// use lab_runner_k8s::selector::{Fields, field_text};
    /// let pod = serde_json::json!({"status": {"phase": "Running"}});
    /// let fields = Fields::new(&["spec.nodeName", "status.phase"], |name| field_text(&pod, name));
    /// assert_eq!(fields.get("status.phase"), Some("Running"));
    /// assert_eq!(fields.get("spec.nodeName"), Some(""));
    /// assert_eq!(fields.get("metadata.namespace"), Some(""));
    /// assert_eq!(fields.get("data"), None);
    /// ```
    pub fn new(names: &'static [&'static str], value: impl Fn(&str) -> String) -> Fields {
        let mut fields = Fields { names, ..Fields::default() };
        let mut text = String::new();
        let extra_namespace = (!names.contains(&"metadata.namespace")).then_some("metadata.namespace");
        for (index, name) in names.iter().copied().chain(extra_namespace).enumerate().take(MAX_FIELDS) {
            text.push_str(&value(name));
            fields.ends[index] = u32::try_from(text.len()).unwrap_or(u32::MAX);
        }
        fields.text = text.into_boxed_str();
        fields
    }

    /// The value of field `name`, if the kind has that field.
    pub fn get(&self, name: &str) -> Option<&str> {
        let index = match self.names.iter().position(|field| *field == name) {
            Some(index) => index,
            None if name == "metadata.namespace" => self.names.len(),
            None => return None,
        };
        let start = if index == 0 { 0 } else { self.ends[index - 1] as usize };
        self.text.get(start..self.ends[index] as usize)
    }

    /// Every field and its value, in the kind's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let namespace = (!self.names.contains(&"metadata.namespace")).then_some("metadata.namespace");
        self.names.iter().copied().chain(namespace).map(|name| (name, self.get(name).unwrap_or_default()))
    }
}

/// The value of the field `name` (`spec.nodeName`) of `object` as upstream renders a selectable
/// field: a missing field is `""`, booleans `true`/`false`, integers in decimal.
///
/// ```
/// use lab_runner_k8s::selector::field_text;
/// let pod = serde_json::json!({"spec": {"nodeName": "gpu-1", "hostNetwork": true}});
/// assert_eq!(field_text(&pod, "spec.nodeName"), "gpu-1");
/// assert_eq!(field_text(&pod, "spec.hostNetwork"), "true");
/// assert_eq!(field_text(&pod, "status.phase"), "");
/// ```
pub fn field_text(object: &Value, name: &str) -> String {
    let mut at = object;
    for key in name.split('.') {
        at = &at[key];
    }
    match at {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// `metav1.LabelSelectorAsSelector(..).String()` of a JSON `LabelSelector`: requirements sorted
/// by key; `""` when empty.
///
/// ```
/// use lab_runner_k8s::selector::selector_string;
/// let selector = serde_json::json!({"matchLabels": {"app": "web"},
///     "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]});
/// assert_eq!(selector_string(&selector), "app=web,tier in (a,b)");
/// ```
pub fn selector_string(selector: &Value) -> String {
    let text = |value: &Value| value.as_str().unwrap_or("").to_string();
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector["matchLabels"].as_object() {
        for (key, value) in labels {
            requirements.push((key.clone(), format!("{key}={}", text(value))));
        }
    }
    for expression in selector["matchExpressions"].as_array().into_iter().flatten() {
        let key = text(&expression["key"]);
        let mut values: Vec<String> =
            expression["values"].as_array().into_iter().flatten().map(text).collect();
        values.sort();
        let values = values.join(",");
        let requirement = match expression["operator"].as_str().unwrap_or("") {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        requirements.push((key, requirement));
    }
    requirements.sort();
    requirements.into_iter().map(|(_, r)| r).collect::<Vec<_>>().join(",")
}

/// The labels of `object` as a map (non-string values are ignored).
pub fn labels_of(object: &Value) -> BTreeMap<String, String> {
    object["metadata"]["labels"]
        .as_object()
        .map(|labels| {
            labels.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn api_selectors_match_as_label_selector_as_selector() {
        let labels = labels(&[("app", "web"), ("tier", "front")]);
        let selector = |value: serde_json::Value| {
            serde_json::from_value::<metav1::LabelSelector>(value).expect("a LabelSelector")
        };
        let cases = [
            (json!({}), true),
            (json!({"matchLabels": {"app": "web"}}), true),
            (json!({"matchLabels": {"app": "db"}}), false),
            (json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}), true),
            (json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}), false),
            (json!({"matchExpressions": [{"key": "canary", "operator": "NotIn", "values": ["x"]}]}), true),
            (json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}), true),
            (json!({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}), false),
            (json!({"matchExpressions": [{"key": "tier", "operator": "Gt", "values": ["1"]}]}), false),
            (
                json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "x", "operator": "Exists"}]}),
                false,
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(api_selector_matches(&selector(value.clone()), &labels), expected, "{value}");
            let json_labels = json!({"app": "web", "tier": "front", "n": 1});
            assert_eq!(json_selector_matches(&value, json_labels.as_object()), expected, "{value}");
        }
        assert!(!json_selector_matches(&json!({"matchLabels": ["app"]}), None));
        assert!(json_selector_matches(
            &json!({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}),
            None
        ));
    }

    #[test]
    fn label_operators_match_as_upstream() {
        let web = labels(&[("app", "web"), ("tier", "front")]);
        let cases = [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app in (web, api)", true),
            ("app notin (web)", false),
            ("missing notin (web)", true),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("app=web,tier=back", false),
            ("app in (db),tier", false),
            ("", true),
        ];
        for (text, expected) in cases {
            assert_eq!(LabelSelector::parse(text).unwrap().matches(&web), expected, "{text}");
        }
    }

    #[test]
    fn bad_label_selectors_are_errors() {
        let err = LabelSelector::parse("component not in (x)").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unable to parse requirement: found 'not', expected: '=', '!=', '==', 'in', notin'"
        );
        assert!(LabelSelector::parse("a in x").is_err());
        assert!(LabelSelector::parse("a=b c").is_err());
    }
}
