//! Schemas of the built-in kinds (k8s-openapi's schemars output) plus the patch metadata upstream publishes.
//!
//! k8s-openapi 0.29's `JsonSchema` impls carry no `x-kubernetes-patch-*` or `x-kubernetes-list-*`
//! extensions (checked: `json_schema()` of `PodSpec` lists `containers` as a plain array). The
//! strategic-merge metadata is, however, what k8s-openapi's generator compiled into its
//! `DeepMerge` impls (`merge_strategies::list::map` keyed by the patch merge key, e.g.
//! `k8s-openapi-0.29.0/src/v1_33/api/core/v1/pod_spec.rs:146`); [`LIST_FIELDS`] is that set,
//! extracted once by script and completed with the `+listType`/`+listMapKey` tags of upstream
//! `staging/src/k8s.io/api/core/v1/types.go`, `apps/v1/types.go`, `batch/v1/types.go` and
//! `apimachinery/pkg/apis/meta/v1/types.go` (server-side apply uses those, and they differ for
//! container ports, service ports, topology spread constraints, `hostIPs` and Job conditions).
//! One table feeds the strategic merge patch, server-side apply and the published OpenAPI, so
//! what kubectl computes from `/openapi/v3` is exactly what the server applies.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::resources::ResourceType;

/// Prefix of component schema references in OpenAPI v3 documents.
pub use crate::k8s::schema::REF_PREFIX;

/// How server-side apply treats a list (`x-kubernetes-list-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    /// Replaced as a whole; owned as one field.
    Atomic,
    /// A set of scalars; items are `v:<value>` path elements.
    Set,
    /// Items identified by these key fields; items are `k:{…}` path elements.
    Map(&'static [&'static str]),
}

/// Strategic-merge metadata of a list or struct field (`x-kubernetes-patch-strategy`, `…-merge-key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchMeta {
    /// `merge`, `retainKeys`, `merge,retainKeys`, or `None` (lists are then replaced).
    pub strategy: Option<&'static str>,
    /// The field identifying list items, for lists of objects merged by key.
    pub merge_key: Option<&'static str>,
}

impl PatchMeta {
    /// No metadata: maps merge recursively, lists are replaced.
    pub const NONE: PatchMeta = PatchMeta { strategy: None, merge_key: None };

    /// True when lists under this field merge rather than being replaced.
    pub fn merges_lists(&self) -> bool {
        self.strategy.is_some_and(|s| s.split(',').any(|p| p == "merge"))
    }

    /// True when the field's strategy is `replace` (the whole map is replaced).
    pub fn replaces(&self) -> bool {
        self.strategy.is_some_and(|s| s.split(',').any(|p| p == "replace"))
    }
}

struct ListField {
    definition: &'static str,
    field: &'static str,
    patch: PatchMeta,
    list: ListType,
}

const fn merge_by(key: &'static str) -> PatchMeta {
    PatchMeta { strategy: Some("merge"), merge_key: Some(key) }
}

const fn merge_retain_by(key: &'static str) -> PatchMeta {
    PatchMeta { strategy: Some("merge,retainKeys"), merge_key: Some(key) }
}

const MERGE_PRIMITIVES: PatchMeta = PatchMeta { strategy: Some("merge"), merge_key: None };

macro_rules! lf {
    ($def:expr, $field:expr, $patch:expr, $list:expr) => {
        ListField { definition: $def, field: $field, patch: $patch, list: $list }
    };
}

/// Lists with a strategy other than "atomic list, replaced by a patch". Source: k8s-openapi's
/// `DeepMerge` impls (patch merge keys) and upstream types.go `+listType` tags (apply).
// Keyed by Go type, not by kind, on purpose: the metadata belongs to types many kinds share
// (`PodSpec` among them), as upstream's `+patchMergeKey`/`+listType` tags do in `types.go`.
const LIST_FIELDS: &[ListField] = &[
    // apimachinery/pkg/apis/meta/v1/types.go ObjectMeta
    lf!("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers", MERGE_PRIMITIVES, ListType::Set),
    lf!(
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "ownerReferences",
        merge_by("uid"),
        ListType::Map(&["uid"])
    ),
    // core/v1/types.go Container (and EphemeralContainer, which shares EphemeralContainerCommon)
    lf!("io.k8s.api.core.v1.Container", "env", merge_by("name"), ListType::Map(&["name"])),
    lf!(
        "io.k8s.api.core.v1.Container",
        "ports",
        merge_by("containerPort"),
        ListType::Map(&["containerPort", "protocol"])
    ),
    lf!("io.k8s.api.core.v1.Container", "volumeMounts", merge_by("mountPath"), ListType::Map(&["mountPath"])),
    lf!(
        "io.k8s.api.core.v1.Container",
        "volumeDevices",
        merge_by("devicePath"),
        ListType::Map(&["devicePath"])
    ),
    lf!("io.k8s.api.core.v1.EphemeralContainer", "env", merge_by("name"), ListType::Map(&["name"])),
    lf!(
        "io.k8s.api.core.v1.EphemeralContainer",
        "ports",
        merge_by("containerPort"),
        ListType::Map(&["containerPort", "protocol"])
    ),
    lf!(
        "io.k8s.api.core.v1.EphemeralContainer",
        "volumeMounts",
        merge_by("mountPath"),
        ListType::Map(&["mountPath"])
    ),
    lf!(
        "io.k8s.api.core.v1.EphemeralContainer",
        "volumeDevices",
        merge_by("devicePath"),
        ListType::Map(&["devicePath"])
    ),
    // core/v1/types.go PodSpec
    lf!("io.k8s.api.core.v1.PodSpec", "containers", merge_by("name"), ListType::Map(&["name"])),
    lf!("io.k8s.api.core.v1.PodSpec", "initContainers", merge_by("name"), ListType::Map(&["name"])),
    lf!("io.k8s.api.core.v1.PodSpec", "ephemeralContainers", merge_by("name"), ListType::Map(&["name"])),
    lf!("io.k8s.api.core.v1.PodSpec", "volumes", merge_retain_by("name"), ListType::Map(&["name"])),
    lf!("io.k8s.api.core.v1.PodSpec", "imagePullSecrets", merge_by("name"), ListType::Map(&["name"])),
    lf!("io.k8s.api.core.v1.PodSpec", "hostAliases", merge_by("ip"), ListType::Map(&["ip"])),
    lf!("io.k8s.api.core.v1.PodSpec", "schedulingGates", merge_by("name"), ListType::Map(&["name"])),
    lf!("io.k8s.api.core.v1.PodSpec", "resourceClaims", merge_retain_by("name"), ListType::Map(&["name"])),
    lf!(
        "io.k8s.api.core.v1.PodSpec",
        "topologySpreadConstraints",
        merge_by("topologyKey"),
        ListType::Map(&["topologyKey", "whenUnsatisfiable"])
    ),
    // core/v1/types.go PodStatus, ContainerStatus
    lf!("io.k8s.api.core.v1.PodStatus", "conditions", merge_by("type"), ListType::Map(&["type"])),
    lf!("io.k8s.api.core.v1.PodStatus", "podIPs", merge_by("ip"), ListType::Map(&["ip"])),
    lf!("io.k8s.api.core.v1.PodStatus", "hostIPs", merge_by("ip"), ListType::Atomic),
    lf!(
        "io.k8s.api.core.v1.PodStatus",
        "resourceClaimStatuses",
        merge_retain_by("name"),
        ListType::Map(&["name"])
    ),
    lf!(
        "io.k8s.api.core.v1.ContainerStatus",
        "volumeMounts",
        merge_by("mountPath"),
        ListType::Map(&["mountPath"])
    ),
    lf!(
        "io.k8s.api.core.v1.ContainerStatus",
        "allocatedResourcesStatus",
        merge_by("name"),
        ListType::Map(&["name"])
    ),
    lf!(
        "io.k8s.api.core.v1.ResourceStatus",
        "resources",
        merge_by("resourceID"),
        ListType::Map(&["resourceID"])
    ),
    lf!("io.k8s.api.core.v1.ResourceRequirements", "claims", PatchMeta::NONE, ListType::Map(&["name"])),
    // core/v1/types.go Node, Namespace, Service, ServiceAccount
    lf!("io.k8s.api.core.v1.NodeSpec", "podCIDRs", MERGE_PRIMITIVES, ListType::Set),
    lf!("io.k8s.api.core.v1.NodeStatus", "addresses", merge_by("type"), ListType::Map(&["type"])),
    lf!("io.k8s.api.core.v1.NodeStatus", "conditions", merge_by("type"), ListType::Map(&["type"])),
    lf!("io.k8s.api.core.v1.NamespaceStatus", "conditions", merge_by("type"), ListType::Map(&["type"])),
    lf!("io.k8s.api.core.v1.ServiceSpec", "ports", merge_by("port"), ListType::Map(&["port", "protocol"])),
    lf!("io.k8s.api.core.v1.ServiceStatus", "conditions", merge_by("type"), ListType::Map(&["type"])),
    lf!("io.k8s.api.core.v1.ServiceAccount", "secrets", merge_by("name"), ListType::Map(&["name"])),
    // apps/v1/types.go
    lf!("io.k8s.api.apps.v1.DaemonSetStatus", "conditions", merge_by("type"), ListType::Map(&["type"])),
    lf!("io.k8s.api.apps.v1.DeploymentStatus", "conditions", merge_by("type"), ListType::Map(&["type"])),
    lf!("io.k8s.api.apps.v1.ReplicaSetStatus", "conditions", merge_by("type"), ListType::Map(&["type"])),
    lf!("io.k8s.api.apps.v1.StatefulSetStatus", "conditions", merge_by("type"), ListType::Map(&["type"])),
    // batch/v1/types.go: conditions merge by type, but `+listType=atomic` for apply
    lf!("io.k8s.api.batch.v1.JobStatus", "conditions", merge_by("type"), ListType::Atomic),
    lf!("io.k8s.api.batch.v1.UncountedTerminatedPods", "failed", PatchMeta::NONE, ListType::Set),
    lf!("io.k8s.api.batch.v1.UncountedTerminatedPods", "succeeded", PatchMeta::NONE, ListType::Set),
    // apiextensions/v1/types.go
    lf!(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus",
        "conditions",
        PatchMeta::NONE,
        ListType::Map(&["type"])
    ),
];

/// Struct fields with a patch strategy of their own: apps/v1 `DeploymentSpec.strategy` is
/// `patchStrategy:"retainKeys"` (apps/v1/types.go).
const STRUCT_FIELDS: &[(&str, &str, PatchMeta)] = &[(
    "io.k8s.api.apps.v1.DeploymentSpec",
    "strategy",
    PatchMeta { strategy: Some("retainKeys"), merge_key: None },
)];

/// Maps owned as one field by apply (`+mapType=atomic` in core/v1/types.go).
const ATOMIC_MAPS: &[(&str, &str)] =
    &[("io.k8s.api.core.v1.PodSpec", "nodeSelector"), ("io.k8s.api.core.v1.ServiceSpec", "selector")];

/// Structs owned as one field by apply (`+structType=atomic` in the types.go files).
const ATOMIC_STRUCTS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.NodeSelector",
    "io.k8s.api.core.v1.NodeSelectorTerm",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.api.core.v1.SecretKeySelector",
    "io.k8s.api.core.v1.ObjectFieldSelector",
    "io.k8s.api.core.v1.ResourceFieldSelector",
];

/// One served kind and the component schema that describes it.
pub use crate::k8s::schema::KindSchema;

/// All component schemas of the served built-in kinds.
#[derive(Debug)]
pub struct Catalog {
    /// Component schemas by name, with the patch metadata extensions added.
    pub definitions: Map<String, Value>,
    /// The served kinds.
    pub kinds: Vec<KindSchema>,
}

/// The built-in kinds' schemas (generated once per process by [`crate::k8s::schema::builtin`]),
/// with the extensions upstream publishes added.
fn build() -> Catalog {
    let builtin = crate::k8s::schema::builtin();
    let mut definitions = builtin.definitions.clone();
    let kinds = builtin.kinds.clone();
    annotate(&mut definitions, &kinds);
    Catalog { definitions, kinds }
}

/// Adds the extensions upstream publishes: patch metadata and list types on properties,
/// `x-kubernetes-group-version-kind` on kinds, `x-kubernetes-map-type`/`structType` atomics.
fn annotate(definitions: &mut Map<String, Value>, kinds: &[KindSchema]) {
    for row in LIST_FIELDS {
        let Some(property) = property_mut(definitions, row.definition, row.field) else { continue };
        if let Some(strategy) = row.patch.strategy {
            property.insert("x-kubernetes-patch-strategy".into(), strategy.into());
        }
        if let Some(key) = row.patch.merge_key {
            property.insert("x-kubernetes-patch-merge-key".into(), key.into());
        }
        match row.list {
            ListType::Atomic => {
                property.insert("x-kubernetes-list-type".into(), "atomic".into());
            }
            ListType::Set => {
                property.insert("x-kubernetes-list-type".into(), "set".into());
            }
            ListType::Map(keys) => {
                property.insert("x-kubernetes-list-type".into(), "map".into());
                property.insert("x-kubernetes-list-map-keys".into(), keys.to_vec().into());
            }
        }
    }
    for (definition, field, meta) in STRUCT_FIELDS {
        if let (Some(property), Some(strategy)) =
            (property_mut(definitions, definition, field), meta.strategy)
        {
            property.insert("x-kubernetes-patch-strategy".into(), strategy.into());
        }
    }
    for (definition, field) in ATOMIC_MAPS {
        if let Some(property) = property_mut(definitions, definition, field) {
            property.insert("x-kubernetes-map-type".into(), "atomic".into());
        }
    }
    for definition in ATOMIC_STRUCTS {
        if let Some(Value::Object(schema)) = definitions.get_mut(*definition) {
            schema.insert("x-kubernetes-map-type".into(), "atomic".into());
        }
    }
    // Every other array is atomic for apply, as upstream publishes `x-kubernetes-list-type: atomic`.
    for schema in definitions.values_mut() {
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for property in properties.values_mut() {
                if let Value::Object(property) = property
                    && property.get("type").and_then(Value::as_str) == Some("array")
                    && !property.contains_key("x-kubernetes-list-type")
                {
                    property.insert("x-kubernetes-list-type".into(), "atomic".into());
                }
            }
        }
    }
    for kind in kinds {
        if let Some(Value::Object(schema)) = definitions.get_mut(&kind.definition) {
            schema.insert(
                "x-kubernetes-group-version-kind".into(),
                serde_json::json!([{"group": kind.group, "kind": kind.kind, "version": kind.version}]),
            );
            // k8s-openapi marks `metadata` required because its Rust field is not optional;
            // upstream's schema does not, and a create without metadata is valid JSON for it.
            schema.remove("required");
        }
    }
}

fn property_mut<'a>(
    definitions: &'a mut Map<String, Value>,
    definition: &str,
    field: &str,
) -> Option<&'a mut Map<String, Value>> {
    definitions.get_mut(definition)?.get_mut("properties")?.get_mut(field)?.as_object_mut()
}

/// The process-wide catalog, built on first use.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(build)
}

impl Catalog {
    /// The schema of the kind served as `rt`, if it is a built-in kind.
    pub fn for_type(&self, rt: &ResourceType) -> Option<Node<'_>> {
        let kind = self
            .kinds
            .iter()
            .find(|k| k.group == rt.group && k.version == rt.version && k.kind == rt.kind)?;
        self.named(&kind.definition)
    }

    /// The schema of a named component.
    pub fn named(&self, definition: &str) -> Option<Node<'_>> {
        let (name, schema) = self.definitions.get_key_value(definition)?;
        Some(Node { catalog: self, definition: Some(name.as_str()), schema })
    }

    /// The kinds of one group-version.
    pub fn kinds_of(&self, group: &str, version: &str) -> Vec<&KindSchema> {
        self.kinds.iter().filter(|k| k.group == group && k.version == version).collect()
    }
}

/// The structural shape of a schema node.
#[derive(Debug, Clone, Copy)]
pub enum Shape<'a> {
    /// An object with declared properties.
    Struct,
    /// An object whose values all have one schema (`additionalProperties`).
    Map(Node<'a>),
    /// An array of items.
    List(Node<'a>),
    /// A string, number, boolean, quantity or int-or-string.
    Scalar,
    /// An object of unknown structure (`RawExtension`, `FieldsV1`, JSON schema props).
    Opaque,
}

/// A position in a schema: the node and, if it came from a named component, its name.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    catalog: &'a Catalog,
    /// The component name this node resolves to (after `$ref`), if any.
    pub definition: Option<&'a str>,
    /// The schema JSON.
    pub schema: &'a Value,
}

/// A property of a struct node with the metadata of the field.
#[derive(Debug, Clone, Copy)]
pub struct Field<'a> {
    /// The field's schema.
    pub node: Node<'a>,
    /// Strategic-merge metadata.
    pub patch: PatchMeta,
    /// Apply's list type when the field is a list.
    pub list: ListType,
    /// True for `+mapType=atomic` maps.
    pub atomic_map: bool,
}

impl<'a> Node<'a> {
    /// The node behind `$ref`s (its `definition` then names the component).
    pub fn resolve(self) -> Node<'a> {
        let mut node = self;
        for _ in 0..8 {
            let Some(name) = crate::k8s::schema::referenced(node.schema) else { return node };
            match node.catalog.named(name) {
                Some(next) => node = next,
                None => return node,
            }
        }
        node
    }

    /// The node's shape, with references resolved.
    pub fn shape(self) -> Shape<'a> {
        let node = self.resolve();
        let schema = node.schema;
        if schema.get("x-kubernetes-int-or-string").is_some() {
            return Shape::Scalar;
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => match schema.get("items") {
                Some(items) => Shape::List(Node { catalog: node.catalog, definition: None, schema: items }),
                None => Shape::Opaque,
            },
            Some("object") | None => {
                if schema.get("properties").is_some() {
                    Shape::Struct
                } else if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                    Shape::Map(Node { catalog: node.catalog, definition: None, schema: values })
                } else {
                    Shape::Opaque
                }
            }
            Some(_) => Shape::Scalar,
        }
    }

    /// True when apply owns this struct as one field (`+structType=atomic`).
    pub fn is_atomic_struct(self) -> bool {
        self.resolve().definition.is_some_and(|d| ATOMIC_STRUCTS.contains(&d))
    }

    /// The declared property `name` of a struct node.
    pub fn field(self, name: &str) -> Option<Field<'a>> {
        let node = self.resolve();
        let schema = node.schema.get("properties")?.get(name)?;
        let definition = node.definition.unwrap_or_default();
        let row = LIST_FIELDS.iter().find(|r| r.definition == definition && r.field == name);
        let struct_meta =
            STRUCT_FIELDS.iter().find(|(d, f, _)| *d == definition && *f == name).map(|(_, _, meta)| *meta);
        Some(Field {
            node: Node { catalog: node.catalog, definition: None, schema },
            patch: row.map(|r| r.patch).or(struct_meta).unwrap_or(PatchMeta::NONE),
            list: row.map(|r| r.list).unwrap_or(ListType::Atomic),
            atomic_map: ATOMIC_MAPS.contains(&(definition, name)),
        })
    }

    /// The names of the declared properties of a struct node.
    pub fn field_names(self) -> Vec<&'a str> {
        let node = self.resolve();
        node.schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// Per-group-version list of the component schemas reachable from its kinds.
pub fn reachable_definitions(catalog: &Catalog, roots: &[&str]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
    while let Some(name) = stack.pop() {
        if out.contains_key(&name) {
            continue;
        }
        let Some(schema) = catalog.definitions.get(&name) else { continue };
        collect_refs(schema, &mut stack);
        out.insert(name, schema.clone());
    }
    out
}

fn collect_refs(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) =
                map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix(REF_PREFIX))
            {
                into.push(name.to_string());
            }
            map.values().for_each(|v| collect_refs(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, into)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::{built_in, find};

    #[test]
    fn every_served_built_in_kind_has_a_schema() {
        let catalog = catalog();
        for rt in built_in() {
            assert!(catalog.for_type(&rt).is_some(), "no schema for {}", rt.kind);
        }
    }

    #[test]
    fn containers_merge_by_name_and_ports_key_differs_for_apply() {
        let types = built_in();
        let ds = catalog().for_type(find(&types, "apps", "v1", "daemonsets").unwrap()).unwrap();
        let spec = ds.field("spec").unwrap().node.field("template").unwrap().node.field("spec").unwrap().node;
        let containers = spec.field("containers").unwrap();
        assert_eq!(containers.patch, merge_by("name"));
        let Shape::List(container) = containers.node.shape() else { panic!("containers is a list") };
        let ports = container.field("ports").unwrap();
        assert_eq!(ports.patch.merge_key, Some("containerPort"));
        assert_eq!(ports.list, ListType::Map(&["containerPort", "protocol"]));
        assert_eq!(spec.field("tolerations").unwrap().list, ListType::Atomic);
        assert!(spec.field("nodeSelector").unwrap().atomic_map);
    }

    #[test]
    fn published_schema_carries_patch_extensions_and_gvk() {
        let catalog = catalog();
        let pod_spec = &catalog.definitions["io.k8s.api.core.v1.PodSpec"]["properties"];
        assert_eq!(pod_spec["volumes"]["x-kubernetes-patch-strategy"], "merge,retainKeys");
        assert_eq!(pod_spec["tolerations"]["x-kubernetes-list-type"], "atomic");
        let ds = &catalog.definitions["io.k8s.api.apps.v1.DaemonSet"];
        assert_eq!(ds["x-kubernetes-group-version-kind"][0]["kind"], "DaemonSet");
    }
}
