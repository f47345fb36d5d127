//! The kinds the simulator serves: one strategy per kind, and the one table that lists them.
//!
//! As kube-apiserver has one strategy per resource (`pkg/registry/<group>/<resource>/strategy.go`),
//! each built-in kind is one file, `kinds/<group>/<kind>.rs` (the core group as `core`), holding
//! its row of [`BUILT_IN`] (where it is served: group, version, plural, scope, short names,
//! verbs, subresources) and its [`Strategy`]: API defaults, create and update
//! validation with its immutable fields, what a create or an update resets, its printer columns
//! and its selectable fields. The generic registry (`sim::registry`) drives every write through
//! the strategy of its kind; discovery, routing, tables, OpenAPI and the store read the same
//! table. A kind's OpenAPI schema is generated from its k8s-openapi type in `k8s::schema`
//! (lint resolves a lab's paths against it without a simulator). Custom resources are served
//! from their CRD (`apiextensions::customresource`).
//!
//! Nothing here reads or writes the store: a strategy is a function of the objects it is given.
//! Adding a kind: docs/simulator.md, "Adding a kind, step by step".

use std::{collections::HashMap, sync::OnceLock};

use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value};

pub mod apiextensions;
pub mod apps;
pub mod authentication;
pub mod authorization;
pub mod autoscaling;
pub mod batch;
pub mod coordination;
pub mod core;
pub mod events;
pub mod field;
pub mod node;
pub mod objectmeta;
pub mod policy;
pub mod printer;
pub mod rbac;
pub mod scheduling;

pub use field::Cause;
pub use objectmeta::NameRule;

/// Whether objects of a kind live in a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `/api/v1/namespaces/{ns}/pods/{name}`.
    Namespaced,
    /// `/api/v1/nodes/{name}`.
    Cluster,
}

/// Every verb, as `kubectl api-resources -o wide` lists them for most kinds.
pub const ALL_VERBS: &[&str] =
    &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
/// The review kinds (SelfSubjectAccessReview, …): create only.
pub const CREATE_ONLY: &[&str] = &["create"];

/// One built-in kind: where it is served and how it behaves. Values are upstream's as
/// `kubectl api-resources -o wide` prints them on a 1.33 cluster.
pub struct Kind {
    /// API group; `""` for the core group.
    pub group: &'static str,
    /// API version, e.g. `v1`.
    pub version: &'static str,
    /// Kind, e.g. `StatefulSet`.
    pub kind: &'static str,
    /// Plural resource name used in URLs, e.g. `statefulsets`.
    pub plural: &'static str,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// Short names kubectl accepts (`sts`).
    pub short_names: &'static [&'static str],
    /// Categories (`all`).
    pub categories: &'static [&'static str],
    /// Verbs on the collection and objects.
    pub verbs: &'static [&'static str],
    /// Subresources served, e.g. `status`, `scale`.
    pub subresources: &'static [&'static str],
    /// The kind's registry strategy.
    pub strategy: &'static dyn Strategy,
}

impl Kind {
    /// `statefulsets.apps`, or `pods` for the core group.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kind").field("group", &self.group).field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// A kind's behaviour in the registry, each method one step of upstream's strategy interfaces
/// (`rest.RESTCreateStrategy`, `rest.RESTUpdateStrategy`, `rest.RESTDeleteStrategy`, the
/// table convertor and the field label conversion). Every method has the behaviour of a kind
/// with nothing special, so a kind implements only what it has.
///
/// The registry's order (`sim::registry`): on create, [`Strategy::decode_defaults`],
/// [`Strategy::reset_status_for_create`], quantity decoding ([`Strategy::typed_quantities`]),
/// [`Strategy::prepare_for_create`], the mutating admission plugins, [`apply_defaults`],
/// ObjectMeta validation then [`Strategy::validate`], the validating plugins; on update,
/// [`Strategy::decode_defaults`], quantity decoding, [`apply_defaults`], validation with the
/// stored object, then [`Strategy::prepare_for_update`] and the generation bump
/// ([`Strategy::tracks_generation`]).
pub trait Strategy: Sync {
    /// Which rule the kind's names follow (its `ValidateXName`).
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// Whether objects carry `metadata.generation`, bumped when [`Strategy::generation_relevant`]
    /// changes.
    fn tracks_generation(&self) -> bool {
        false
    }

    /// The part of the object whose change bumps `generation`: the `spec`.
    fn generation_relevant(&self, object: &Value) -> Value {
        object.get("spec").cloned().unwrap_or(Value::Null)
    }

    /// Whether the kind's quantity maps (`requests`, `limits`, `hard`, …) hold
    /// `resource.Quantity` values, so that JSON numbers there become quantity strings as decoding
    /// into the Go type makes them (built-in kinds; a custom resource's schema says otherwise).
    fn typed_quantities(&self) -> bool {
        true
    }

    /// Defaults applied as the object is decoded, before the registry looks at it, on create and
    /// on update (upstream's `SetDefaults_*` run at decode).
    fn decode_defaults(&self, _object: &mut Value) {}

    /// `PrepareForCreate`'s status reset: a kind with a status subresource starts without one.
    fn reset_status_for_create(&self, object: &mut Value, has_status: bool) {
        if has_status && let Some(map) = object.as_object_mut() {
            map.remove("status");
        }
    }

    /// `PrepareForCreate`'s other writes (a generated selector, a condition), after quantity
    /// normalisation and before admission.
    fn prepare_for_create(&self, _object: &mut Value, _now: Timestamp) {}

    /// `PrepareForUpdate`'s writes that depend on the validated object and the stored one `old`.
    fn prepare_for_update(&self, _object: &mut Value, _old: &Value) {}

    /// The API defaults (`SetDefaults_<Kind>`), on create and on update ([`apply_defaults`]).
    fn defaults(&self, _object: &mut Value) {}

    /// The quantities the kind holds in the spelling the API server stores (`cpu: "0.5"` is
    /// stored as `500m`, numbers become strings), after [`Strategy::defaults`] and for a
    /// server-side apply configuration.
    fn canonicalize_quantities(&self, _object: &mut Value) {}

    /// `Validate` (`old` is `None`) and `ValidateUpdate` (`old` is the stored object): the
    /// kind's 422 causes after ObjectMeta's, immutable fields included; empty when valid.
    fn validate(&self, _object: &Value, _old: Option<&Value>) -> Vec<Cause> {
        Vec::new()
    }

    /// The grace period a delete of `object` gets (`CheckGracefulDelete`), given the one the
    /// request asked for; `None` for a kind deleted at once.
    fn grace_period(&self, _object: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// Whether a delete that removes the object at once answers with the object (the store's
    /// `ReturnDeletedObject: true`) rather than a `Status` with `status: Success` and `details`
    /// (`Store.finalizeDelete`, k8s.io/apiserver/pkg/registry/generic/registry/store.go). A delete
    /// left pending (grace period, finalizers) answers with the object either way.
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// The `Table` columns and row printer (`pkg/printers/internalversion/printers.go`).
    fn printer(&self) -> &'static printer::Printer {
        &printer::DEFAULT
    }

    /// What deleting an object of the kind does beyond the generic store's delete.
    fn deletion(&self) -> DeletionRule {
        DeletionRule::Ordinary
    }

    /// Whether controllers claim objects of the kind by selector (`ControllerRefManager`: a
    /// DaemonSet or StatefulSet its pods, a Deployment its ReplicaSets), so that the store
    /// indexes the ones without a controller as orphans beside the controlled ones.
    fn claimed_by_selector(&self) -> bool {
        false
    }

    /// How ResourceQuota charges a create of the kind (`pkg/quota/v1/evaluator/core/registry.go`
    /// and the generic object-count evaluator).
    fn quota(&self) -> QuotaCharge {
        QuotaCharge::ObjectCount { legacy_name: false }
    }

    /// The review the kind is, for the create-only kinds answered and never stored.
    fn review(&self) -> Option<Review> {
        None
    }

    /// For a read-only kind computed by the control plane at each request and never stored
    /// (`componentstatuses`), how its objects are answered; `None` for a stored kind.
    fn computed(&self) -> Option<&'static Computed> {
        None
    }

    /// The fields `--field-selector` can select on (`GetAttrs`/`ToSelectableFields`).
    fn selectable_fields(&self) -> &'static [&'static str] {
        GENERIC_FIELDS
    }

    /// The value of the selectable field `name` of `object`, as upstream renders it.
    fn selectable_value(&self, object: &Value, name: &str) -> String {
        crate::k8s::selector::field_text(object, name)
    }
}

/// What a delete does besides the generic store's (`rest.RESTDeleteStrategy` and the kind's
/// own finalization).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletionRule {
    /// The generic store's delete: grace period, finalizers, propagation.
    Ordinary,
    /// A namespace: it turns `Terminating`, everything in it is deleted (the namespace
    /// controller's work, `pkg/controller/namespace/deletion`), and it goes once it is empty
    /// and its finalizers are done; never at once by the generic delete.
    EmptiesNamespace,
}

/// How ResourceQuota charges objects of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaCharge {
    /// The pod evaluator (`pkg/quota/v1/evaluator/core/pods.go`): compute resources and `pods`.
    Pods,
    /// The generic object count `count/<resource>`, and with `legacy_name` also the bare
    /// resource name (`configmaps`), as core's registry lists them.
    ObjectCount {
        /// Whether the type also has its legacy quota name.
        legacy_name: bool,
    },
    /// Not charged (`ignoredResources`: events).
    Ignored,
}

/// The reviews the simulator answers on create and never stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// authorization.k8s.io `selfsubjectaccessreviews`: may I do this one thing?
    Access,
    /// authorization.k8s.io `selfsubjectrulesreviews`: what may I do in this namespace?
    Rules,
    /// authentication.k8s.io `selfsubjectreviews`: who am I? (`kubectl auth whoami`)
    Identity,
}

/// The selectable fields of every kind (`generic.ObjectMetaFieldsSet`).
pub const GENERIC_FIELDS: &[&str] = &["metadata.name", "metadata.namespace"];

/// The API defaults of `object` as the registry applies them: the kind's `SetDefaults_*`, then
/// its quantities in canonical spelling.
pub fn apply_defaults(strategy: &dyn Strategy, object: &mut Value) {
    strategy.defaults(object);
    strategy.canonicalize_quantities(object);
}

/// `parent[key]` as a map, made an empty one first when it is absent or not a map (the
/// defaulters' way into nested structs).
pub(crate) fn object_mut<'a>(parent: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let map = parent.as_object_mut()?;
    if !map.get(key).is_some_and(Value::is_object) {
        map.insert(key.to_string(), serde_json::json!({}));
    }
    map.get_mut(key)?.as_object_mut()
}

/// Sets `map[key]` to `value` when it is absent or null (a defaulter's `if x == nil`).
pub(crate) fn default_key(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}

/// A kind with nothing special: the behaviour of [`Strategy`]'s defaults.
#[derive(Debug)]
pub struct Plain;

impl Strategy for Plain {}

/// A read-only kind answered from the control plane's own state at each request, never stored
/// (upstream's `rest.Getter`/`rest.Lister` storages without a registry store, e.g.
/// `pkg/registry/core/componentstatus/rest.go`).
#[derive(Debug)]
pub struct Computed {
    /// Every object, as `List` answers them (items without `kind`/`apiVersion`).
    pub list: fn() -> Vec<Value>,
    /// One object as `Get` answers it, or the error text for a name that is not one.
    pub get: fn(&str) -> Result<Value, String>,
    /// The `Warning` every request on the resource is answered with (a deprecation).
    pub warning: Option<&'static str>,
}

/// A review kind: answered on create ([`Review`]), nothing else special.
#[derive(Debug)]
pub struct ReviewStrategy(pub Review);

impl Strategy for ReviewStrategy {
    fn review(&self) -> Option<Review> {
        Some(self.0)
    }
}

/// Every built-in kind, in discovery order.
pub static BUILT_IN: &[&Kind] = &[
    &core::namespace::KIND,
    &core::node::KIND,
    &core::pod::KIND,
    &core::configmap::KIND,
    &core::secret::KIND,
    &core::service::KIND,
    &core::serviceaccount::KIND,
    &core::event::KIND,
    &core::persistentvolumeclaim::KIND,
    &core::resourcequota::KIND,
    &core::limitrange::KIND,
    &core::componentstatus::KIND,
    &apps::daemonset::KIND,
    &apps::deployment::KIND,
    &apps::replicaset::KIND,
    &apps::statefulset::KIND,
    &autoscaling::horizontalpodautoscaler::KIND,
    &apps::controllerrevision::KIND,
    &batch::job::KIND,
    &batch::cronjob::KIND,
    &policy::poddisruptionbudget::KIND,
    &events::event::KIND,
    &coordination::lease::KIND,
    &apiextensions::customresourcedefinition::KIND,
    &authentication::selfsubjectreview::KIND,
    &authorization::selfsubjectaccessreview::KIND,
    &authorization::selfsubjectrulesreview::KIND,
    &scheduling::priorityclass::KIND,
    &node::runtimeclass::KIND,
    &rbac::clusterrolebinding::KIND,
    &rbac::clusterrole::KIND,
    &rbac::rolebinding::KIND,
    &rbac::role::KIND,
];

/// Kinds also served at a second version beside their row's: stored once, as the row's
/// version, and converted on the way in and out (`server/api.rs`). autoscaling/v1
/// HorizontalPodAutoscalers (`autoscaling::conversion`), listed after v2, the preferred version.
pub static ALSO_SERVED: &[(&Kind, &str)] = &[(&autoscaling::horizontalpodautoscaler::KIND, "v1")];

/// The built-in kind served at `group`/`plural`.
pub fn find(group: &str, plural: &str) -> Option<&'static Kind> {
    BUILT_IN.iter().copied().find(|kind| kind.plural == plural && kind.group == group)
}

/// The built-in kind of `group_resource` (`pods`, `statefulsets.apps`).
pub fn by_group_resource(group_resource: &str) -> Option<&'static Kind> {
    static INDEX: OnceLock<HashMap<String, &'static Kind>> = OnceLock::new();
    INDEX
        .get_or_init(|| BUILT_IN.iter().map(|kind| (kind.group_resource(), *kind)).collect())
        .get(group_resource)
        .copied()
}

/// The strategy objects of `group_resource` are written with: the built-in kind's, the custom
/// resources' for a group outside the built-in API groups, else [`Plain`].
pub fn strategy(group_resource: &str) -> &'static dyn Strategy {
    match by_group_resource(group_resource) {
        Some(kind) => kind.strategy,
        None if is_custom(group_resource) => &apiextensions::customresource::CUSTOM_RESOURCES,
        None => &Plain,
    }
}

/// True for a resource outside the built-in API groups (a custom resource).
pub fn is_custom(group_resource: &str) -> bool {
    match group_resource.split_once('.') {
        None => false,
        Some((_, group)) => !matches!(
            group,
            "apps"
                | "batch"
                | "events.k8s.io"
                | "coordination.k8s.io"
                | "apiextensions.k8s.io"
                | "authorization.k8s.io"
                | "rbac.authorization.k8s.io"
                | "policy"
                | "networking.k8s.io"
                | "storage.k8s.io"
                | "scheduling.k8s.io"
                | "node.k8s.io"
                | "resource.k8s.io"
        ),
    }
}

/// The selectable fields of `object`, an object of `group_resource`, as the store keeps them
/// beside it for `--field-selector`.
pub fn selectable_fields(group_resource: &str, object: &Value) -> crate::k8s::selector::Fields {
    let strategy = strategy(group_resource);
    crate::k8s::selector::Fields::new(strategy.selectable_fields(), |name| {
        strategy.selectable_value(object, name)
    })
}

/// The field names objects of `group_resource` can be selected on.
pub fn selectable_field_names(group_resource: &str) -> &'static [&'static str] {
    strategy(group_resource).selectable_fields()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::k8s::selector::{FieldSelector, Fields, MAX_FIELDS};

    #[test]
    fn every_kind_is_listed_once_with_its_schema() {
        let mut seen = std::collections::BTreeSet::new();
        for kind in BUILT_IN {
            assert!(seen.insert(kind.group_resource()), "{} is listed twice", kind.group_resource());
            assert!(by_group_resource(&kind.group_resource()).is_some_and(|k| std::ptr::eq(k, *kind)));
        }
        assert!(find("apps", "statefulsets").is_some_and(|k| k.kind == "StatefulSet"));
        assert!(find("", "statefulsets").is_none());
        assert!(is_custom("prometheusrules.monitoring.coreos.com") && !is_custom("jobs.batch"));
        assert!(!is_custom("pods"));
        // The schemas are generated in `k8s::schema` (lint reads them without the simulator):
        // every served kind has one there, and only served kinds do.
        let schemas: std::collections::BTreeSet<(&str, &str, &str)> =
            crate::k8s::schema::builtin().kinds.iter().map(|k| (k.group, k.version, k.kind)).collect();
        let served: std::collections::BTreeSet<(&str, &str, &str)> = BUILT_IN
            .iter()
            .map(|k| (k.group, k.version, k.kind))
            .chain(ALSO_SERVED.iter().map(|(k, version)| (k.group, *version, k.kind)))
            .collect();
        assert_eq!(schemas, served);
    }

    #[test]
    fn every_kind_has_room_for_its_selectable_fields() {
        for kind in BUILT_IN {
            assert!(kind.strategy.selectable_fields().len() < MAX_FIELDS, "{}", kind.kind);
        }
    }

    #[test]
    fn field_selectors_compare_rendered_fields() {
        let pod = json!({"metadata": {"name": "web-0", "namespace": "default"},
                         "spec": {"nodeName": "node-a"}, "status": {"phase": "Running"}});
        let fields = selectable_fields("pods", &pod);
        assert_eq!(fields.get("spec.hostNetwork"), Some("false"));
        let sel = FieldSelector::parse("spec.nodeName=node-a,status.phase!=Succeeded").unwrap();
        sel.check_supported(selectable_field_names("pods")).unwrap();
        assert!(sel.matches(&fields));
        assert!(!FieldSelector::parse("metadata.name==web-1").unwrap().matches(&fields));
        let unsupported = FieldSelector::parse("spec.nodeName=x")
            .unwrap()
            .check_supported(selectable_field_names("configmaps"));
        assert_eq!(unsupported.unwrap_err().to_string(), "field label not supported: spec.nodeName");
        assert!(FieldSelector::parse("nonsense").is_err());
    }

    #[test]
    fn packed_fields_read_back_every_value_in_the_kinds_order() {
        let node = json!({"metadata": {"name": "gpu-1"}, "spec": {"unschedulable": true}});
        let fields = selectable_fields("nodes", &node);
        let all: Vec<(&str, &str)> = fields.iter().collect();
        assert_eq!(
            all,
            [("metadata.name", "gpu-1"), ("spec.unschedulable", "true"), ("metadata.namespace", "")]
        );
        let event = json!({"metadata": {"name": "e.1", "namespace": "ns"}, "type": "Warning",
                           "involvedObject": {"kind": "Pod", "name": "p", "uid": "u-1"}, "reason": "BackOff"});
        let fields = selectable_fields("events", &event);
        assert_eq!(fields.iter().count(), core::event::FIELDS.len());
        assert_eq!(fields.get("involvedObject.uid"), Some("u-1"));
        assert_eq!(fields.get("involvedObject.fieldPath"), Some(""));
        assert_eq!(fields.get("type"), Some("Warning"));
        assert_eq!(fields.get("metadata.namespace"), Some("ns"));
        assert_eq!(Fields::default().get("metadata.name"), None);
    }

    #[test]
    fn event_source_and_escapes() {
        let event = json!({"metadata": {"name": "e", "namespace": "ns"}, "source": {"component": "kubelet"},
                           "involvedObject": {"kind": "Pod", "name": "a,b"}});
        let fields = selectable_fields("events", &event);
        assert!(FieldSelector::parse("source=kubelet,involvedObject.name=a\\,b").unwrap().matches(&fields));
        assert!(FieldSelector::parse("involvedObject.namespace=").unwrap().matches(&fields));
    }
}
