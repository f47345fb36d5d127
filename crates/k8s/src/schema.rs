//! The OpenAPI schemas of the built-in kinds (k8s-openapi's schemars output) and of custom resources (a CRD's `openAPIV3Schema`), walked field by field.
//!
//! The simulator publishes these schemas (it adds the patch metadata upstream publishes, in
//! `sim/server/schema.rs`); lint resolves a lab's field paths against them, so a typo such as
//! `unavailableReplica` is reported with the field it most likely meant. A custom resource's
//! `metadata` is the built-in `ObjectMeta` whatever its CRD declares, as kube-apiserver treats it
//! (`apiextensions-apiserver/pkg/apiserver/schema/objectmeta`); below
//! `x-kubernetes-preserve-unknown-fields` or an object without declared properties any field is
//! accepted, as the API server accepts it.

use std::sync::OnceLock;

use k8s_openapi::Resource;
use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::{Map, Value};

/// Prefix of component schema references in OpenAPI v3 documents.
pub const REF_PREFIX: &str = "#/components/schemas/";

/// The component name of `ObjectMeta`, every object's `metadata`.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// A built-in kind and the component schema describing it.
#[derive(Debug, Clone)]
pub struct KindSchema {
    /// API group (`""` for the core group).
    pub group: &'static str,
    /// API version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Component schema name, e.g. `io.k8s.api.apps.v1.DaemonSet`.
    pub definition: String,
}

/// The component schemas of the built-in kinds, as k8s-openapi generates them.
#[derive(Debug)]
pub struct Builtin {
    /// Component schemas by name.
    pub definitions: Map<String, Value>,
    /// The kinds, each naming its component.
    pub kinds: Vec<KindSchema>,
}

fn register<T: JsonSchema + Resource>(
    generator: &mut schemars::SchemaGenerator,
    kinds: &mut Vec<KindSchema>,
) {
    let reference = generator.subschema_for::<T>();
    let definition = reference
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix(REF_PREFIX))
        .unwrap_or_default()
        .to_string();
    kinds.push(KindSchema { group: T::GROUP, version: T::VERSION, kind: T::KIND, definition });
}

/// Generates the schemas of the built-in kinds the simulator serves, and of the shared types its
/// OpenAPI documents' operations refer to.
pub fn generate() -> Builtin {
    use k8s_openapi::api::{
        apps, authentication, authorization, autoscaling, batch, coordination, core, events, node, policy,
        rbac, scheduling,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
    use k8s_openapi::apimachinery::pkg::apis::meta;
    let mut generator = SchemaSettings::openapi3().into_generator();
    let mut kinds = Vec::new();
    register::<core::v1::Namespace>(&mut generator, &mut kinds);
    register::<core::v1::Node>(&mut generator, &mut kinds);
    register::<core::v1::Pod>(&mut generator, &mut kinds);
    register::<core::v1::ConfigMap>(&mut generator, &mut kinds);
    register::<core::v1::Secret>(&mut generator, &mut kinds);
    register::<core::v1::Service>(&mut generator, &mut kinds);
    register::<core::v1::ServiceAccount>(&mut generator, &mut kinds);
    register::<core::v1::Event>(&mut generator, &mut kinds);
    register::<core::v1::ResourceQuota>(&mut generator, &mut kinds);
    register::<core::v1::LimitRange>(&mut generator, &mut kinds);
    register::<core::v1::ComponentStatus>(&mut generator, &mut kinds);
    register::<apps::v1::DaemonSet>(&mut generator, &mut kinds);
    register::<apps::v1::StatefulSet>(&mut generator, &mut kinds);
    register::<apps::v1::Deployment>(&mut generator, &mut kinds);
    register::<apps::v1::ReplicaSet>(&mut generator, &mut kinds);
    register::<apps::v1::ControllerRevision>(&mut generator, &mut kinds);
    register::<batch::v1::Job>(&mut generator, &mut kinds);
    register::<batch::v1::CronJob>(&mut generator, &mut kinds);
    register::<autoscaling::v2::HorizontalPodAutoscaler>(&mut generator, &mut kinds);
    register::<autoscaling::v1::HorizontalPodAutoscaler>(&mut generator, &mut kinds);
    register::<policy::v1::PodDisruptionBudget>(&mut generator, &mut kinds);
    register::<events::v1::Event>(&mut generator, &mut kinds);
    register::<coordination::v1::Lease>(&mut generator, &mut kinds);
    register::<apiextensions::v1::CustomResourceDefinition>(&mut generator, &mut kinds);
    register::<authorization::v1::SelfSubjectAccessReview>(&mut generator, &mut kinds);
    register::<authorization::v1::SelfSubjectRulesReview>(&mut generator, &mut kinds);
    register::<authentication::v1::SelfSubjectReview>(&mut generator, &mut kinds);
    register::<core::v1::PersistentVolumeClaim>(&mut generator, &mut kinds);
    register::<scheduling::v1::PriorityClass>(&mut generator, &mut kinds);
    register::<node::v1::RuntimeClass>(&mut generator, &mut kinds);
    register::<rbac::v1::ClusterRoleBinding>(&mut generator, &mut kinds);
    register::<rbac::v1::ClusterRole>(&mut generator, &mut kinds);
    register::<rbac::v1::RoleBinding>(&mut generator, &mut kinds);
    register::<rbac::v1::Role>(&mut generator, &mut kinds);
    generator.subschema_for::<meta::v1::Status>();
    generator.subschema_for::<meta::v1::DeleteOptions>();
    generator.subschema_for::<meta::v1::ListMeta>();
    Builtin { definitions: generator.take_definitions(true), kinds }
}

/// The built-in schemas, generated on first use.
pub fn builtin() -> &'static Builtin {
    static BUILTIN: OnceLock<Builtin> = OnceLock::new();
    BUILTIN.get_or_init(generate)
}

/// A custom resource kind and its schema, from a CustomResourceDefinition.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomKind {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// The version's `openAPIV3Schema`.
    pub schema: Value,
}

impl CustomKind {
    /// Every served version's kind and schema a CustomResourceDefinition document declares.
    pub fn from_crd(crd: &Value) -> Vec<CustomKind> {
        let text =
            |pointer: &str| crd.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string();
        let (group, kind) = (text("/spec/group"), text("/spec/names/kind"));
        let versions = crd.pointer("/spec/versions").and_then(Value::as_array).into_iter().flatten();
        versions
            .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
            .map(|v| CustomKind {
                group: group.clone(),
                version: v.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                kind: kind.clone(),
                schema: v.pointer("/schema/openAPIV3Schema").cloned().unwrap_or(Value::Null),
            })
            .collect()
    }
}

/// The kinds whose fields can be checked: the built-in ones and some custom ones.
#[derive(Debug)]
pub struct Kinds {
    builtin: &'static Builtin,
    custom: Vec<CustomKind>,
}

/// What the kinds say about an `apiVersion` and `kind`.
#[derive(Debug, Clone, Copy)]
pub enum KindLookup<'a> {
    /// A known kind, with its schema.
    Found(Node<'a>),
    /// The API group is known, the kind is not; `suggestion` is a known kind of the group close to it.
    Unknown {
        /// A kind of that group-version spelled almost the same.
        suggestion: Option<&'a str>,
    },
    /// Nothing is known about that API group (a custom resource whose CRD is elsewhere).
    Unchecked,
}

impl Kinds {
    /// The built-in kinds and the custom ones of `crds` (CustomResourceDefinition documents).
    pub fn new<'c>(builtin: &'static Builtin, crds: impl IntoIterator<Item = &'c Value>) -> Kinds {
        Kinds { builtin, custom: crds.into_iter().flat_map(CustomKind::from_crd).collect() }
    }

    /// The schema of `kind` in `api_version` (`apps/v1`, `v1`).
    pub fn lookup<'a>(&'a self, api_version: &str, kind: &str) -> KindLookup<'a> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let builtin = self.builtin.kinds.iter().filter(|k| k.group == group && k.version == version);
        let custom = self.custom.iter().filter(|k| k.group == group && k.version == version);
        for known in builtin.clone() {
            if known.kind == kind {
                let schema = &self.builtin.definitions[&known.definition];
                return KindLookup::Found(Node { kinds: self, schema, custom_root: false });
            }
        }
        for known in custom.clone() {
            if known.kind == kind {
                return KindLookup::Found(Node { kinds: self, schema: &known.schema, custom_root: true });
            }
        }
        let names: Vec<&'a str> = builtin.map(|k| k.kind).chain(custom.map(|k| k.kind.as_str())).collect();
        let group_known = !names.is_empty()
            || self.builtin.kinds.iter().any(|k| k.group == group)
            || self.custom.iter().any(|k| k.group == group);
        if group_known {
            KindLookup::Unknown { suggestion: suggest(kind, &names) }
        } else {
            KindLookup::Unchecked
        }
    }

    fn definition<'a>(&'a self, name: &str) -> Option<Node<'a>> {
        let schema = self.builtin.definitions.get(name)?;
        Some(Node { kinds: self, schema, custom_root: false })
    }
}

/// A position in a schema.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    kinds: &'a Kinds,
    schema: &'a Value,
    /// The root of a custom resource's schema, whose `metadata` is the built-in `ObjectMeta`.
    custom_root: bool,
}

/// What a schema node holds.
#[derive(Debug, Clone)]
pub enum Shape<'a> {
    /// An object with declared fields.
    Struct(Vec<&'a str>),
    /// A map with free keys, every value of one schema.
    Map(Node<'a>),
    /// A list of items of one schema.
    List(Node<'a>),
    /// A string, number, boolean, quantity or int-or-string.
    Scalar(&'a str),
    /// Anything (preserved unknown fields, raw JSON): nothing below is checked.
    Open,
}

/// One step of a walk from a node.
#[derive(Debug, Clone)]
pub enum Step<'a> {
    /// The schema of the field or item.
    Found(Node<'a>),
    /// Not declared: the fields that are, and the one most like it.
    Unknown {
        /// The declared fields.
        known: Vec<&'a str>,
        /// A declared field spelled almost the same.
        suggestion: Option<&'a str>,
    },
    /// The node is a scalar (its type): it has no fields or items.
    Scalar(&'a str),
    /// A field of a list was asked for: a list has items, not fields.
    List,
    /// The items of something other than a list were asked for.
    NotAList,
    /// Below here, anything goes.
    Open,
}

impl<'a> Node<'a> {
    /// The node behind `$ref` (also the `allOf: [{$ref}]` form an optional field takes).
    fn resolved(self) -> Node<'a> {
        let mut node = self;
        for _ in 0..8 {
            let Some(name) = referenced(node.schema) else { return node };
            match node.kinds.definition(name) {
                Some(next) => node = next,
                None => return node,
            }
        }
        node
    }

    /// What the node holds.
    pub fn shape(self) -> Shape<'a> {
        let node = self.resolved();
        let schema = node.schema;
        let open = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
        if open("x-kubernetes-preserve-unknown-fields") || open("x-kubernetes-embedded-resource") {
            return Shape::Open;
        }
        if open("x-kubernetes-int-or-string") {
            return Shape::Scalar("int-or-string");
        }
        let child = |schema: &'a Value| Node { kinds: node.kinds, schema, custom_root: false };
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => schema
                .get("items")
                .filter(|i| i.is_object())
                .map_or(Shape::Open, |items| Shape::List(child(items))),
            Some("object") | None => {
                if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                    Shape::Struct(properties.keys().map(String::as_str).collect())
                } else if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                    Shape::Map(child(values))
                } else {
                    Shape::Open
                }
            }
            Some(scalar) => Shape::Scalar(scalar),
        }
    }

    /// The field `key` of this node.
    pub fn field(self, key: &str) -> Step<'a> {
        if self.custom_root && key == "metadata" {
            return self.kinds.definition(OBJECT_META).map_or(Step::Open, Step::Found);
        }
        let node = self.resolved();
        match node.shape() {
            Shape::Struct(known) => match node.schema.pointer(&format!("/properties/{}", escape(key))) {
                Some(schema) => Step::Found(Node { kinds: node.kinds, schema, custom_root: false }),
                // Every object has them; a CRD's schema often leaves them out.
                None if self.custom_root && matches!(key, "apiVersion" | "kind") => Step::Scalar("string"),
                None => Step::Unknown { suggestion: suggest(key, &known), known },
            },
            Shape::Map(values) => Step::Found(values),
            Shape::List(_) => Step::List,
            Shape::Scalar(kind) => Step::Scalar(kind),
            Shape::Open => Step::Open,
        }
    }

    /// The items of this node, when it is a list.
    pub fn items(self) -> Step<'a> {
        match self.shape() {
            Shape::List(items) => Step::Found(items),
            Shape::Open => Step::Open,
            Shape::Scalar(kind) => Step::Scalar(kind),
            Shape::Struct(_) | Shape::Map(_) => Step::NotAList,
        }
    }
}

/// The component a schema refers to: `$ref`, or the `allOf: [{$ref}]` form k8s-openapi gives an
/// optional field with a description.
pub fn referenced(schema: &Value) -> Option<&str> {
    let reference = schema
        .get("$ref")
        .or_else(|| schema.get("allOf").and_then(|all| all.get(0)).and_then(|first| first.get("$ref")));
    reference.and_then(Value::as_str).and_then(|r| r.strip_prefix(REF_PREFIX))
}

/// A JSON pointer token for `key`.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The name among `known` that `wanted` most likely misspells: the same but for case, or the
/// closest by Damerau–Levenshtein distance when that is at most a third of its length (at least 1).
pub fn suggest<'k>(wanted: &str, known: &[&'k str]) -> Option<&'k str> {
    if let Some(same) = known.iter().find(|k| k.eq_ignore_ascii_case(wanted)) {
        return Some(same);
    }
    let limit = (wanted.chars().count() / 3).max(1);
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(wanted, k), *k))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, k)| (*distance, *k))
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn walk<'a>(mut node: Node<'a>, path: &[&str]) -> Step<'a> {
        for (i, key) in path.iter().enumerate() {
            let step = if *key == "[]" { node.items() } else { node.field(key) };
            match step {
                Step::Found(next) if i + 1 < path.len() => node = next,
                other => return other,
            }
        }
        Step::Found(node)
    }

    fn root<'a>(kinds: &'a Kinds, api_version: &str, kind: &str) -> Node<'a> {
        match kinds.lookup(api_version, kind) {
            KindLookup::Found(node) => node,
            other => panic!("{api_version} {kind}: {other:?}"),
        }
    }

    #[test]
    fn built_in_fields_resolve_and_a_typo_gets_a_suggestion() {
        let kinds = Kinds::new(builtin(), []);
        let deployment = root(&kinds, "apps/v1", "Deployment");
        assert!(matches!(walk(deployment, &["status", "unavailableReplicas"]), Step::Found(_)));
        assert!(matches!(
            walk(
                deployment,
                &["spec", "template", "spec", "containers", "[]", "resources", "requests", "cpu"]
            ),
            Step::Found(_)
        ));
        assert!(matches!(walk(deployment, &["metadata", "labels", "any/key"]), Step::Found(_)));
        match walk(deployment, &["status", "unavailableReplica"]) {
            Step::Unknown { suggestion, known } => {
                assert_eq!(suggestion, Some("unavailableReplicas"));
                assert!(known.contains(&"updatedReplicas"), "{known:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(walk(deployment, &["spec", "replicas", "x"]), Step::Scalar("integer")));
        assert!(matches!(walk(deployment, &["spec", "replicas", "[]"]), Step::Scalar(_)));
        assert!(matches!(walk(deployment, &["spec", "[]"]), Step::NotAList));
        assert!(matches!(walk(deployment, &["spec", "template", "spec", "containers", "image"]), Step::List));
        let node = root(&kinds, "v1", "Node");
        assert!(matches!(walk(node, &["status", "allocatable", "nvidia.com/gpu"]), Step::Found(_)));
    }

    #[test]
    fn kinds_of_known_groups_are_checked_and_others_are_not() {
        let kinds = Kinds::new(builtin(), []);
        assert!(matches!(
            kinds.lookup("apps/v1", "Deploymnet"),
            KindLookup::Unknown { suggestion: Some("Deployment") }
        ));
        assert!(matches!(kinds.lookup("apps/v1beta1", "Deployment"), KindLookup::Unknown { .. }));
        assert!(matches!(kinds.lookup("monitoring.coreos.com/v1", "PrometheusRule"), KindLookup::Unchecked));
    }

    #[test]
    fn a_custom_resource_is_checked_against_its_crd_with_object_meta_as_metadata() {
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "metadata": {"type": "object"},
                        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }
                }}}]}
        });
        let kinds = Kinds::new(builtin(), [&crd]);
        let widget = root(&kinds, "example.com/v1", "Widget");
        assert!(matches!(walk(widget, &["spec", "size"]), Step::Found(_)));
        assert!(matches!(walk(widget, &["metadata", "labels", "app"]), Step::Found(_)));
        assert!(matches!(walk(widget, &["status", "anything", "below"]), Step::Open));
        assert!(matches!(walk(widget, &["kind"]), Step::Scalar(_)));
        assert!(matches!(walk(widget, &["spec", "sise"]), Step::Unknown { suggestion: Some("size"), .. }));
        assert!(matches!(
            kinds.lookup("example.com/v1", "Widgets"),
            KindLookup::Unknown { suggestion: Some("Widget") }
        ));
    }

    #[test]
    fn suggestions_are_close_or_nothing() {
        assert_eq!(suggest("updatedReplica", &["replicas", "updatedReplicas"]), Some("updatedReplicas"));
        assert_eq!(suggest("STATUS", &["spec", "status"]), Some("status"));
        assert_eq!(suggest("colour", &["spec", "status"]), None);
    }
}
