//! The observed object set: objects grouped by apiVersion and kind, and which kinds were observed.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::{
    english_display,
    i18n::{Localized, Message},
    k8s::selector::labels_of,
    lab::model::{LabelSelector, SelectorOperator, Target},
    msg,
};

/// A kind was not observed, so nothing about it can be judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The kind was never listed (no permission, API error, or the engine did not ask).
    NotObserved {
        /// apiVersion of the kind.
        api_version: String,
        /// The kind.
        kind: String,
    },
}

impl Localized for Error {
    fn message(&self) -> Message {
        match self {
            Error::NotObserved { api_version, kind } => {
                msg!("grade-not-observed", kind = format!("{api_version} {kind}"))
            }
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// apiVersion + kind, the key objects are grouped by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KindKey {
    /// `apps/v1`, `v1`, …
    pub api_version: String,
    /// `DaemonSet`, …
    pub kind: String,
}

impl KindKey {
    /// A key from its parts.
    pub fn new(api_version: &str, kind: &str) -> KindKey {
        KindKey { api_version: api_version.to_string(), kind: kind.to_string() }
    }
}

/// Objects as the engine listed them (one LIST per kind); a kind absent from the map was not
/// observed, which is different from observed with no objects.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    kinds: BTreeMap<KindKey, Vec<Value>>,
}

impl Observed {
    /// Nothing observed yet.
    pub fn new() -> Observed {
        Observed::default()
    }

    /// Every kind in `kinds` observed, with no objects: the empty cluster lint grades against.
    pub fn empty_of(kinds: impl IntoIterator<Item = KindKey>) -> Observed {
        Observed { kinds: kinds.into_iter().map(|k| (k, Vec::new())).collect() }
    }

    /// Records the result of listing a kind (replacing an earlier one).
    pub fn insert(&mut self, api_version: &str, kind: &str, objects: Vec<Value>) {
        self.kinds.insert(KindKey::new(api_version, kind), objects);
    }

    /// The objects of a kind, or `None` when the kind was not observed.
    pub fn objects(&self, api_version: &str, kind: &str) -> Option<&[Value]> {
        self.kinds.get(&KindKey::new(api_version, kind)).map(Vec::as_slice)
    }

    /// The observed kinds.
    pub fn kinds(&self) -> impl Iterator<Item = &KindKey> {
        self.kinds.keys()
    }

    /// The objects a target selects, in listing order.
    pub fn select(&self, target: &Target) -> Result<Vec<&Value>> {
        let objects = self.objects(&target.api_version, &target.kind).ok_or_else(|| Error::NotObserved {
            api_version: target.api_version.clone(),
            kind: target.kind.clone(),
        })?;
        Ok(objects.iter().filter(|object| selects(target, object)).collect())
    }
}

/// True when `target` selects `object` (namespace, name and labels all agree).
pub fn selects(target: &Target, object: &Value) -> bool {
    let metadata = object.get("metadata");
    let field = |name: &str| metadata.and_then(|m| m.get(name)).and_then(Value::as_str);
    if let Some(namespace) = &target.namespace
        && field("namespace") != Some(namespace.as_str())
    {
        return false;
    }
    if let Some(name) = &target.name
        && field("name") != Some(name.as_str())
    {
        return false;
    }
    match &target.label_selector {
        Some(selector) => selector_matches(selector, object),
        None => true,
    }
}

/// Label selector semantics as `metav1.LabelSelectorAsSelector`, through [`crate::k8s::selector`]:
/// every matchLabels pair and every expression must hold; `NotIn` and `DoesNotExist` hold when the
/// label is absent.
pub fn selector_matches(selector: &LabelSelector, object: &Value) -> bool {
    selector.to_k8s().matches(&labels_of(object))
}

/// How evidence names an object: `node gpu-2`, `daemonset lab/toolkit` in English; in Japanese
/// a node is ノード and any other object goes by its kind as Kubernetes writes it
/// (`DaemonSet lab/toolkit`), as docs/glossary.md says.
pub fn describe(object: &Value) -> Message {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("object");
    let metadata = object.get("metadata");
    let field = |name: &str| metadata.and_then(|m| m.get(name)).and_then(Value::as_str);
    let name = match (field("namespace"), field("name")) {
        (Some(namespace), Some(name)) => Some(format!("{namespace}/{name}")),
        (None, Some(name)) => Some(name.to_string()),
        _ => None,
    };
    describe_named(kind, name)
}

/// How evidence names an object of `kind` named `name` (`NAMESPACE/NAME` for a namespaced one):
/// see [`describe`].
pub fn describe_named(kind: &str, name: Option<String>) -> Message {
    let each = |en: String, ja: String| crate::i18n::Arg::EachLanguage { en, ja };
    let lower = kind.to_ascii_lowercase();
    match name {
        Some(name) if kind == "Node" => msg!("object-node", name = name),
        Some(name) => {
            msg!("object-of-kind", object = each(format!("{lower} {name}"), format!("{kind} {name}")))
        }
        None => msg!("object-unnamed", kind = each(lower, kind.to_string())),
    }
}

/// How evidence names what a target selects: `DaemonSet lab/toolkit`, `Node with labels a=b`,
/// `Pod in namespace lab`.
pub fn describe_target(target: &Target) -> Message {
    let kind = &target.kind;
    let labels = target.label_selector.as_ref().map(describe_selector);
    match (&target.namespace, &target.name, labels) {
        (Some(namespace), None, None) => msg!("target-in-namespace", kind = kind, namespace = namespace),
        (Some(namespace), None, Some(labels)) => {
            msg!("target-in-namespace-with-labels", kind = kind, namespace = namespace, labels = labels)
        }
        (namespace, name, labels) => {
            let named = match (namespace, name) {
                (Some(namespace), Some(name)) => format!("{kind} {namespace}/{name}"),
                (_, Some(name)) => format!("{kind} {name}"),
                _ => kind.clone(),
            };
            match labels {
                None => msg!("target-named", target = named),
                Some(labels) => msg!("target-with-labels", target = named, labels = labels),
            }
        }
    }
}

/// A selector as `kubectl` writes one: `a=b,c in (x,y),!d`.
pub fn describe_selector(selector: &LabelSelector) -> String {
    let mut parts: Vec<String> = selector.match_labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    for requirement in &selector.match_expressions {
        let values = requirement.values.join(",");
        parts.push(match requirement.operator {
            SelectorOperator::In => format!("{} in ({values})", requirement.key),
            SelectorOperator::NotIn => format!("{} notin ({values})", requirement.key),
            SelectorOperator::Exists => requirement.key.clone(),
            SelectorOperator::DoesNotExist => format!("!{}", requirement.key),
        });
    }
    parts.join(",")
}

/// Parses observed JSON objects of one kind into a typed object, skipping any that do not parse.
pub fn typed<T: serde::de::DeserializeOwned>(objects: &[Value]) -> Vec<T> {
    objects.iter().filter_map(|o| serde_json::from_value(o.clone()).ok()).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::k8s::testing::pod;
    use crate::lab::model::SelectorRequirement;

    fn target(namespace: Option<&str>, name: Option<&str>, selector: Option<LabelSelector>) -> Target {
        Target {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: namespace.map(Into::into),
            name: name.map(Into::into),
            label_selector: selector,
        }
    }

    #[test]
    fn selection_by_namespace_name_and_labels() {
        let mut observed = Observed::new();
        observed.insert(
            "v1",
            "Pod",
            vec![
                pod("p1").namespace("a").label("app", "x").label("tier", "gpu").json(),
                pod("p1").namespace("b").label("app", "y").json(),
            ],
        );
        assert_eq!(observed.select(&target(None, Some("p1"), None)).unwrap().len(), 2);
        assert_eq!(observed.select(&target(Some("b"), None, None)).unwrap().len(), 1);
        let selector = LabelSelector {
            match_labels: [("app".to_string(), "x".to_string())].into(),
            match_expressions: vec![SelectorRequirement {
                key: "tier".into(),
                operator: SelectorOperator::In,
                values: vec!["gpu".into(), "cpu".into()],
            }],
        };
        assert_eq!(describe_selector(&selector), "app=x,tier in (gpu,cpu)");
        let chosen = observed.select(&target(None, None, Some(selector))).unwrap();
        let shown: Vec<String> =
            chosen.iter().map(|o| describe(o).render(crate::session::Lang::En)).collect();
        assert_eq!(shown, ["pod a/p1"]);
        assert_eq!(describe(chosen[0]).render(crate::session::Lang::Ja), "Pod a/p1");
    }

    #[test]
    fn set_based_operators() {
        let requirement = |operator, values: &[&str]| LabelSelector {
            match_labels: BTreeMap::new(),
            match_expressions: vec![SelectorRequirement {
                key: "k".into(),
                operator,
                values: values.iter().map(|v| v.to_string()).collect(),
            }],
        };
        let with = json!({"metadata": {"labels": {"k": "v"}}});
        let without = json!({"metadata": {}});
        assert!(selector_matches(&requirement(SelectorOperator::NotIn, &["w"]), &with));
        assert!(!selector_matches(&requirement(SelectorOperator::NotIn, &["v"]), &with));
        assert!(selector_matches(&requirement(SelectorOperator::NotIn, &["v"]), &without));
        assert!(selector_matches(&requirement(SelectorOperator::Exists, &[]), &with));
        assert!(selector_matches(&requirement(SelectorOperator::DoesNotExist, &[]), &without));
        assert!(!selector_matches(&requirement(SelectorOperator::In, &["v"]), &without));
    }

    #[test]
    fn an_unobserved_kind_is_an_error_not_an_empty_list() {
        let observed = Observed::empty_of([KindKey::new("v1", "Node")]);
        assert!(observed.select(&target(None, None, None)).is_err());
        let nodes = Target { kind: "Node".into(), ..target(None, None, None) };
        assert!(observed.select(&nodes).unwrap().is_empty());
    }
}
