//! What each expectation can match of each kind it reads, and the narrowest LIST per kind that covers them all.
//!
//! An expectation declares, per kind, a [`Scope`]: a namespace (or every one), label
//! requirements and an object name that every object it could look at meets. A [`Plan`] merges
//! the scopes of all expectations of one kind into one scope that admits everything any of them
//! admits — the intersection of their requirements, never more — so `check` still sends one
//! request per kind, and an object a learner puts in another namespace or without a label is
//! still listed whenever some expectation could be about it. Nodes are cluster-scoped and few:
//! they are always listed whole.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::KindKey;
use crate::{
    k8s::selector::{LabelOp, LabelRequirement},
    lab::model::{Expectation, LabelSelector, ObjectRef, Target},
};

/// The objects of one kind a LIST returns: a namespace or every namespace, narrowed by label
/// requirements and an object name. The default scope is the whole kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Only objects in this namespace (the LIST's path); `None`: every namespace.
    pub namespace: Option<String>,
    /// Requirements every object meets (the LIST's `labelSelector`).
    pub labels: Vec<LabelRequirement>,
    /// Only the object of this name (the LIST's `fieldSelector=metadata.name=…`, which every
    /// kind supports upstream: `pkg/registry/generic/matcher.go` `ObjectMetaFieldsSet`).
    pub name: Option<String>,
}

impl Scope {
    /// Every object of the kind.
    pub fn whole() -> Scope {
        Scope::default()
    }

    /// Every object in `namespace` (`None`: every namespace).
    pub fn in_namespace(namespace: Option<&str>) -> Scope {
        Scope { namespace: namespace.map(str::to_string), ..Scope::default() }
    }

    /// What a matcher's target selects ([`super::observed::selects`]): its namespace, name and
    /// those label requirements the server can be asked for (a requirement whose key or value is
    /// not valid label syntax is left to grading, which still applies it).
    pub fn of_target(target: &Target) -> Scope {
        Scope {
            namespace: target.namespace.clone(),
            labels: target.label_selector.as_ref().map(pushable).unwrap_or_default(),
            name: target.name.clone(),
        }
    }

    /// One named object, as the built-in checks find it (namespace and name).
    pub fn of_ref(object: &ObjectRef) -> Scope {
        Scope { namespace: object.namespace.clone(), labels: Vec::new(), name: Some(object.name.clone()) }
    }

    /// True when this scope admits every object of the kind.
    pub fn is_whole(&self) -> bool {
        *self == Scope::default()
    }

    /// The narrowest scope admitting everything either admits: a namespace or name both share,
    /// the label requirements both have.
    pub fn union(&self, other: &Scope) -> Scope {
        let same = |a: &Option<String>, b: &Option<String>| if a == b { a.clone() } else { None };
        Scope {
            namespace: same(&self.namespace, &other.namespace),
            labels: self.labels.iter().filter(|r| other.labels.contains(r)).cloned().collect(),
            name: same(&self.name, &other.name),
        }
    }

    /// The LIST's `labelSelector`, as kubectl writes one (`app=x,tier in (a,b),!canary`).
    pub fn label_selector(&self) -> Option<String> {
        (!self.labels.is_empty()).then(|| self.labels.iter().map(render).collect::<Vec<_>>().join(","))
    }

    /// The LIST's `fieldSelector` (`metadata.name=…`, escaped as `fields.EscapeValue` does).
    pub fn field_selector(&self) -> Option<String> {
        self.name.as_ref().map(|name| {
            let escaped = name.replace('\\', "\\\\").replace(',', "\\,").replace('=', "\\=");
            format!("metadata.name={escaped}")
        })
    }

    /// Whether `object` may be one this scope admits. A field that cannot be read (not a string,
    /// labels that are not a map of strings) may hold anything, so it never rules an object out:
    /// an unreadable object is ruled out only by what can be read of it.
    pub fn may_admit(&self, object: &Value) -> bool {
        let metadata = &object["metadata"];
        let differs = |wanted: &Option<String>, field: &Value| match (wanted, field.as_str()) {
            (Some(wanted), Some(found)) => wanted != found,
            _ => false,
        };
        if differs(&self.namespace, &metadata["namespace"]) || differs(&self.name, &metadata["name"]) {
            return false;
        }
        if !metadata.is_object() {
            return true;
        }
        let labels = match &metadata["labels"] {
            Value::Null => BTreeMap::new(),
            Value::Object(map) => match map
                .iter()
                .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect::<Option<BTreeMap<_, _>>>()
            {
                Some(labels) => labels,
                None => return true,
            },
            _ => return true,
        };
        crate::k8s::selector::LabelSelector { requirements: self.labels.clone() }.matches(&labels)
    }
}

/// The requirements of `selector` the server can evaluate: valid label keys and values.
fn pushable(selector: &LabelSelector) -> Vec<LabelRequirement> {
    selector
        .to_k8s()
        .requirements
        .into_iter()
        .filter(|r| {
            valid_key(&r.key)
                && match &r.op {
                    LabelOp::In(values) | LabelOp::NotIn(values) => {
                        !values.is_empty() && values.iter().all(|v| valid_value(v))
                    }
                    LabelOp::Exists | LabelOp::DoesNotExist => true,
                    LabelOp::GreaterThan(_) | LabelOp::LessThan(_) => false,
                }
        })
        .collect()
}

/// A label name: 1–63 characters, alphanumeric at both ends, `-`, `_` and `.` between
/// (apimachinery `validation.IsQualifiedName`'s name part).
fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a name (`IsQualifiedName`).
fn valid_key(key: &str) -> bool {
    match key.split_once('/') {
        None => valid_name(key),
        Some((prefix, name)) => {
            valid_name(name)
                && !prefix.is_empty()
                && prefix.len() <= 253
                && prefix.split('.').all(|part| {
                    !part.is_empty()
                        && part.len() <= 63
                        && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                        && !part.starts_with('-')
                        && !part.ends_with('-')
                })
        }
    }
}

/// A label value: empty, or a label name (`validation.IsValidLabelValue`).
fn valid_value(value: &str) -> bool {
    value.is_empty() || valid_name(value)
}

fn render(requirement: &LabelRequirement) -> String {
    let key = &requirement.key;
    match &requirement.op {
        LabelOp::In(values) if values.len() == 1 => format!("{key}={}", values[0]),
        LabelOp::In(values) => format!("{key} in ({})", values.join(",")),
        LabelOp::NotIn(values) if values.len() == 1 => format!("{key}!={}", values[0]),
        LabelOp::NotIn(values) => format!("{key} notin ({})", values.join(",")),
        LabelOp::Exists => key.clone(),
        LabelOp::DoesNotExist => format!("!{key}"),
        LabelOp::GreaterThan(n) => format!("{key}>{n}"),
        LabelOp::LessThan(n) => format!("{key}<{n}"),
    }
}

/// What one expectation can look at, per kind it reads: its target's scope, or what a built-in
/// check reads. A check whose semantics need every object of a kind (fitting a pod file against
/// every pod's requests) reads it whole.
pub fn scopes_of(expectation: &Expectation) -> Vec<(KindKey, Scope)> {
    let key = KindKey::new;
    let node = || (key("v1", "Node"), Scope::whole());
    if let Some(target) = super::target_of(expectation) {
        return vec![(key(&target.api_version, &target.kind), Scope::of_target(target))];
    }
    match expectation {
        // The DaemonSet's own pods: `analyse_rollout` keeps those in its namespace it owns.
        Expectation::Rollout(check) => vec![
            (key("apps/v1", "DaemonSet"), Scope::of_ref(&check.target)),
            node(),
            (key("v1", "Pod"), Scope::in_namespace(check.target.namespace.as_deref())),
        ],
        Expectation::QuotaInForce(check) => {
            vec![(key("v1", "ResourceQuota"), Scope::in_namespace(Some(&check.namespace)))]
        }
        Expectation::DevicePluginConfig(check) => {
            vec![(key("v1", "ConfigMap"), Scope::of_ref(&check.config_map)), node()]
        }
        // Existing pods are judged as their target selects them; a pod file is fitted against
        // the requests of every pod on every node.
        Expectation::Schedulable(check) => {
            // A running pod is judged beside every pod bound to its node, in any namespace.
            let pods = match (&check.pods, &check.pod_file) {
                (Some(target), None) if check.want != crate::lab::model::Schedulability::Running => {
                    Scope::of_target(target)
                }
                _ => Scope::whole(),
            };
            vec![node(), (key("v1", "Pod"), pods)]
        }
        Expectation::Cel(check) => check
            .target
            .iter()
            .chain(check.targets.values())
            .map(|target| (key(&target.api_version, &target.kind), Scope::of_target(target)))
            .collect(),
        Expectation::AlertRule(check) => vec![
            (key(&check.rules.api_version, &check.rules.kind), Scope::of_target(&check.rules)),
            (key("apps/v1", "DaemonSet"), Scope::of_ref(&check.daemon_set)),
        ],
        _ => Vec::new(),
    }
}

/// One scope per kind: the LISTs (or watches) an observation makes, one request each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    kinds: BTreeMap<KindKey, Scope>,
}

impl Plan {
    /// The plan covering every expectation of `tasks`.
    pub fn for_tasks<'a>(tasks: impl IntoIterator<Item = &'a crate::lab::model::Task>) -> Plan {
        Plan::from_scopes(tasks.into_iter().flat_map(|t| &t.expect).flat_map(scopes_of))
    }

    /// Merges scopes per kind ([`Scope::union`]); nodes are always whole.
    pub fn from_scopes(scopes: impl IntoIterator<Item = (KindKey, Scope)>) -> Plan {
        let mut kinds: BTreeMap<KindKey, Scope> = BTreeMap::new();
        for (key, scope) in scopes {
            let scope = if key.kind == "Node" && key.api_version == "v1" { Scope::whole() } else { scope };
            let merged = match kinds.get(&key) {
                Some(earlier) => earlier.union(&scope),
                None => scope,
            };
            kinds.insert(key, merged);
        }
        Plan { kinds }
    }

    /// The kinds, each with its scope.
    pub fn iter(&self) -> impl Iterator<Item = (&KindKey, &Scope)> {
        self.kinds.iter()
    }

    /// The kinds listed.
    pub fn kinds(&self) -> BTreeSet<KindKey> {
        self.kinds.keys().cloned().collect()
    }

    /// The scope a kind is listed with.
    pub fn scope(&self, key: &KindKey) -> Option<&Scope> {
        self.kinds.get(key)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn requirement(key: &str, value: &str) -> LabelRequirement {
        LabelRequirement { key: key.into(), op: LabelOp::In(vec![value.into()]) }
    }

    #[test]
    fn a_union_keeps_only_what_both_scopes_require() {
        let a = Scope {
            namespace: Some("gpu-operator".into()),
            labels: vec![requirement("app", "x"), requirement("tier", "gpu")],
            name: None,
        };
        let b = Scope {
            namespace: Some("gpu-operator".into()),
            labels: vec![requirement("app", "x")],
            name: None,
        };
        assert_eq!(a.union(&b), b);
        let other = Scope::in_namespace(Some("team-b"));
        assert!(a.union(&other).is_whole(), "two namespaces in one request: every namespace");
        let named = Scope::of_ref(&ObjectRef {
            api_version: "apps/v1".into(),
            kind: "DaemonSet".into(),
            namespace: Some("gpu-operator".into()),
            name: "toolkit".into(),
        });
        assert_eq!(named.union(&named), named);
        assert_eq!(named.union(&a), Scope::in_namespace(Some("gpu-operator")));
    }

    #[test]
    fn selectors_are_written_as_the_server_parses_them() {
        let selector: LabelSelector = serde_saphyr::from_str(
            "matchLabels: {app: x}\nmatchExpressions:\n\
             - {key: tier, operator: In, values: [a, b]}\n\
             - {key: canary, operator: DoesNotExist}\n\
             - {key: bad key, operator: Exists}\n\
             - {key: zone, operator: NotIn, values: [\"not a value\"]}\n",
        )
        .unwrap();
        let target = Target {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: Some("lab".into()),
            name: Some("a,b=c".into()),
            label_selector: Some(selector),
        };
        let scope = Scope::of_target(&target);
        assert_eq!(scope.label_selector().as_deref(), Some("app=x,tier in (a,b),!canary"));
        assert_eq!(scope.field_selector().as_deref(), Some("metadata.name=a\\,b\\=c"));
        let parsed = crate::k8s::selector::LabelSelector::parse(&scope.label_selector().unwrap()).unwrap();
        assert_eq!(parsed.requirements, scope.labels);
    }

    #[test]
    fn an_unreadable_field_never_rules_an_object_out() {
        let scope = Scope {
            namespace: Some("lab".into()),
            labels: vec![requirement("app", "x")],
            name: Some("p".into()),
        };
        assert!(
            scope.may_admit(&json!({"metadata": {"namespace": "lab", "name": "p", "labels": {"app": "x"}}}))
        );
        assert!(
            !scope
                .may_admit(&json!({"metadata": {"namespace": "other", "name": "p", "labels": {"app": "x"}}}))
        );
        assert!(
            !scope.may_admit(&json!({"metadata": {"namespace": "lab", "name": "p", "labels": {"app": "y"}}}))
        );
        // No namespace to read: it may be in `lab`.
        assert!(scope.may_admit(&json!({"metadata": {"name": "p", "labels": {"app": "x"}}})));
        // Labels that are not a map of strings, a name that is not a string: it may be the one.
        assert!(scope.may_admit(&json!({"metadata": {"namespace": "lab", "name": "p", "labels": ["app"]}})));
        assert!(scope.may_admit(&json!({"metadata": {"namespace": "lab", "name": 5, "labels": {"app": 1}}})));
        assert!(scope.may_admit(&json!({"metadata": "broken"})));
        assert!(Scope::whole().may_admit(&json!({})));
    }

    #[test]
    fn nodes_are_listed_whole() {
        let plan = Plan::from_scopes([
            (KindKey::new("v1", "Node"), Scope::in_namespace(Some("x"))),
            (KindKey::new("v1", "Pod"), Scope::in_namespace(Some("x"))),
        ]);
        assert!(plan.scope(&KindKey::new("v1", "Node")).unwrap().is_whole());
        assert_eq!(plan.scope(&KindKey::new("v1", "Pod")), Some(&Scope::in_namespace(Some("x"))));
    }
}
