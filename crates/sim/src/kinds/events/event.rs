//! Events (events.k8s.io/v1): the row; printed as core/v1 Events are.

use crate::kinds::{ALL_VERBS, Kind, Scope, Strategy, printer::Printer};

/// events.k8s.io/v1 `events`.
pub static KIND: Kind = Kind {
    group: "events.k8s.io",
    version: "v1",
    kind: "Event",
    plural: "events",
    scope: Scope::Namespaced,
    short_names: &["ev"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &EventStrategy,
};

/// The Event strategy: printed as core/v1 Events are (printers.go `printEvent` serves both).
#[derive(Debug)]
pub struct EventStrategy;

impl Strategy for EventStrategy {
    /// Quota ignores events (`ignoredResources`, `pkg/quota/v1/install/registry.go`).
    fn quota(&self) -> crate::kinds::QuotaCharge {
        crate::kinds::QuotaCharge::Ignored
    }

    fn printer(&self) -> &'static Printer {
        &crate::kinds::core::event::PRINTER
    }
}
