//! Required node affinity: `spec.nodeSelector` plus `requiredDuringSchedulingIgnoredDuringExecution`, as upstream matches them.
//!
//! Sources (Kubernetes v1.33): `staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`
//! (`GetRequiredNodeAffinity`, `RequiredNodeAffinity.Match`, `nodeSelectorTerms.Match`,
//! `nodeSelectorRequirementsAsSelector`, `nodeSelectorRequirementsAsFieldSelector`),
//! `staging/src/k8s.io/apimachinery/pkg/labels/selector.go` (`NewRequirement`, `Requirement.Matches`)
//! and `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go` (`PreFilter`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec};

/// Errors of this module: a requirement upstream cannot parse. Upstream's scheduler and
/// DaemonSet controller ignore these for backwards compatibility; the term simply never matches.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A `matchExpressions` or `matchFields` entry that `labels.NewRequirement` (or the field
    /// selector conversion) rejects; `path` is the field path upstream reports.
    #[error("{path}: {message}")]
    InvalidRequirement {
        /// Field path, e.g. `nodeSelectorTerms[0].matchExpressions[1].values`.
        path: String,
        /// Upstream's explanation.
        message: String,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The field `matchFields` may name (`metav1.ObjectNameField`).
pub const OBJECT_NAME_FIELD: &str = "metadata.name";

/// One parsed node-selector operator (`v1.NodeSelectorOperator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct LabelRequirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl LabelRequirement {
    /// `labels.Requirement.Matches`.
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Gt | Operator::Lt => {
                let Some(Ok(have)) = value.map(|v| v.parse::<i64>()) else { return false };
                let Some(Ok(want)) = self.values.first().map(|v| v.parse::<i64>()) else { return false };
                if self.operator == Operator::Gt { have > want } else { have < want }
            }
        }
    }
}

/// A `matchFields` requirement: only `In`/`NotIn` with exactly one value are accepted upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldRequirement {
    key: String,
    equal: bool,
    value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct ParsedTerm {
    match_labels: Option<Vec<LabelRequirement>>,
    match_fields: Option<Vec<FieldRequirement>>,
    errors: Vec<Error>,
}

impl ParsedTerm {
    /// `nodeSelectorTerm.match`.
    fn matches(&self, labels: &BTreeMap<String, String>, node_name: &str) -> bool {
        if !self.errors.is_empty() {
            return false;
        }
        if let Some(requirements) = &self.match_labels
            && !requirements.iter().all(|r| r.matches(labels))
        {
            return false;
        }
        // Upstream checks fields only when the node has some (`len(nodeFields) > 0`): a node
        // with an empty name has none.
        if let Some(requirements) = &self.match_fields
            && !node_name.is_empty()
            && !requirements.iter().all(|r| {
                let have = if r.key == OBJECT_NAME_FIELD { node_name } else { "" };
                (have == r.value) == r.equal
            })
        {
            return false;
        }
        true
    }
}

fn invalid(path: String, message: impl Into<String>) -> Error {
    Error::InvalidRequirement { path, message: message.into() }
}

fn is_dns1123_label_like(part: &str) -> bool {
    let bytes = part.as_bytes();
    !bytes.is_empty()
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `validation.IsQualifiedName`: `[prefix/]name`, name ≤ 63 chars of `[A-Za-z0-9_.-]` starting
/// and ending alphanumeric, prefix a DNS-1123 subdomain ≤ 253 chars.
///
/// ```
/// use lab_runner_k8s::affinity::is_qualified_name;
/// assert!(is_qualified_name("nvidia.com/device-plugin.config"));
/// assert!(!is_qualified_name("bad key"));
/// ```
pub fn is_qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if name.len() > 63 || !is_dns1123_label_like(name) || name.contains('/') {
        return false;
    }
    match prefix {
        None => true,
        Some(prefix) => {
            prefix.len() <= 253
                && prefix.split('.').all(|label| {
                    let b = label.as_bytes();
                    !b.is_empty()
                        && b.len() <= 63
                        && b[0].is_ascii_lowercase() | b[0].is_ascii_digit()
                        && b[b.len() - 1].is_ascii_lowercase() | b[b.len() - 1].is_ascii_digit()
                        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                })
        }
    }
}

/// `validation.IsValidLabelValue`: empty, or ≤ 63 chars of `[A-Za-z0-9_.-]` starting and ending
/// alphanumeric.
///
/// ```
/// use lab_runner_k8s::affinity::is_valid_label_value;
/// assert!(is_valid_label_value("ts-4") && !is_valid_label_value("ts 4"));
/// ```
pub fn is_valid_label_value(value: &str) -> bool {
    value.is_empty() || (value.len() <= 63 && is_dns1123_label_like(value))
}

/// `nodeSelectorRequirementsAsSelector` + `labels.NewRequirement` validation.
fn parse_label_requirements(
    requirements: &[NodeSelectorRequirement],
    path: &str,
) -> std::result::Result<Vec<LabelRequirement>, Vec<Error>> {
    let mut parsed = Vec::new();
    let mut errors = Vec::new();
    for (index, requirement) in requirements.iter().enumerate() {
        let at = format!("{path}[{index}]");
        let operator = match requirement.operator.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            "Gt" => Operator::Gt,
            "Lt" => Operator::Lt,
            other => {
                errors.push(invalid(format!("{at}.operator"), format!("Unsupported value: {other:?}")));
                continue;
            }
        };
        let values = requirement.values.clone().unwrap_or_default();
        let before = errors.len();
        if !is_qualified_name(&requirement.key) {
            errors.push(invalid(format!("{at}.key"), format!("Invalid value: {:?}", requirement.key)));
        }
        let values_path = format!("{at}.values");
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => errors
                .push(invalid(values_path.clone(), "for 'in', 'notin' operators, values set can't be empty")),
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => errors
                .push(invalid(values_path.clone(), "values set must be empty for exists and does not exist")),
            Operator::Gt | Operator::Lt => {
                if values.len() != 1 {
                    errors.push(invalid(
                        values_path.clone(),
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, value) in values.iter().enumerate() {
                    if value.parse::<i64>().is_err() {
                        errors.push(invalid(
                            format!("{values_path}[{i}]"),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
            _ => {}
        }
        for (i, value) in values.iter().enumerate() {
            if !is_valid_label_value(value) {
                errors.push(invalid(format!("{values_path}[{i}]"), format!("Invalid value: {value:?}")));
            }
        }
        if errors.len() == before {
            parsed.push(LabelRequirement { key: requirement.key.clone(), operator, values });
        }
    }
    if errors.is_empty() { Ok(parsed) } else { Err(errors) }
}

/// `nodeSelectorRequirementsAsFieldSelector`.
fn parse_field_requirements(
    requirements: &[NodeSelectorRequirement],
    path: &str,
) -> std::result::Result<Vec<FieldRequirement>, Vec<Error>> {
    let mut parsed = Vec::new();
    let mut errors = Vec::new();
    for (index, requirement) in requirements.iter().enumerate() {
        let at = format!("{path}[{index}]");
        let equal = match requirement.operator.as_str() {
            "In" => true,
            "NotIn" => false,
            other => {
                errors.push(invalid(format!("{at}.operator"), format!("Unsupported value: {other:?}")));
                continue;
            }
        };
        match requirement.values.as_deref().unwrap_or_default() {
            [value] => {
                parsed.push(FieldRequirement { key: requirement.key.clone(), equal, value: value.clone() })
            }
            _ => errors.push(invalid(format!("{at}.values"), "must have one element")),
        }
    }
    if errors.is_empty() { Ok(parsed) } else { Err(errors) }
}

fn is_empty_term(term: &NodeSelectorTerm) -> bool {
    term.match_expressions.as_ref().is_none_or(Vec::is_empty)
        && term.match_fields.as_ref().is_none_or(Vec::is_empty)
}

fn parse_term(term: &NodeSelectorTerm, path: &str) -> ParsedTerm {
    let mut parsed = ParsedTerm::default();
    if let Some(expressions) = term.match_expressions.as_ref().filter(|e| !e.is_empty()) {
        match parse_label_requirements(expressions, &format!("{path}.matchExpressions")) {
            Ok(requirements) => parsed.match_labels = Some(requirements),
            Err(errors) => parsed.errors.extend(errors),
        }
    }
    if let Some(fields) = term.match_fields.as_ref().filter(|f| !f.is_empty()) {
        match parse_field_requirements(fields, &format!("{path}.matchFields")) {
            Ok(requirements) => parsed.match_fields = Some(requirements),
            Err(errors) => parsed.errors.extend(errors),
        }
    }
    parsed
}

/// A parsed `NodeSelector` (`nodeaffinity.NewLazyErrorNodeSelector`): terms are ORed, the
/// requirements inside a term ANDed; empty terms are dropped, so a selector whose terms are all
/// empty matches no node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedNodeSelector {
    terms: Vec<ParsedTerm>,
}

impl ParsedNodeSelector {
    /// Parses a node selector; parse problems are kept and make their term never match.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::{Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
    /// use lab_runner_k8s::affinity::ParsedNodeSelector;
    /// let selector = NodeSelector { node_selector_terms: vec![NodeSelectorTerm {
    ///     match_expressions: Some(vec![NodeSelectorRequirement {
    ///         key: "nvidia.com/gpu.present".into(), operator: "Exists".into(), values: None }]),
    ///     match_fields: None }] };
    /// let parsed = ParsedNodeSelector::new(&selector);
    /// assert!(!parsed.matches(&Node::default()));
    /// ```
    pub fn new(selector: &NodeSelector) -> Self {
        let terms = selector
            .node_selector_terms
            .iter()
            .enumerate()
            .filter(|(_, term)| !is_empty_term(term))
            .map(|(index, term)| parse_term(term, &format!("nodeSelectorTerms[{index}]")))
            .collect();
        ParsedNodeSelector { terms }
    }

    /// The parse errors of every term, in term order.
    pub fn errors(&self) -> Vec<Error> {
        self.terms.iter().flat_map(|term| term.errors.iter().cloned()).collect()
    }

    /// Whether some term matches the node's labels and name.
    pub fn matches(&self, node: &Node) -> bool {
        let empty = BTreeMap::new();
        let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
        let name = node.metadata.name.as_deref().unwrap_or("");
        self.terms.iter().any(|term| term.matches(labels, name))
    }
}

/// Whether a node selector (e.g. a pod's required node affinity) matches a node.
///
/// ```
/// use k8s_openapi::api::core::v1::{Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// use lab_runner_k8s::affinity::node_selector_matches;
/// let node = Node { metadata: ObjectMeta { name: Some("gpu-1".into()), ..Default::default() },
///                   ..Default::default() };
/// let pinned = NodeSelector { node_selector_terms: vec![NodeSelectorTerm {
///     match_fields: Some(vec![NodeSelectorRequirement { key: "metadata.name".into(),
///         operator: "In".into(), values: Some(vec!["gpu-1".into()]) }]),
///     match_expressions: None }] };
/// assert!(node_selector_matches(&pinned, &node));
/// ```
pub fn node_selector_matches(selector: &NodeSelector, node: &Node) -> bool {
    ParsedNodeSelector::new(selector).matches(node)
}

/// A pod's required node affinity (`nodeaffinity.GetRequiredNodeAffinity`): its
/// `spec.nodeSelector` (every key must equal) AND its
/// `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequiredNodeAffinity {
    node_selector: Option<BTreeMap<String, String>>,
    required: Option<ParsedNodeSelector>,
}

impl RequiredNodeAffinity {
    /// Builds it from a pod spec (a pod's, or a DaemonSet template's).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use k8s_openapi::api::core::v1::{Node, PodSpec};
    /// use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use lab_runner_k8s::affinity::RequiredNodeAffinity;
    /// let spec = PodSpec { node_selector: Some(BTreeMap::from([("gpu".into(), "true".into())])),
    ///                      ..Default::default() };
    /// let node = Node { metadata: ObjectMeta {
    ///     labels: Some(BTreeMap::from([("gpu".into(), "true".into())])), ..Default::default() },
    ///     ..Default::default() };
    /// assert!(RequiredNodeAffinity::of_pod_spec(&spec).matches(&node));
    /// ```
    pub fn of_pod_spec(spec: &PodSpec) -> Self {
        let node_selector = spec.node_selector.clone().filter(|selector| !selector.is_empty());
        let required = spec
            .affinity
            .as_ref()
            .and_then(|affinity| affinity.node_affinity.as_ref())
            .and_then(|node_affinity| {
                node_affinity.required_during_scheduling_ignored_during_execution.as_ref()
            })
            .map(ParsedNodeSelector::new);
        RequiredNodeAffinity { node_selector, required }
    }

    /// Whether the pod has any required node constraint at all.
    pub fn is_empty(&self) -> bool {
        self.node_selector.is_none() && self.required.is_none()
    }

    /// Parse errors of the required affinity (ignored by matching, as upstream).
    pub fn errors(&self) -> Vec<Error> {
        self.required.as_ref().map(ParsedNodeSelector::errors).unwrap_or_default()
    }

    /// `RequiredNodeAffinity.Match`.
    pub fn matches(&self, node: &Node) -> bool {
        if let Some(selector) = &self.node_selector {
            let empty = BTreeMap::new();
            let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
            if !selector.iter().all(|(key, value)| labels.get(key) == Some(value)) {
                return false;
            }
        }
        self.required.as_ref().is_none_or(|required| required.matches(node))
    }
}

/// Which nodes the NodeAffinity PreFilter lets the scheduler evaluate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeNameRestriction {
    /// Every node is evaluated.
    AllNodes,
    /// Only these node names (every term pins `metadata.name In [...]`); the other nodes are
    /// reported as `node(s) didn't satisfy plugin(s) [NodeAffinity]`.
    Only(BTreeSet<String>),
    /// The terms pin conflicting names: PreFilter rejects the pod with
    /// `pod affinity terms conflict` (`errReasonConflict`).
    Conflict,
}

/// The NodeAffinity plugin's PreFilter result (`node_affinity.go` `PreFilter`): when every
/// required term has `matchFields metadata.name In`, only the union over terms (of the
/// intersection inside each term) of those names is evaluated. This is how a DaemonSet pod,
/// pinned by the controller, is only ever checked against its own node.
///
/// ```
/// use k8s_openapi::api::core::v1::PodSpec;
/// use lab_runner_k8s::affinity::{node_name_restriction, NodeNameRestriction};
/// assert_eq!(node_name_restriction(&PodSpec::default()), NodeNameRestriction::AllNodes);
/// ```
pub fn node_name_restriction(spec: &PodSpec) -> NodeNameRestriction {
    let Some(terms) = spec
        .affinity
        .as_ref()
        .and_then(|affinity| affinity.node_affinity.as_ref())
        .and_then(|node_affinity| node_affinity.required_during_scheduling_ignored_during_execution.as_ref())
        .map(|selector| &selector.node_selector_terms)
    else {
        return NodeNameRestriction::AllNodes;
    };
    if terms.is_empty() {
        return NodeNameRestriction::AllNodes;
    }
    let mut names: BTreeSet<String> = BTreeSet::new();
    for term in terms {
        let mut term_names: Option<BTreeSet<String>> = None;
        for requirement in term.match_fields.iter().flatten() {
            if requirement.key == OBJECT_NAME_FIELD && requirement.operator == "In" {
                let values: BTreeSet<String> = requirement.values.iter().flatten().cloned().collect();
                term_names = Some(match term_names {
                    None => values,
                    Some(previous) => previous.intersection(&values).cloned().collect(),
                });
            }
        }
        match term_names {
            // A term without a name requirement admits every node: the terms are ORed.
            None => return NodeNameRestriction::AllNodes,
            Some(term_names) => names.extend(term_names),
        }
    }
    if names.is_empty() { NodeNameRestriction::Conflict } else { NodeNameRestriction::Only(names) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::node;
    use k8s_openapi::api::core::v1::{Affinity, NodeAffinity};

    fn req(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: if values.is_empty() {
                None
            } else {
                Some(values.iter().map(|v| v.to_string()).collect())
            },
        }
    }

    fn term(
        expressions: Vec<NodeSelectorRequirement>,
        fields: Vec<NodeSelectorRequirement>,
    ) -> NodeSelectorTerm {
        NodeSelectorTerm {
            match_expressions: if expressions.is_empty() { None } else { Some(expressions) },
            match_fields: if fields.is_empty() { None } else { Some(fields) },
        }
    }

    fn selector(terms: Vec<NodeSelectorTerm>) -> NodeSelector {
        NodeSelector { node_selector_terms: terms }
    }

    fn spec_with(node_selector: &[(&str, &str)], required: Option<NodeSelector>) -> PodSpec {
        PodSpec {
            node_selector: if node_selector.is_empty() {
                None
            } else {
                Some(node_selector.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
            },
            affinity: required.map(|required| Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(required),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn operators_match_as_upstream_requirements() {
        let gpu = node("gpu-1").label("gpu", "a100").label("gpus", "8").label("zone", "z1").build();
        let cases = [
            (req("gpu", "In", &["a100", "h100"]), true),
            (req("gpu", "In", &["h100"]), false),
            (req("missing", "In", &["x"]), false),
            (req("gpu", "NotIn", &["h100"]), true),
            (req("gpu", "NotIn", &["a100"]), false),
            (req("missing", "NotIn", &["x"]), true),
            (req("gpu", "Exists", &[]), true),
            (req("missing", "Exists", &[]), false),
            (req("gpu", "DoesNotExist", &[]), false),
            (req("missing", "DoesNotExist", &[]), true),
            (req("gpus", "Gt", &["4"]), true),
            (req("gpus", "Gt", &["8"]), false),
            (req("gpus", "Lt", &["9"]), true),
            (req("gpus", "Lt", &["8"]), false),
            (req("missing", "Gt", &["1"]), false),
            // A non-integer label value never satisfies Gt/Lt.
            (req("gpu", "Gt", &["1"]), false),
        ];
        for (requirement, expected) in cases {
            let s = selector(vec![term(vec![requirement.clone()], vec![])]);
            assert_eq!(node_selector_matches(&s, &gpu), expected, "{requirement:?}");
        }
    }

    #[test]
    fn expressions_are_anded_and_terms_ored() {
        let gpu = node("gpu-1").label("gpu", "a100").label("zone", "z1").build();
        let both =
            selector(vec![term(vec![req("gpu", "In", &["a100"]), req("zone", "In", &["z2"])], vec![])]);
        assert!(!node_selector_matches(&both, &gpu));
        let either = selector(vec![
            term(vec![req("zone", "In", &["z2"])], vec![]),
            term(vec![req("gpu", "In", &["a100"])], vec![]),
        ]);
        assert!(node_selector_matches(&either, &gpu));
    }

    #[test]
    fn match_fields_on_metadata_name() {
        let gpu = node("gpu-1").build();
        let pinned = selector(vec![term(vec![], vec![req("metadata.name", "In", &["gpu-1"])])]);
        assert!(node_selector_matches(&pinned, &gpu));
        assert!(!node_selector_matches(&pinned, &node("gpu-2").build()));
        let not = selector(vec![term(vec![], vec![req("metadata.name", "NotIn", &["gpu-1"])])]);
        assert!(!node_selector_matches(&not, &gpu));
        assert!(node_selector_matches(&not, &node("cpu-1").build()));
        // Field requirements need exactly one value; otherwise the term never matches.
        let two = selector(vec![term(vec![], vec![req("metadata.name", "In", &["gpu-1", "gpu-2"])])]);
        assert!(!node_selector_matches(&two, &gpu));
        assert_eq!(ParsedNodeSelector::new(&two).errors().len(), 1);
        // Expressions and fields in one term are ANDed.
        let both = selector(vec![term(
            vec![req("gpu", "Exists", &[])],
            vec![req("metadata.name", "In", &["gpu-1"])],
        )]);
        assert!(!node_selector_matches(&both, &gpu));
    }

    #[test]
    fn empty_and_invalid_terms_match_nothing() {
        let any = node("n").label("a", "b").build();
        assert!(!node_selector_matches(&selector(vec![]), &any));
        assert!(!node_selector_matches(&selector(vec![term(vec![], vec![])]), &any));
        let bad_ops = [
            req("a", "Equals", &["b"]),
            req("a", "In", &[]),
            req("a", "Exists", &["b"]),
            req("a", "Gt", &["x"]),
            req("a", "Gt", &["1", "2"]),
            req("bad key!", "Exists", &[]),
            req("a", "In", &["bad value!"]),
        ];
        for bad in bad_ops {
            let s = selector(vec![term(vec![bad.clone()], vec![])]);
            assert!(!node_selector_matches(&s, &any), "{bad:?}");
            assert!(!ParsedNodeSelector::new(&s).errors().is_empty(), "{bad:?}");
        }
        // An invalid term does not spoil a valid one.
        let s = selector(vec![
            term(vec![req("a", "Gt", &["x"])], vec![]),
            term(vec![req("a", "In", &["b"])], vec![]),
        ]);
        assert!(node_selector_matches(&s, &any));
    }

    #[test]
    fn error_text_names_the_path() {
        let s = selector(vec![term(vec![req("a", "In", &[])], vec![])]);
        let errors = ParsedNodeSelector::new(&s).errors();
        assert_eq!(
            errors[0].to_string(),
            "nodeSelectorTerms[0].matchExpressions[0].values: for 'in', 'notin' operators, values set can't be empty"
        );
    }

    #[test]
    fn node_selector_and_affinity_are_both_required() {
        let gpu = node("gpu-1").label("nvidia.com/gpu.present", "true").label("zone", "z1").build();
        let only_selector = spec_with(&[("nvidia.com/gpu.present", "true")], None);
        assert!(RequiredNodeAffinity::of_pod_spec(&only_selector).matches(&gpu));
        let wrong_value = spec_with(&[("nvidia.com/gpu.present", "false")], None);
        assert!(!RequiredNodeAffinity::of_pod_spec(&wrong_value).matches(&gpu));
        let selector_ok_affinity_no = spec_with(
            &[("nvidia.com/gpu.present", "true")],
            Some(selector(vec![term(vec![req("zone", "In", &["z2"])], vec![])])),
        );
        assert!(!RequiredNodeAffinity::of_pod_spec(&selector_ok_affinity_no).matches(&gpu));
        let none = spec_with(&[], None);
        let required = RequiredNodeAffinity::of_pod_spec(&none);
        assert!(required.is_empty());
        assert!(required.matches(&gpu));
        assert!(!RequiredNodeAffinity::of_pod_spec(&only_selector).is_empty());
    }

    #[test]
    fn qualified_names_and_label_values() {
        for good in ["a", "nvidia.com/gpu.present", "node-role.kubernetes.io/control-plane", "A_b.c-D"] {
            assert!(is_qualified_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "Upper.Case/x", "a/b/c", "/a", &"x".repeat(64)] {
            assert!(!is_qualified_name(bad), "{bad}");
        }
        assert!(is_valid_label_value(""));
        assert!(is_valid_label_value("A100-SXM4-40GB"));
        assert!(!is_valid_label_value("has space"));
    }

    #[test]
    fn prefilter_restriction_from_match_fields() {
        let pinned = |names: &[&str]| term(vec![], vec![req("metadata.name", "In", names)]);
        let spec = spec_with(&[], Some(selector(vec![pinned(&["gpu-1"])])));
        assert_eq!(
            node_name_restriction(&spec),
            NodeNameRestriction::Only(BTreeSet::from(["gpu-1".to_string()]))
        );
        let spec = spec_with(&[], Some(selector(vec![pinned(&["gpu-1"]), pinned(&["gpu-2"])])));
        assert_eq!(
            node_name_restriction(&spec),
            NodeNameRestriction::Only(BTreeSet::from(["gpu-1".to_string(), "gpu-2".to_string()]))
        );
        let conflicting =
            term(vec![], vec![req("metadata.name", "In", &["a"]), req("metadata.name", "In", &["b"])]);
        let spec = spec_with(&[], Some(selector(vec![conflicting])));
        assert_eq!(node_name_restriction(&spec), NodeNameRestriction::Conflict);
        let unpinned =
            spec_with(&[], Some(selector(vec![pinned(&["a"]), term(vec![req("x", "Exists", &[])], vec![])])));
        assert_eq!(node_name_restriction(&unpinned), NodeNameRestriction::AllNodes);
        assert_eq!(node_name_restriction(&spec_with(&[("a", "b")], None)), NodeNameRestriction::AllNodes);
    }
}
