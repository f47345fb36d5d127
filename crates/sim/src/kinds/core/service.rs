//! Services (v1): the Service strategy and its row.
//!
//! Upstream: pkg/registry/core/service/strategy.go, `SetDefaults_Service`; names are DNS-1035
//! labels. No cluster IP is allocated.

use crate::kinds::{Kind, NameRule, Scope, Strategy, default_key, object_mut};
use serde_json::{Value, json};

/// v1 `services`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    scope: Scope::Namespaced,
    short_names: &["svc"],
    categories: &["all"],
    verbs: &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    subresources: &["status"],
    strategy: &ServiceStrategy,
};

/// The Service strategy.
#[derive(Debug)]
pub struct ServiceStrategy;

impl Strategy for ServiceStrategy {
    /// Also counted under its legacy quota name (`pkg/quota/v1/evaluator/core/registry.go`).
    fn quota(&self) -> crate::kinds::QuotaCharge {
        crate::kinds::QuotaCharge::ObjectCount { legacy_name: true }
    }

    /// `ReturnDeletedObject: true` in the kind's `NewREST` (pkg/registry/core/service/storage).
    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035
    }

    /// core/v1/defaults.go `SetDefaults_Service`.
    fn defaults(&self, object: &mut Value) {
        let Some(spec) = object_mut(object, "spec") else { return };
        default_key(spec, "type", json!("ClusterIP"));
        default_key(spec, "sessionAffinity", json!("None"));
        if let Some(Value::Array(ports)) = spec.get_mut("ports") {
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                default_key(port, "protocol", json!("TCP"));
                if let Some(number) = port.get("port").cloned() {
                    default_key(port, "targetPort", number);
                }
            }
        }
        if spec.get("type") != Some(&json!("ExternalName")) {
            default_key(spec, "internalTrafficPolicy", json!("Cluster"));
            default_key(spec, "ipFamilyPolicy", json!("SingleStack"));
            default_key(spec, "ipFamilies", json!(["IPv4"]));
        }
    }

    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"]
    }
}
