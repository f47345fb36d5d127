//! ServiceAccounts (v1): the row and the printer; no token is issued.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age},
};

/// v1 `serviceaccounts`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    scope: Scope::Namespaced,
    short_names: &["sa"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &ServiceAccountStrategy,
};

/// The ServiceAccount strategy.
#[derive(Debug)]
pub struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    /// `ReturnDeletedObject: true` in the kind's `NewREST` (pkg/registry/core/serviceaccount/storage).
    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: serviceaccount_row, columns: &[
    NAME,
    Column("Secrets", "string", 0, "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."),
    AGE,
] };

fn serviceaccount_row(sa: &Value, now: Ages) -> Vec<Value> {
    let secrets = sa["secrets"].as_array().map_or(0, Vec::len);
    vec![sa["metadata"]["name"].clone(), json!(secrets), age(sa, now)]
}
