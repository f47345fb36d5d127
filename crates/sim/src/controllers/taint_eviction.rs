//! NoExecute taint eviction: pods on a node with a NoExecute taint they do not tolerate are
//! deleted; with `tolerationSeconds`, once that time has passed.
//!
//! Upstream `pkg/controller/tainteviction/taint_eviction.go` (v1.33, the
//! `taint-eviction-controller`): `processPodOnNode` deletes at once when a NoExecute taint is
//! not tolerated, otherwise after the smallest `tolerationSeconds` of the matching tolerations
//! (`getMinTolerationTime`); the pod first gets the `DisruptionTarget` condition
//! (`DeletionByTaintManager`) and the Normal event `TaintManagerEviction` "Marking for deletion
//! Pod <ns>/<name>".

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::{
    api::core::v1::{Node, Pod},
    jiff::{SignedDuration, Timestamp},
};
use serde_json::json;

use super::{
    Env, Error, Key, Result, Wake,
    events::{EventType, Involved, Source},
    timestamp,
    undecodable::decode_or_skip,
};
use crate::{
    k8s::{
        schedule::set_pod_condition,
        taints::{TaintEffect, find_untolerated_taint, tolerates_taint},
    },
    store::{self, DeleteOptions, DryRun, Stored, Subresource},
};

/// Pods with a pending eviction (by uid): when it is due.
#[derive(Debug, Default)]
pub(crate) struct TaintEviction {
    due: HashMap<String, Timestamp>,
}

impl TaintEviction {
    /// Checks the changed pods, and every bound pod when nodes changed.
    pub(crate) fn run(
        &mut self,
        env: &mut Env<'_>,
        changed: &BTreeSet<Key>,
        nodes_changed: bool,
    ) -> Result<()> {
        let tainted: Vec<&Node> = env
            .nodes
            .iter()
            .filter(|n| {
                n.spec
                    .as_ref()
                    .and_then(|s| s.taints.as_ref())
                    .is_some_and(|t| t.iter().any(|t| t.effect == "NoExecute"))
            })
            .collect();
        if tainted.is_empty() {
            self.due.clear();
            return Ok(());
        }
        let mut pods: Vec<Pod> = Vec::new();
        if nodes_changed {
            let bound = |stored: &Stored| stored.json.contains("\"nodeName\"");
            for stored in env.ctx.store.list("pods", None, &bound, None, None).items {
                pods.extend(decode_or_skip::<Pod>(&stored));
            }
        } else {
            for (namespace, name) in changed {
                if let Some(stored) = env.ctx.store.get("pods", namespace, name) {
                    pods.extend(decode_or_skip::<Pod>(&stored));
                }
            }
        }
        for pod in pods {
            let Some(node_name) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) else { continue };
            let Some(node) = tainted.iter().find(|n| n.metadata.name.as_deref() == Some(node_name.as_str()))
            else {
                continue;
            };
            if pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            self.process(env, &pod, node)?;
        }
        Ok(())
    }

    fn process(&mut self, env: &mut Env<'_>, pod: &Pod, node: &Node) -> Result<()> {
        let now = env.ctx.now;
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let taints: Vec<_> = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|t| t.effect == "NoExecute")
            .collect();
        let tolerations = pod.spec.as_ref().and_then(|s| s.tolerations.clone()).unwrap_or_default();
        let at = if find_untolerated_taint(&taints, &tolerations, &[TaintEffect::NoExecute]).is_some() {
            now
        } else {
            // `getMinTolerationTime` over the tolerations matching the taints; none set: never.
            let seconds = tolerations
                .iter()
                .filter(|t| taints.iter().any(|taint| tolerates_taint(t, taint)))
                .filter_map(|t| t.toleration_seconds)
                .min();
            let Some(seconds) = seconds else {
                self.due.remove(&uid);
                return Ok(());
            };
            *self
                .due
                .entry(uid.clone())
                .or_insert_with(|| now.checked_add(SignedDuration::from_secs(seconds.max(0))).unwrap_or(now))
        };
        let key = (
            pod.metadata.namespace.clone().unwrap_or_default(),
            pod.metadata.name.clone().unwrap_or_default(),
        );
        if at > now {
            env.timers.at(at, Wake::Pod(key));
            return Ok(());
        }
        self.due.remove(&uid);
        let (store, types) = (env.ctx.store, env.ctx.types);
        if let Ok(mut value) = store.get_value(&types.pods, &key.0, &key.1) {
            let condition = json!({
                "type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
                "lastTransitionTime": timestamp(now),
                "reason": "DeletionByTaintManager", "message": "Taint manager: deleting due to NoExecute taint",
            });
            if set_pod_condition(&mut value, condition) {
                let _ = store.update(&types.pods, value, Subresource::Status, DryRun::Off);
            }
        }
        env.recorder.record(
            &env.ctx,
            &Involved::of_pod(pod),
            EventType::Normal,
            "TaintManagerEviction",
            &format!("Marking for deletion Pod {}/{}", key.0, key.1),
            &Source::component("taint-eviction-controller"),
        );
        let options = DeleteOptions { precondition_uid: Some(uid), ..Default::default() };
        match store.delete(&types.pods, &key.0, &key.1, &options) {
            Ok(_) | Err(store::Error::NotFound { .. } | store::Error::Conflict { .. }) => Ok(()),
            Err(error) => Err(Error::Store(error)),
        }
    }
}
