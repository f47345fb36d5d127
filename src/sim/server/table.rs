//! meta.k8s.io/v1 `Table` responses with kubectl's columns and value formatting.
//!
//! (Skeleton: the generic column set only; the per-kind columns are filled in by the simulated
//! cluster A work.)

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::sim::resources::ResourceType;

/// Renders `objects` (full objects of type `rt`) as a `Table` whose rows carry
/// `PartialObjectMetadata` (the server default `includeObject=Metadata`).
pub fn render(rt: &ResourceType, objects: &[Value], resource_version: &str, now: Timestamp) -> Value {
    let _ = (rt, now);
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            json!({
                "cells": [object["metadata"]["name"], object["metadata"]["creationTimestamp"]],
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": object["metadata"],
                },
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0},
            {"name": "Created At", "type": "date", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0},
        ],
        "rows": rows,
    })
}
