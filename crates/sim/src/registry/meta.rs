//! Object metadata the registry writes itself: generated names, uids, timestamps, and quantities
//! decoded as the Go types decode them.

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

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
    if !crate::kinds::strategy(group_resource).typed_quantities() {
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
        let tracks_generation =
            |group_resource: &str| crate::kinds::strategy(group_resource).tracks_generation();
        assert!(
            tracks_generation("daemonsets.apps")
                && tracks_generation("prometheusrules.monitoring.coreos.com")
        );
        assert!(!tracks_generation("pods") && !tracks_generation("controllerrevisions.apps"));
    }
}
