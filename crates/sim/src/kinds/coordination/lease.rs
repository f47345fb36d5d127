//! Leases (coordination.k8s.io/v1): the row and the printer (HOLDER).

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, or_none, text},
};

/// coordination.k8s.io/v1 `leases`.
pub static KIND: Kind = Kind {
    group: "coordination.k8s.io",
    version: "v1",
    kind: "Lease",
    plural: "leases",
    scope: Scope::Namespaced,
    short_names: &[],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &LeaseStrategy,
};

/// The Lease strategy.
#[derive(Debug)]
pub struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: lease_row, columns: &[
    NAME,
    Column("Holder", "string", 0, "The holder of the lease"),
    AGE,
] };

fn lease_row(lease: &Value, now: Ages) -> Vec<Value> {
    vec![
        lease["metadata"]["name"].clone(),
        json!(or_none(text(&lease["spec"]["holderIdentity"]))),
        age(lease, now),
    ]
}
