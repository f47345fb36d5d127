//! The generic registry: the write path every kind goes through, in one store transaction.
//!
//! As kube-apiserver's generic store (`apiserver/pkg/registry/generic/registry/store.go`) with
//! `rest.BeforeCreate`/`BeforeUpdate`/`BeforeDelete`: names and `generateName`, uid and
//! timestamps, `resourceVersion` preconditions, status resets, `generation`, graceful deletion,
//! finalizers and propagation, the namespace cascade ([`write`]), each step asking the kind's
//! strategy (`sim::kinds`) what it does differently; the admission plugins kube-apiserver runs
//! by default where the simulator models them — Priority, RuntimeClass and ResourceQuota
//! ([`admission`], [`quota`]) — inside the same transaction.
//!
//! Its entry points are methods of [`Store`] (`create`, `update`, `modify`, `bind`, `delete`,
//! `delete_collection`, `write_each`), defined here on top of `Store::write`: every write with
//! object semantics goes through them, and the store module itself knows nothing of kinds or
//! admission. Layers: `server → registry → kinds → k8s`; the store never calls the server.

use serde_json::Value;

use super::{
    resources::ResourceType,
    store::{
        BatchWrite, Binding, DeleteOptions, Deletion, DryRun, Error, Outcome, Result, Store, Stored,
        Subresource, not_found,
    },
};

pub mod admission;
pub(crate) mod meta;
pub mod quota;
mod write;

impl Store {
    /// Creates an object of type `rt` (namespace from `metadata.namespace`), applying API
    /// defaults, validation and the create-time metadata; returns the stored object.
    pub fn create(&self, rt: &ResourceType, object: Value) -> Result<Value> {
        self.create_with(rt, object, DryRun::Off)
    }

    /// [`Store::create`] with `dryRun`.
    pub fn create_with(&self, rt: &ResourceType, object: Value, dry_run: DryRun) -> Result<Value> {
        self.write(dry_run, |txn| write::create(txn, rt, object)?.value())
    }

    /// Writes several objects of type `rt`, each succeeding or failing alone, in one transaction:
    /// one lock and one database commit for the lot (the event recorder's writes of a
    /// controller step). A failed write leaves nothing behind, as if it had its own transaction;
    /// the later ones see the earlier ones' writes (a quota charged twice is charged twice).
    /// The outer error is the commit's own (then nothing of the batch was written).
    pub fn write_each(&self, rt: &ResourceType, writes: Vec<BatchWrite>) -> Result<Vec<Result<()>>> {
        let group_resource = rt.group_resource();
        let mut outcomes = Vec::with_capacity(writes.len());
        self.write(DryRun::Off, |txn| {
            for write in writes {
                let savepoint = txn.savepoint();
                let outcome = match write {
                    BatchWrite::Create(object) => write::create(txn, rt, object).map(drop),
                    BatchWrite::Update(object) => {
                        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
                        let namespace = if rt.namespaced() { namespace } else { "" };
                        let name = object["metadata"]["name"].as_str().unwrap_or_default();
                        match txn.get(&group_resource, namespace, name) {
                            Some(current) => {
                                write::update(txn, rt, &current, object, Subresource::Main).map(drop)
                            }
                            None => Err(not_found(&group_resource, name)),
                        }
                    }
                };
                if outcome.is_err() {
                    txn.roll_back(savepoint);
                }
                outcomes.push(outcome);
            }
            Ok::<_, Error>(())
        })?;
        Ok(outcomes)
    }

    /// Replaces an object (PUT) or its status (`Subresource::Status`), with optimistic
    /// concurrency on `metadata.resourceVersion` when the object carries one.
    pub fn update(
        &self,
        rt: &ResourceType,
        object: Value,
        subresource: Subresource,
        dry_run: DryRun,
    ) -> Result<Value> {
        let namespace =
            if rt.namespaced() { object["metadata"]["namespace"].as_str().unwrap_or_default() } else { "" };
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let namespace = namespace.to_string();
        self.write(dry_run, |txn| {
            let current = txn
                .get(&rt.group_resource(), &namespace, &name)
                .ok_or_else(|| not_found(&rt.group_resource(), &name))?;
            write::update(txn, rt, &current, object, subresource)?.value()
        })
    }

    /// Reads the current object (`None` when absent), lets `change` compute the new one, and
    /// writes it, all under the store lock (upstream `GuaranteedUpdate`; no retry is needed).
    /// Absent + `Ok(object)` creates it. Used for PATCH and server-side apply.
    pub fn modify<E: From<Error>>(
        &self,
        rt: &ResourceType,
        namespace: &str,
        name: &str,
        subresource: Subresource,
        dry_run: DryRun,
        change: impl FnOnce(Option<Value>) -> Result<Value, E>,
    ) -> Result<(Value, Outcome), E> {
        let namespace = if rt.namespaced() { namespace } else { "" };
        self.write(dry_run, |txn| {
            let current = txn.get(&rt.group_resource(), namespace, name);
            let current_value = current.as_ref().map(|stored| stored.value()).transpose()?;
            let changed = change(current_value)?;
            match current {
                None => Ok((write::create(txn, rt, changed)?.value()?, Outcome::Created)),
                Some(current) => {
                    Ok((write::update(txn, rt, &current, changed, subresource)?.value()?, Outcome::Updated))
                }
            }
        })
    }

    /// Binds a pod to a node (`pods/binding`, what the scheduler posts): `spec.nodeName`, the
    /// binding's annotations and the PodScheduled condition in one write; see `write::bind`
    /// for what it refuses.
    pub fn bind(&self, rt: &ResourceType, namespace: &str, name: &str, binding: &Binding) -> Result<Value> {
        self.write(binding.dry_run, |txn| {
            let current = txn
                .get(&rt.group_resource(), namespace, name)
                .ok_or_else(|| not_found(&rt.group_resource(), name))?;
            write::bind(txn, &current, binding)?.value()
        })
    }

    /// Deletes an object as upstream does: preconditions, finalizers, graceful pod deletion,
    /// namespace cascade.
    pub fn delete(
        &self,
        rt: &ResourceType,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Deletion> {
        let namespace = if rt.namespaced() { namespace } else { "" };
        self.write(options.dry_run, |txn| {
            let current = txn
                .get(&rt.group_resource(), namespace, name)
                .ok_or_else(|| not_found(&rt.group_resource(), name))?;
            write::delete(txn, &current, options)
        })
    }

    /// Deletes every object of `rt` (in `namespace`, or all) that `keep` accepts, in one
    /// transaction; returns what each delete did.
    pub fn delete_collection(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        keep: &dyn Fn(&Stored) -> bool,
        options: &DeleteOptions,
    ) -> Result<Vec<Deletion>> {
        let page = self.list(&rt.group_resource(), namespace, keep, None, None);
        self.write(options.dry_run, |txn| {
            let mut done = Vec::new();
            for stored in page.items {
                // Skip objects a cascade in this same transaction already removed.
                if let Some(current) = txn.get(&stored.group_resource, &stored.namespace, &stored.name) {
                    done.push(write::delete(txn, &current, options)?);
                }
            }
            Ok(done)
        })
    }
}
