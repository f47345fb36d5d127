//! ComponentStatuses (v1 `componentstatuses`, `cs`, deprecated since 1.19): answered, never stored.
//!
//! Upstream (v1.33) pkg/registry/core/componentstatus/rest.go: `List` and `Get` probe the
//! servers `componentStatusStorage.serversToValidate` names (pkg/registry/core/rest/
//! storage_core.go) — `controller-manager` and `scheduler` on their `/healthz`, and one
//! `etcd-<n>` per storage backend — and answer one `Healthy` condition each; `Get` of another
//! name is `Component not found: <name>`. The simulator's control plane is in process, so a
//! cluster with its one (stacked) etcd answers: all three healthy, `ok`. Every request gets the
//! deprecation `Warning` (the resource's `apihelpers` deprecation, `v1 ComponentStatus is
//! deprecated in v1.19+`). The server serves it as every [`Computed`] kind, from [`COMPUTED`].

use serde_json::{Value, json};

use crate::kinds::{
    Computed, Kind, Scope, Strategy,
    printer::{Ages, Column, NAME, Printer},
};

/// v1 `componentstatuses`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "ComponentStatus",
    plural: "componentstatuses",
    scope: Scope::Cluster,
    short_names: &["cs"],
    categories: &[],
    verbs: &["get", "list"],
    subresources: &[],
    strategy: &ComponentStatusStrategy,
};

/// The `Warning` every request on the resource is answered with.
pub const DEPRECATION_WARNING: &str = "v1 ComponentStatus is deprecated in v1.19+";

/// The components `serversToValidate` probes, in name order (upstream gathers them from
/// goroutines, in no order).
const COMPONENTS: &[&str] = &["controller-manager", "etcd-0", "scheduler"];

/// How the server answers the kind: computed at each request, never stored.
pub static COMPUTED: Computed = Computed { list: statuses, get, warning: Some(DEPRECATION_WARNING) };

/// The ComponentStatus strategy: its printer, and its objects computed, not stored.
#[derive(Debug)]
pub struct ComponentStatusStrategy;

impl Strategy for ComponentStatusStrategy {
    fn printer(&self) -> &'static Printer {
        &PRINTER
    }

    fn computed(&self) -> Option<&'static Computed> {
        Some(&COMPUTED)
    }
}

/// Every component's status, as `List` answers them (items without `kind`/`apiVersion`).
pub fn statuses() -> Vec<Value> {
    COMPONENTS.iter().map(|name| status(name)).collect()
}

/// One component's status as `Get` answers it; for a name `serversToValidate` lacks, `Get`'s
/// error (a plain error: 500, no reason).
pub fn get(name: &str) -> Result<Value, String> {
    if !COMPONENTS.contains(&name) {
        return Err(format!("Component not found: {name}"));
    }
    let mut object = status(name);
    object["kind"] = json!("ComponentStatus");
    object["apiVersion"] = json!("v1");
    Ok(object)
}

/// `getComponentStatus` of a healthy server: the probe's body `ok`, no error.
fn status(name: &str) -> Value {
    json!({
        "metadata": {"name": name, "creationTimestamp": null},
        "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
    })
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: component_status_row, columns: &[
    NAME,
    Column("Status", "string", 0, "Status of the component conditions"),
    Column("Message", "string", 0, "Message of the component conditions"),
    Column("Error", "string", 0, "Error of the component conditions"),
] };

/// printers.go `printComponentStatus`: `Healthy`/`Unhealthy` from the `Healthy` condition,
/// `Unknown` without one.
fn component_status_row(object: &Value, _now: Ages) -> Vec<Value> {
    let healthy = object["conditions"].as_array().into_iter().flatten().find(|c| c["type"] == "Healthy");
    let (status, message, error) = match healthy {
        Some(condition) => (
            if condition["status"] == "True" { "Healthy" } else { "Unhealthy" },
            condition["message"].as_str().unwrap_or_default(),
            condition["error"].as_str().unwrap_or_default(),
        ),
        None => ("Unknown", "", ""),
    };
    vec![object["metadata"]["name"].clone(), json!(status), json!(message), json!(error)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_component_is_healthy_and_others_are_not_found() {
        let all = statuses();
        let names: Vec<&str> = all.iter().filter_map(|s| s["metadata"]["name"].as_str()).collect();
        assert_eq!(names, COMPONENTS);
        let row = component_status_row(&get("etcd-0").unwrap(), Ages::Deferred);
        assert_eq!(row, [json!("etcd-0"), json!("Healthy"), json!("ok"), json!("")]);
        assert_eq!(get("kubelet").unwrap_err(), "Component not found: kubelet");
        assert_eq!(
            component_status_row(&json!({"metadata": {"name": "x"}}), Ages::Deferred)[1],
            json!("Unknown")
        );
    }
}
