//! PersistentVolumeClaims (v1): the PVC strategy and its row.
//!
//! Stored, defaulted and validated as upstream; no volume is provisioned or bound, so a claim stays
//! `Pending` (docs/simulator.md).

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    field::required,
    printer::{AGE, Ages, Column, NAME, Printer, age, text},
};

/// v1 `persistentvolumeclaims`.
///
/// Stored only: no volume is provisioned or bound, so a claim stays Pending (docs/simulator.md).
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
    scope: Scope::Namespaced,
    short_names: &["pvc"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &["status"],
    strategy: &PersistentVolumeClaimStrategy,
};

/// The PersistentVolumeClaim strategy.
#[derive(Debug)]
pub struct PersistentVolumeClaimStrategy;

impl Strategy for PersistentVolumeClaimStrategy {
    /// Also counted under its legacy quota name (`pkg/quota/v1/evaluator/core/registry.go`).
    fn quota(&self) -> crate::kinds::QuotaCharge {
        crate::kinds::QuotaCharge::ObjectCount { legacy_name: true }
    }

    /// `ReturnDeletedObject: true` in the kind's `NewREST`
    /// (pkg/registry/core/persistentvolumeclaim/storage/storage.go).
    fn returns_deleted_object(&self) -> bool {
        true
    }

    /// core/v1 `SetDefaults_PersistentVolumeClaim` and `SetDefaults_PersistentVolumeClaimSpec`.
    fn defaults(&self, object: &mut Value) {
        if object["status"]["phase"].as_str().is_none_or(str::is_empty) {
            object["status"]["phase"] = json!("Pending");
        }
        if object["spec"].is_object() && object["spec"]["volumeMode"].is_null() {
            object["spec"]["volumeMode"] = json!("Filesystem");
        }
    }

    /// `ValidatePersistentVolumeClaimSpec` (pkg/apis/core/validation/validation.go).
    fn validate(&self, object: &Value, _old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        let spec = &object["spec"];
        if spec["accessModes"].as_array().is_none_or(Vec::is_empty) {
            causes.push(required("spec.accessModes", "at least 1 access mode is required"));
        }
        if spec["resources"]["requests"]["storage"].is_null() {
            causes.push(required("spec.resources[storage]", ""));
        }
        causes
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: persistentvolumeclaim_row, columns: &[
    NAME,
    Column("Status", "string", 0, "phase represents the current phase of PersistentVolumeClaim."),
    Column("Volume", "string", 0, "volumeName is the binding reference to the PersistentVolume backing this claim."),
    Column("Capacity", "string", 0, "capacity represents the actual resources of the underlying volume."),
    Column("Access Modes", "string", 0, "accessModes contains the actual access modes the volume backing the PVC has."),
    Column("StorageClass", "string", 0, "StorageClass of the pvc"),
    Column("VolumeAttributesClass", "string", 0, "VolumeAttributesClass of the pvc"),
    AGE,
    Column("VolumeMode", "string", 1, "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec."),
] };

/// printers.go `printPersistentVolumeClaim`: capacity and access modes only once bound to a
/// volume; the class from the beta annotation, else `spec.storageClassName`.
fn persistentvolumeclaim_row(pvc: &Value, now: Ages) -> Vec<Value> {
    let spec = &pvc["spec"];
    let phase = if pvc["metadata"]["deletionTimestamp"].is_null() {
        text(&pvc["status"]["phase"]).to_string()
    } else {
        "Terminating".to_string()
    };
    let volume = text(&spec["volumeName"]);
    let (capacity, access_modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        // `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order.
        let modes = pvc["status"]["accessModes"].as_array().cloned().unwrap_or_default();
        let order = [
            ("ReadWriteOnce", "RWO"),
            ("ReadOnlyMany", "ROX"),
            ("ReadWriteMany", "RWX"),
            ("ReadWriteOncePod", "RWOP"),
        ];
        let shown: Vec<&str> = order
            .iter()
            .filter(|(mode, _)| modes.iter().any(|m| m == mode))
            .map(|(_, short)| *short)
            .collect();
        (text(&pvc["status"]["capacity"]["storage"]).to_string(), shown.join(","))
    };
    let class = pvc["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"]
        .as_str()
        .unwrap_or_else(|| text(&spec["storageClassName"]));
    let attributes_class =
        spec["volumeAttributesClassName"].as_str().filter(|c| !c.is_empty()).unwrap_or("<unset>");
    let volume_mode = spec["volumeMode"].as_str().unwrap_or("<unset>");
    vec![
        pvc["metadata"]["name"].clone(),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(access_modes),
        json!(class),
        json!(attributes_class),
        age(pvc, now),
        json!(volume_mode),
    ]
}
