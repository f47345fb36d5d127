//! Object metadata rules the registry applies: names, uids, timestamps, generation, status
//! resets and quantity normalisation, each as upstream's `pkg/registry/*/strategy.go` does.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value};

/// `metadata.creationTimestamp`-style text: RFC 3339 in UTC, whole seconds (upstream
/// `metav1.Time` marshals without fractions).
pub fn timestamp(now: Timestamp) -> String {
    Timestamp::from_second(now.as_second()).unwrap_or(now).to_string()
}

/// A fresh object uid.
pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `generateName` + five random characters from upstream's alphabet
/// (`apiserver/pkg/storage/names/generate.go`, `utilrand.String(5)`).
pub fn generated_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    // Upstream truncates the prefix so the whole name stays within 63 characters.
    let prefix: String = prefix.chars().take(58).collect();
    let random = uuid::Uuid::new_v4();
    let suffix: String =
        random.as_bytes().iter().take(5).map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char).collect();
    format!("{prefix}{suffix}")
}

/// Whether objects of `group_resource` carry `metadata.generation`: the apps and batch workloads,
/// CRDs and every custom resource (pods do not in 1.33: `PodObservedGenerationTracking` is off).
pub fn tracks_generation(group_resource: &str) -> bool {
    matches!(
        group_resource,
        "daemonsets.apps"
            | "deployments.apps"
            | "replicasets.apps"
            | "statefulsets.apps"
            | "jobs.batch"
            | "cronjobs.batch"
            | "poddisruptionbudgets.policy"
            | "customresourcedefinitions.apiextensions.k8s.io"
    ) || is_custom(group_resource)
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

/// The part of an object whose change bumps `generation`: `spec` for built-in kinds, everything
/// but `metadata` and `status` for custom resources (upstream `customresource/strategy.go`).
pub fn generation_relevant(group_resource: &str, object: &Value) -> Value {
    if is_custom(group_resource) {
        let mut rest = object.as_object().cloned().unwrap_or_default();
        rest.remove("metadata");
        rest.remove("status");
        Value::Object(rest)
    } else {
        object.get("spec").cloned().unwrap_or(Value::Null)
    }
}

/// The status an object gets on create (`PrepareForCreate`): types with a status subresource
/// start with an empty status, except nodes (which may set theirs); pods start `Pending` with
/// their QoS class; namespaces start `Active` with the `kubernetes` finalizer.
pub fn reset_status_for_create(group_resource: &str, has_status: bool, object: &mut Value) {
    let Some(map) = object.as_object_mut() else { return };
    match group_resource {
        "nodes" => {}
        "pods" => {
            let qos = crate::k8s::resources::qos_class(map.get("spec").unwrap_or(&Value::Null));
            map.insert("status".into(), serde_json::json!({"phase": "Pending", "qosClass": qos}));
        }
        "namespaces" => {
            label_namespace_name(map);
            map.insert("status".into(), serde_json::json!({"phase": "Active"}));
            let spec = map.entry("spec").or_insert_with(|| Value::Object(Map::new()));
            if let Some(spec) = spec.as_object_mut() {
                spec.insert("finalizers".into(), serde_json::json!(["kubernetes"]));
            }
        }
        _ if has_status => {
            map.remove("status");
        }
        _ => {}
    }
}

/// Every namespace carries `kubernetes.io/metadata.name: <name>` (upstream
/// `SetDefaults_Namespace`, on create and update).
pub fn label_namespace_name(namespace: &mut Map<String, Value>) {
    let Some(metadata) = namespace.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    let name = metadata.get("name").cloned().unwrap_or(Value::Null);
    if !metadata.get("labels").is_some_and(Value::is_object) {
        metadata.insert("labels".into(), Value::Object(Map::new()));
    }
    if let Some(labels) = metadata.get_mut("labels").and_then(Value::as_object_mut) {
        labels.insert("kubernetes.io/metadata.name".into(), name);
    }
}

/// Keys whose value is a map of resource name to quantity in the built-in kinds.
const QUANTITY_MAPS: &[&str] = &[
    "requests",
    "limits",
    "capacity",
    "allocatable",
    "hard",
    "used",
    "max",
    "min",
    "default",
    "defaultRequest",
    "maxLimitRequestRatio",
    "overhead",
];

/// Turns JSON numbers in quantity maps into quantity strings (`"nvidia.com/gpu": 1` → `"1"`,
/// `0.5` → `"500m"`), as the real server's decoding into `resource.Quantity` does.
pub fn normalise_quantities(group_resource: &str, object: &mut Value) {
    if is_custom(group_resource) {
        return;
    }
    walk(object, false);
}

fn walk(value: &mut Value, in_quantity_map: bool) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if in_quantity_map && let Value::Number(number) = child {
                    *child = Value::String(crate::k8s::quantity::json_number_text(number));
                    continue;
                }
                walk(child, QUANTITY_MAPS.contains(&key.as_str()) && child.is_object());
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, false)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quantities_become_strings_only_in_quantity_maps() {
        let mut pod = json!({"spec": {"containers": [{"name": "a", "resources": {
            "limits": {"nvidia.com/gpu": 1, "cpu": 0.5}, "requests": {"memory": "1Gi"}}}],
            "terminationGracePeriodSeconds": 30}});
        normalise_quantities("pods", &mut pod);
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["limits"],
            json!({"nvidia.com/gpu": "1", "cpu": "500m"})
        );
        assert_eq!(pod["spec"]["terminationGracePeriodSeconds"], json!(30));
    }

    #[test]
    fn names_and_times() {
        let name = generated_name("web-");
        assert_eq!(name.len(), 9);
        assert!(name.starts_with("web-"));
        let now: Timestamp = "2026-01-01T00:00:00.123Z".parse().unwrap();
        assert_eq!(timestamp(now), "2026-01-01T00:00:00Z");
        assert!(
            tracks_generation("daemonsets.apps")
                && tracks_generation("prometheusrules.monitoring.coreos.com")
        );
        assert!(!tracks_generation("pods") && !tracks_generation("controllerrevisions.apps"));
    }
}
