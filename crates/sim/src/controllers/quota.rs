//! The ResourceQuota controller: `status.hard` from `spec.hard`, `status.used` recomputed from the namespace's objects.
//!
//! Upstream `pkg/controller/resourcequota/resource_quota_controller.go` `syncResourceQuota`
//! (v1.33): `hard` is a copy of `spec.hard`; `used` starts from the previous `status.used`,
//! takes what `quota.CalculateUsage` (`apiserver/pkg/quota/v1/resources.go`) measures for the
//! names some evaluator matches, and is masked to the `hard` names; the status is written only
//! when it differs ("dirty"). A bare `nvidia.com/gpu` or `limits.nvidia.com/gpu` key is matched
//! by no evaluator, so it is never filled in `used`. Upstream recomputes on replenishment events
//! (pod deleted or terminal) and at a 5-minute resync; here every change to a quota, a pod, or an
//! object added to or removed from a namespace with quotas recomputes that namespace, which
//! reaches the same states without a periodic timer.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{Ctx, Error, Result};
use crate::{
    registry::quota::{self, Amount, Evaluator, Usage},
    resources::{self, ResourceType},
    store::{self, DryRun, EventType, Stored, Subresource},
};

/// Which namespaces need their quotas recomputed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pending {
    /// Every namespace (start, or a watch feed that fell behind).
    Everything,
    /// These namespaces.
    Namespaces(BTreeSet<String>),
}

/// The quota status controller.
#[derive(Debug)]
pub(crate) struct QuotaStatus {
    pending: Pending,
}

impl Default for QuotaStatus {
    fn default() -> Self {
        QuotaStatus { pending: Pending::Everything }
    }
}

impl QuotaStatus {
    /// Every quota is recomputed at the next run.
    pub(crate) fn resync(&mut self) {
        self.pending = Pending::Everything;
    }

    /// Marks the namespace of a changed object whose change can move a quota's usage.
    pub(crate) fn observe(&mut self, event: &store::Event) {
        let object = &event.object;
        if object.namespace.is_empty() {
            return;
        }
        let relevant = match object.group_resource.as_str() {
            "resourcequotas" | "pods" => true,
            other => Evaluator::for_resource(other).is_some() && event.event_type != EventType::Modified,
        };
        if let (true, Pending::Namespaces(namespaces)) = (relevant, &mut self.pending) {
            namespaces.insert(object.namespace.clone());
        }
    }

    /// Whether a run has anything to do.
    pub(crate) fn has_work(&self) -> bool {
        match &self.pending {
            Pending::Everything => true,
            Pending::Namespaces(namespaces) => !namespaces.is_empty(),
        }
    }

    /// Recomputes the quotas of every marked namespace.
    pub(crate) fn run(&mut self, ctx: &Ctx<'_>, types: &[ResourceType]) -> Result<()> {
        let pending = std::mem::replace(&mut self.pending, Pending::Namespaces(BTreeSet::new()));
        let rt =
            resources::find(types, "", "v1", "resourcequotas").ok_or(Error::MissingType("resourcequotas"))?;
        let all = |_: &Stored| true;
        let namespace_filter = match &pending {
            Pending::Everything => None,
            Pending::Namespaces(namespaces) => Some(namespaces),
        };
        let quotas = ctx.store.list("resourcequotas", None, &all, None, None).items;
        let mut by_namespace: std::collections::BTreeMap<&str, Vec<&Stored>> = Default::default();
        for stored in &quotas {
            if namespace_filter.is_none_or(|namespaces| namespaces.contains(&stored.namespace)) {
                by_namespace.entry(stored.namespace.as_str()).or_default().push(stored);
            }
        }
        for (namespace, quotas) in by_namespace {
            let mut objects = NamespaceObjects { ctx, types, namespace, pods: None };
            for stored in quotas {
                let current = stored.value().map_err(Error::Store)?;
                let Some(status) = next_status(&current, &mut objects, ctx.now)? else { continue };
                let mut updated = current;
                updated["status"] = status;
                match ctx.store.update(rt, updated, Subresource::Status, DryRun::Off) {
                    // A concurrent charge by admission changed the quota; its event brings the
                    // namespace back here.
                    Ok(_) | Err(store::Error::Conflict { .. } | store::Error::NotFound { .. }) => {}
                    Err(error) => return Err(Error::Store(error)),
                }
            }
        }
        Ok(())
    }
}

/// What one namespace holds, read once per run.
struct NamespaceObjects<'a> {
    ctx: &'a Ctx<'a>,
    types: &'a [ResourceType],
    namespace: &'a str,
    pods: Option<Vec<Value>>,
}

impl NamespaceObjects<'_> {
    fn pods(&mut self) -> Result<&[Value]> {
        if self.pods.is_none() {
            let all = |_: &Stored| true;
            let items = self.ctx.store.list("pods", Some(self.namespace), &all, None, None).items;
            let pods = items
                .iter()
                .map(|stored| stored.value().map_err(Error::Store))
                .collect::<Result<Vec<_>>>()?;
            self.pods = Some(pods);
        }
        Ok(self.pods.as_deref().unwrap_or_default())
    }

    /// How many objects of a served namespaced `group_resource` there are; `None` when no such
    /// type is served (upstream has no evaluator for it then).
    fn count(&self, group_resource: &str) -> Option<usize> {
        self.types.iter().find(|rt| rt.namespaced() && rt.group_resource() == group_resource)?;
        let all = |_: &Stored| true;
        Some(self.ctx.store.list(group_resource, Some(self.namespace), &all, None, None).items.len())
    }
}

/// The group-resource an object-count quota name counts: `count/deployments.apps` or a legacy
/// name such as `configmaps`.
fn counted_resource(name: &str) -> Option<&str> {
    let resource = name.strip_prefix("count/").unwrap_or(name);
    match Evaluator::for_resource(resource)? {
        Evaluator::ObjectCount { count_name, legacy_name } => {
            (count_name == name || legacy_name.as_deref() == Some(name)).then_some(resource)
        }
        Evaluator::Pods => None,
    }
}

/// `CalculateUsage` for one quota: each evaluator's usage of the names it matches.
fn calculate_usage(
    quota: &Value,
    hard: &Usage,
    objects: &mut NamespaceObjects<'_>,
    now: Timestamp,
) -> Result<Usage> {
    let selectors = quota::scope_selectors(quota);
    let mut used = Usage::new();
    let pods = Evaluator::Pods;
    let pod_names = pods.matching_resources(hard.keys());
    if !pod_names.is_empty() {
        // `CalculateUsageStats`: every tracked name starts at a DecimalSI zero.
        let mut stats: Usage = pod_names.iter().map(|name| (name.clone(), Amount::ZERO)).collect();
        for pod in objects.pods()? {
            if pods.matches_scopes(&selectors, pod) {
                stats = quota::add(&stats, &pods.usage(pod, now));
            }
        }
        used.extend(quota::mask(&stats, &pod_names));
    }
    for name in hard.keys() {
        let Some(resource) = counted_resource(name) else { continue };
        // Object counts match no scope (`MatchesNoScopeFunc`): a scoped quota counts zero.
        let count = if selectors.is_empty() { objects.count(resource) } else { Some(0) };
        if let Some(count) = count {
            used.insert(name.clone(), Amount::units(count as i64));
        }
    }
    Ok(used)
}

/// `syncResourceQuota`: the status to write, or `None` when it is unchanged.
fn next_status(quota: &Value, objects: &mut NamespaceObjects<'_>, now: Timestamp) -> Result<Option<Value>> {
    let hard = quota::add(&Usage::new(), &quota::usage_of(&quota["spec"]["hard"]));
    let old_hard = quota::usage_of(&quota["status"]["hard"]);
    let old_used = quota::usage_of(&quota["status"]["used"]);
    let mut used = old_used.clone();
    used.extend(calculate_usage(quota, &hard, objects, now)?);
    let used = quota::mask(&used, hard.keys());
    // Upstream is also dirty while `status.hard`/`status.used` is nil; an empty list is nil
    // once serialized (`omitempty`), and rewriting an unchanged object stores nothing upstream,
    // so here "changed" means a different hard or used.
    let dirty = !quota::equals(&hard, &old_hard) || !quota::equals(&used, &old_used);
    if !dirty {
        return Ok(None);
    }
    let mut status = json!({});
    if !hard.is_empty() {
        status["hard"] = quota::usage_json(&hard);
    }
    if !used.is_empty() {
        status["used"] = quota::usage_json(&used);
    }
    Ok(Some(status))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{controllers::Types, store::Store};

    fn store_with(objects: &[(&str, Value)]) -> (Store, Vec<ResourceType>) {
        let store = Store::in_memory().unwrap();
        let types = resources::built_in();
        let namespaces = resources::find(&types, "", "v1", "namespaces").unwrap();
        store
            .create(
                namespaces,
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}),
            )
            .unwrap();
        for (plural, object) in objects {
            let rt = resources::find(&types, "", "v1", plural).unwrap();
            store.create(rt, object.clone()).unwrap();
        }
        (store, types)
    }

    fn gpu_pod(name: &str) -> (&'static str, Value) {
        ("pods", crate::k8s::testing::pod(name).gpus("1").json())
    }

    #[test]
    fn used_counts_charged_pods_and_leaves_unmatched_keys_out() {
        let (store, types) = store_with(&[gpu_pod("a"), gpu_pod("b")]);
        let pods_rt = resources::find(&types, "", "v1", "pods").unwrap();
        let mut done = store.get_value(pods_rt, "default", "b").unwrap();
        done["status"]["phase"] = json!("Succeeded");
        store.update(pods_rt, done, Subresource::Status, DryRun::Off).unwrap();
        let resolved = Types::resolve(&types).unwrap();
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let ctx = Ctx { store: &store, types: &resolved, now };
        let quota = json!({"metadata": {"name": "q", "namespace": "default"},
                           "spec": {"hard": {"requests.nvidia.com/gpu": "2", "limits.nvidia.com/gpu": "2",
                                             "nvidia.com/gpu": "2", "count/pods": "9"}}});
        let mut objects = NamespaceObjects { ctx: &ctx, types: &types, namespace: "default", pods: None };
        let status = next_status(&quota, &mut objects, now).unwrap().expect("a first sync writes");
        assert_eq!(
            status,
            json!({"hard": {"count/pods": "9", "limits.nvidia.com/gpu": "2", "nvidia.com/gpu": "2",
                            "requests.nvidia.com/gpu": "2"},
                   "used": {"count/pods": "2", "requests.nvidia.com/gpu": "1"}})
        );
        let mut synced = quota.clone();
        synced["status"] = status;
        assert_eq!(next_status(&synced, &mut objects, now).unwrap(), None, "unchanged: nothing to write");
    }

    #[test]
    fn count_names_map_to_their_resources() {
        assert_eq!(counted_resource("count/deployments.apps"), Some("deployments.apps"));
        assert_eq!(counted_resource("configmaps"), Some("configmaps"));
        assert_eq!(counted_resource("count/configmaps"), Some("configmaps"));
        assert_eq!(counted_resource("deployments.apps"), None);
        assert_eq!(counted_resource("count/pods"), None, "the pod evaluator counts pods");
        assert_eq!(counted_resource("requests.nvidia.com/gpu"), None);
    }
}
