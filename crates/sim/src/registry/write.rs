//! Create, update (of the object or its status), binding and delete as the generic registry runs
//! them (`apiserver/pkg/registry/generic/registry/store.go`), with the namespace cascade.

use std::sync::Arc;

use k8s_openapi::jiff::SignedDuration;
use serde_json::{Value, json};

use super::{
    admission::{self, admit, invalid},
    meta,
};
use crate::{
    kinds::{self, DeletionRule, field::required},
    resources::ResourceType,
    store::{
        Binding, DeleteOptions, Deletion, Error, Propagation, Result, Stored, Subresource, Txn, not_found,
    },
};

/// Upstream's text for a stale resourceVersion (`storage.NewConflictError` via
/// `apiserver/pkg/registry/generic/registry/store.go`, `OptimisticLockErrorMsg`).
pub const OPTIMISTIC_LOCK_MESSAGE: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// Metadata fields the server owns; a client's values are ignored on update.
const SYSTEM_METADATA: &[&str] =
    &["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"];

fn has_status(rt: &ResourceType) -> bool {
    rt.subresources.iter().any(|sub| sub == "status")
}

/// Create (`rest.BeforeCreate` + the type's `PrepareForCreate`, then validation and storage).
pub(super) fn create(txn: &mut Txn<'_>, rt: &ResourceType, mut object: Value) -> Result<Arc<Stored>> {
    let group_resource = rt.group_resource();
    if !object.is_object() {
        return Err(Error::BadRequest(format!(
            "the object provided is unrecognized (must be of type {})",
            rt.kind
        )));
    }
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    object["apiVersion"] = Value::String(rt.api_version());
    object["kind"] = Value::String(rt.kind.clone());
    if object["metadata"]["resourceVersion"].as_str().is_some_and(|rv| !rv.is_empty()) {
        return Err(Error::BadRequest("resourceVersion should not be set on objects to be created".into()));
    }
    let metadata = object["metadata"].as_object_mut().expect("metadata is an object");
    let namespace = if rt.namespaced() {
        let namespace = metadata.get("namespace").and_then(Value::as_str).unwrap_or_default().to_string();
        if namespace.is_empty() {
            return Err(Error::BadRequest(
                "the namespace of the object must be set for a namespaced resource".into(),
            ));
        }
        namespace
    } else {
        metadata.remove("namespace");
        String::new()
    };
    let mut name = metadata.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
    let generate = metadata.get("generateName").and_then(Value::as_str).unwrap_or_default().to_string();
    if name.is_empty() && !generate.is_empty() {
        // Upstream retries a clashing generated name (RetryGenerateName, GA in 1.32).
        name = meta::generated_name(&generate);
        for _ in 0..7 {
            if txn.get(&group_resource, &namespace, &name).is_none() {
                break;
            }
            name = meta::generated_name(&generate);
        }
        metadata.insert("name".into(), Value::String(name.clone()));
    }
    if name.is_empty() {
        return Err(invalid(rt, "", vec![required("metadata.name", "name or generateName is required")]));
    }
    if rt.namespaced() {
        match txn.get("namespaces", "", &namespace) {
            None => return Err(not_found("namespaces", &namespace)),
            Some(ns) if is_deleting(&ns.value()?) => {
                return Err(Error::NamespaceTerminating { resource: group_resource, name, namespace });
            }
            Some(_) => {}
        }
    }
    if txn.get(&group_resource, &namespace, &name).is_some() {
        return Err(Error::AlreadyExists { resource: group_resource, name });
    }
    for field in SYSTEM_METADATA {
        metadata.remove(*field);
    }
    metadata.insert("uid".into(), Value::String(meta::new_uid()));
    metadata.insert("creationTimestamp".into(), Value::String(meta::timestamp(txn.now)));
    let strategy = rt.strategy();
    if strategy.tracks_generation() {
        metadata.insert("generation".into(), json!(1));
    } else {
        metadata.remove("generation");
    }
    strategy.decode_defaults(&mut object);
    strategy.reset_status_for_create(&mut object, has_status(rt));
    meta::normalise_quantities(&group_resource, &mut object);
    strategy.prepare_for_create(&mut object, txn.now);
    admission::mutate_on_create(txn, &group_resource, &mut object)?;
    admit(rt, &mut object, None)?;
    admission::validate_on_write(txn, &group_resource, &object, None)?;
    admission::charge_quotas(txn, &group_resource, &namespace, &object)?;
    txn.put(&group_resource, object)
}

/// `BindingREST.setPodNodeAndMetadata` (pkg/registry/core/pod/storage/storage.go): the pod's
/// `spec.nodeName` and its PodScheduled=True condition (`podutil.UpdatePodCondition`: the
/// transition time moves only when the status changes) in one write, so a watcher sees one
/// MODIFIED event as on a real cluster; an ordinary update of `nodeName` is refused
/// (`kinds::core::pod`). Refused, with upstream's texts, for another uid (the
/// binding's precondition), a pod being deleted, one already assigned and a gated one.
pub(super) fn bind(txn: &mut Txn<'_>, current: &Arc<Stored>, binding: &Binding) -> Result<Arc<Stored>> {
    let old = current.value()?;
    let name = &current.name;
    // Storage preconditions come back as conflicts on the pod (`InterpretUpdateError`); any
    // other refusal as one on `pods/binding` (`assignPod` wraps the plain errors of
    // `setPodNodeAndMetadata`, pkg/registry/core/pod/storage/storage.go).
    let actual_uid = old["metadata"]["uid"].as_str().unwrap_or_default();
    if let Some(uid) = binding.uid.as_deref().filter(|uid| *uid != actual_uid) {
        return Err(conflict(
            &current.group_resource,
            name,
            format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual_uid}"),
        ));
    }
    if binding.resource_version.as_deref().is_some_and(|rv| rv != current.revision.to_string()) {
        return Err(conflict(&current.group_resource, name, OPTIMISTIC_LOCK_MESSAGE.to_string()));
    }
    let refuse = |reason: String| Err(conflict("pods/binding", name, reason));
    if old["metadata"].get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return refuse(format!("pod {name} is being deleted, cannot be assigned to a host"));
    }
    if let Some(assigned) = old["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return refuse(format!("pod {name} is already assigned to node \"{assigned}\""));
    }
    if old["spec"]["schedulingGates"].as_array().is_some_and(|gates| !gates.is_empty()) {
        return refuse(format!("pod {name} has non-empty .spec.schedulingGates"));
    }
    let mut pod = old.clone();
    pod["spec"]["nodeName"] = json!(binding.node);
    if !binding.annotations.is_empty() {
        if !pod["metadata"]["annotations"].is_object() {
            pod["metadata"]["annotations"] = json!({});
        }
        for (key, value) in &binding.annotations {
            pod["metadata"]["annotations"][key] = value.clone();
        }
    }
    crate::k8s::schedule::set_pod_condition(
        &mut pod,
        json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null,
               "lastTransitionTime": meta::timestamp(txn.now)}),
    );
    // Upstream's binding writes storage directly: no update validation (`ValidatePodUpdate`
    // refuses a nodeName change, which is what a binding is) and no admission.
    txn.put(&current.group_resource, pod)
}

/// Update of the object or its status (`rest.BeforeUpdate` + `PrepareForUpdate`).
pub(super) fn update(
    txn: &mut Txn<'_>,
    rt: &ResourceType,
    current: &Arc<Stored>,
    mut object: Value,
    subresource: Subresource,
) -> Result<Arc<Stored>> {
    let group_resource = rt.group_resource();
    let old = current.value()?;
    if !object.is_object() || !object["metadata"].is_object() {
        return Err(Error::BadRequest(format!(
            "the object provided is unrecognized (must be of type {})",
            rt.kind
        )));
    }
    let stale = object["metadata"]["resourceVersion"]
        .as_str()
        .is_some_and(|rv| !rv.is_empty() && rv != current.revision.to_string());
    if stale {
        return Err(conflict(&group_resource, &current.name, OPTIMISTIC_LOCK_MESSAGE.to_string()));
    }
    if let Some(uid) = object["metadata"]["uid"].as_str().filter(|uid| !uid.is_empty())
        && uid != old["metadata"]["uid"].as_str().unwrap_or_default()
    {
        let reason = format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            old["metadata"]["uid"].as_str().unwrap_or_default()
        );
        return Err(conflict(&group_resource, &current.name, reason));
    }
    let mut new = match subresource {
        Subresource::Status => {
            // `ResetObjectMetaForStatus` + the status strategies: only status changes.
            let mut new = old.clone();
            new["status"] = object.get("status").cloned().unwrap_or(Value::Null);
            if let Some(managed) = object["metadata"].get("managedFields") {
                new["metadata"]["managedFields"] = managed.clone();
            }
            new
        }
        Subresource::Main => {
            object["apiVersion"] = Value::String(rt.api_version());
            object["kind"] = Value::String(rt.kind.clone());
            for field in SYSTEM_METADATA.iter().chain(["name", "namespace", "generation"].iter()) {
                match old["metadata"].get(*field) {
                    Some(value) => object["metadata"][*field] = value.clone(),
                    None => {
                        if let Some(metadata) = object["metadata"].as_object_mut() {
                            metadata.remove(*field);
                        }
                    }
                }
            }
            if has_status(rt) {
                match old.get("status") {
                    Some(status) => object["status"] = status.clone(),
                    None => {
                        if let Some(map) = object.as_object_mut() {
                            map.remove("status");
                        }
                    }
                }
            }
            object
        }
    };
    if new.get("status").is_some_and(Value::is_null)
        && let Some(map) = new.as_object_mut()
    {
        map.remove("status");
    }
    let strategy = rt.strategy();
    strategy.decode_defaults(&mut new);
    meta::normalise_quantities(&group_resource, &mut new);
    admit(rt, &mut new, Some(&old))?;
    admission::validate_on_write(txn, &group_resource, &new, Some(&old))?;
    strategy.prepare_for_update(&mut new, &old);
    if subresource == Subresource::Main
        && strategy.tracks_generation()
        && strategy.generation_relevant(&new) != strategy.generation_relevant(&old)
    {
        let generation = old["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
        new["metadata"]["generation"] = json!(generation);
    }
    new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
    if new == old {
        // Upstream skips the write when nothing changed: no new resourceVersion, no event.
        return Ok(current.clone());
    }
    let stored = txn.put(&group_resource, new)?;
    finish_if_finalized(txn, &stored)
}

/// Removes an object whose deletion was only waiting for its finalizers (`store.go`,
/// `shouldDeleteDuringUpdate`).
fn finish_if_finalized(txn: &mut Txn<'_>, stored: &Arc<Stored>) -> Result<Arc<Stored>> {
    let object = stored.value()?;
    let metadata = &object["metadata"];
    let deleting = metadata.get("deletionTimestamp").is_some_and(|t| !t.is_null());
    let no_finalizers = metadata["finalizers"].as_array().is_none_or(|f| f.is_empty());
    let grace = metadata["deletionGracePeriodSeconds"].as_i64().unwrap_or(0);
    // A namespace goes only once it is empty ([`finish_namespace`]).
    let ordinary = kinds::strategy(&stored.group_resource).deletion() == DeletionRule::Ordinary;
    if deleting && no_finalizers && grace == 0 && ordinary {
        return remove(txn, stored);
    }
    Ok(stored.clone())
}

fn conflict(resource: &str, name: &str, reason: String) -> Error {
    Error::Conflict { resource: resource.to_string(), name: name.to_string(), reason }
}

/// Delete (`store.go` `Delete` + `rest.BeforeDelete` + the pod strategy's
/// `CheckGracefulDelete`).
pub(super) fn delete(txn: &mut Txn<'_>, current: &Arc<Stored>, options: &DeleteOptions) -> Result<Deletion> {
    let group_resource = current.group_resource.clone();
    let mut object = current.value()?;
    if let Some(uid) = options.precondition_uid.as_deref() {
        let actual = object["metadata"]["uid"].as_str().unwrap_or_default();
        if uid != actual {
            let reason =
                format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}");
            return Err(conflict(&group_resource, &current.name, reason));
        }
    }
    if let Some(rv) = options.precondition_resource_version.as_deref() {
        let actual = current.revision.to_string();
        if rv != actual {
            let reason = format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
            );
            return Err(conflict(&group_resource, &current.name, reason));
        }
    }
    let strategy = kinds::strategy(&group_resource);
    if strategy.deletion() == DeletionRule::EmptiesNamespace {
        return delete_namespace(txn, current, object);
    }
    let already_deleting = is_deleting(&object);
    let grace = strategy.grace_period(&object, options.grace_period_seconds);

    // Propagation finalizers (`store.go` `updateForGracefulDeletionAndFinalizers`).
    let mut finalizers: Vec<String> = object["metadata"]["finalizers"]
        .as_array()
        .map(|f| f.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let wanted = match options.propagation {
        Some(Propagation::Orphan) => Some("orphan"),
        Some(Propagation::Foreground) => Some("foregroundDeletion"),
        Some(Propagation::Background) | None => None,
    };
    let mut finalizers_changed = false;
    if let Some(wanted) = wanted {
        finalizers.retain(|f| f != "orphan" && f != "foregroundDeletion");
        finalizers.push(wanted.to_string());
        finalizers_changed = true;
    } else if options.propagation == Some(Propagation::Background) {
        let before = finalizers.len();
        finalizers.retain(|f| f != "orphan" && f != "foregroundDeletion");
        finalizers_changed = before != finalizers.len();
    }

    if already_deleting {
        let pending_grace = object["metadata"]["deletionGracePeriodSeconds"].as_i64().unwrap_or(0);
        // A shorter grace period shortens a pending graceful deletion; 0 ends it now.
        if grace.is_some_and(|g| g < pending_grace) || finalizers_changed {
            let grace = grace.unwrap_or(pending_grace).min(pending_grace);
            if finalizers.is_empty() && grace == 0 {
                return Ok(Deletion::Removed(remove(txn, current)?.value()?));
            }
            mark_deleting(txn, &mut object, grace, &finalizers);
            let stored = txn.put(&group_resource, object)?;
            return Ok(Deletion::Pending(stored.value()?));
        }
        return Ok(Deletion::Pending(object));
    }

    let grace = grace.unwrap_or(0);
    if finalizers.is_empty() && grace == 0 {
        return Ok(Deletion::Removed(remove(txn, current)?.value()?));
    }
    mark_deleting(txn, &mut object, grace, &finalizers);
    if strategy.tracks_generation()
        && let Some(generation) = object["metadata"]["generation"].as_i64()
        && generation > 0
    {
        object["metadata"]["generation"] = json!(generation + 1);
    }
    let stored = txn.put(&group_resource, object)?;
    Ok(Deletion::Pending(stored.value()?))
}

fn mark_deleting(txn: &Txn<'_>, object: &mut Value, grace: i64, finalizers: &[String]) {
    let at = txn.now.checked_add(SignedDuration::from_secs(grace)).unwrap_or(txn.now);
    object["metadata"]["deletionTimestamp"] = Value::String(meta::timestamp(at));
    object["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
    if finalizers.is_empty() {
        if let Some(metadata) = object["metadata"].as_object_mut() {
            metadata.remove("finalizers");
        }
    } else {
        object["metadata"]["finalizers"] = json!(finalizers);
    }
}

/// Removes the object and, when it was the last one in a terminating namespace, the namespace.
fn remove(txn: &mut Txn<'_>, current: &Arc<Stored>) -> Result<Arc<Stored>> {
    let removed = txn.remove(current)?;
    if !current.namespace.is_empty() {
        finish_namespace(txn, &current.namespace)?;
    }
    Ok(removed)
}

/// Namespace deletion: `Terminating` with a deletionTimestamp, every object in it deleted (as
/// the namespace controller would, `pkg/controller/namespace/deletion`), and the namespace
/// removed once empty — at once when nothing in it waits for graceful deletion or finalizers.
fn delete_namespace(txn: &mut Txn<'_>, current: &Arc<Stored>, mut object: Value) -> Result<Deletion> {
    if is_deleting(&object) {
        return Ok(Deletion::Pending(object));
    }
    object["metadata"]["deletionTimestamp"] = Value::String(meta::timestamp(txn.now));
    object["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    object["status"]["phase"] = json!("Terminating");
    let terminating = txn.put("namespaces", object)?;
    let defaults = DeleteOptions::default();
    for stored in txn.in_namespace(&current.name) {
        if !is_deleting(&stored.value()?) {
            delete(txn, &stored, &defaults)?;
        }
    }
    finish_namespace(txn, &current.name)?;
    match txn.get("namespaces", "", &current.name) {
        None => Ok(Deletion::Removed(terminating.value()?)),
        Some(still) => Ok(Deletion::Pending(still.value()?)),
    }
}

fn is_deleting(object: &Value) -> bool {
    object["metadata"].get("deletionTimestamp").is_some_and(|t| !t.is_null())
}

/// Removes a terminating namespace once nothing is left in it.
fn finish_namespace(txn: &mut Txn<'_>, namespace: &str) -> Result<()> {
    let Some(ns) = txn.get("namespaces", "", namespace) else { return Ok(()) };
    let object = ns.value()?;
    if is_deleting(&object) && txn.in_namespace(namespace).is_empty() {
        let finalizers = object["metadata"]["finalizers"].as_array().is_some_and(|f| !f.is_empty());
        if !finalizers {
            txn.remove(&ns)?;
        }
    }
    Ok(())
}
