//! Taints and tolerations: upstream `ToleratesTaint`, the first untolerated taint, and the default DaemonSet tolerations.
//!
//! Sources (Kubernetes v1.33): `staging/src/k8s.io/api/core/v1/toleration.go` (`ToleratesTaint`,
//! `MatchToleration`), `pkg/apis/core/v1/helper/helpers.go` (`TolerationsTolerateTaint`,
//! `FindMatchingUntoleratedTaint`, `AddOrUpdateTolerationInPodSpec`) and
//! `pkg/controller/daemon/util/daemonset_util.go` (`AddOrUpdateDaemonPodTolerations`).

use std::{fmt, str::FromStr};

use k8s_openapi::api::core::v1::{PodSpec, Taint, Toleration};

/// Errors of this module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A taint effect other than the three the API accepts.
    #[error("unknown taint effect {0:?} (expected NoSchedule, PreferNoSchedule or NoExecute)")]
    UnknownEffect(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Taint the node lifecycle controller puts on a node whose Ready condition is False.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Taint the node lifecycle controller puts on a node whose Ready condition is Unknown.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Taint mirroring `spec.unschedulable` (cordon).
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// Taint for the MemoryPressure node condition.
pub const TAINT_NODE_MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
/// Taint for the DiskPressure node condition.
pub const TAINT_NODE_DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
/// Taint for the PIDPressure node condition.
pub const TAINT_NODE_PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
/// Taint for the NetworkUnavailable node condition.
pub const TAINT_NODE_NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

/// The effect of a taint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaintEffect {
    /// New pods that do not tolerate it are not scheduled; running pods stay.
    NoSchedule,
    /// A soft NoSchedule: only a scoring preference.
    PreferNoSchedule,
    /// Pods that do not tolerate it are not scheduled and running ones are evicted.
    NoExecute,
}

impl TaintEffect {
    /// The effects the scheduler's TaintToleration filter and the DaemonSet controller's
    /// `predicates()` treat as "do not schedule" (`helper.DoNotScheduleTaintsFilterFunc`).
    pub const DO_NOT_SCHEDULE: &'static [TaintEffect] = &[TaintEffect::NoSchedule, TaintEffect::NoExecute];

    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

impl fmt::Display for TaintEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaintEffect {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text {
            "NoSchedule" => Ok(TaintEffect::NoSchedule),
            "PreferNoSchedule" => Ok(TaintEffect::PreferNoSchedule),
            "NoExecute" => Ok(TaintEffect::NoExecute),
            other => Err(Error::UnknownEffect(other.to_string())),
        }
    }
}

/// Whether one toleration tolerates one taint, exactly as upstream `Toleration.ToleratesTaint`
/// (`k8s.io/api/core/v1/toleration.go`):
/// an empty effect matches every effect; an empty key matches every key; operator `Exists`
/// matches any value; operator `Equal` or empty compares the values (an absent value is `""`);
/// any other operator tolerates nothing — the numeric `Lt`/`Gt` toleration operators arrived
/// behind a feature gate after 1.33 and are not part of v1.33's `ToleratesTaint`.
/// `tolerationSeconds` plays no part in matching.
///
/// ```
/// use k8s_openapi::api::core::v1::{Taint, Toleration};
/// use lab_runner_k8s::taints::tolerates_taint;
/// let taint = Taint { key: "nvidia.com/gpu".into(), value: Some("present".into()),
///                     effect: "NoSchedule".into(), ..Default::default() };
/// let exists = Toleration { key: Some("nvidia.com/gpu".into()), operator: Some("Exists".into()),
///                           ..Default::default() };
/// assert!(tolerates_taint(&exists, &taint));
/// ```
pub fn tolerates_taint(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("") {
        "" | "Equal" => toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// Whether any of the tolerations tolerates the taint (`v1helper.TolerationsTolerateTaint`).
///
/// ```
/// use k8s_openapi::api::core::v1::{Taint, Toleration};
/// use lab_runner_k8s::taints::tolerations_tolerate_taint;
/// let taint = Taint { key: "k".into(), effect: "NoExecute".into(), ..Default::default() };
/// assert!(!tolerations_tolerate_taint(&[], &taint));
/// ```
pub fn tolerations_tolerate_taint(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|toleration| tolerates_taint(toleration, taint))
}

/// The first taint, in the node's order, whose effect is one of `effects` and that no
/// toleration tolerates (`v1helper.FindMatchingUntoleratedTaint`). Taints with an effect
/// outside the API's three never match a filter, as upstream's effect comparison never does.
///
/// ```
/// use k8s_openapi::api::core::v1::Taint;
/// use lab_runner_k8s::taints::{find_untolerated_taint, TaintEffect};
/// let taints = vec![
///     Taint { key: "soft".into(), effect: "PreferNoSchedule".into(), ..Default::default() },
///     Taint { key: "node-role.kubernetes.io/control-plane".into(), effect: "NoSchedule".into(),
///             ..Default::default() },
/// ];
/// let found = find_untolerated_taint(&taints, &[], TaintEffect::DO_NOT_SCHEDULE).unwrap();
/// assert_eq!(found.key, "node-role.kubernetes.io/control-plane");
/// ```
pub fn find_untolerated_taint<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    effects: &[TaintEffect],
) -> Option<&'a Taint> {
    taints.iter().find(|taint| {
        let in_filter = taint.effect.parse::<TaintEffect>().is_ok_and(|effect| effects.contains(&effect));
        in_filter && !tolerations_tolerate_taint(tolerations, taint)
    })
}

/// Upstream `Toleration.MatchToleration`: two tolerations are "the same" when key, operator,
/// value and effect are equal (tolerationSeconds is not compared).
fn same_toleration(a: &Toleration, b: &Toleration) -> bool {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    text(&a.key) == text(&b.key)
        && text(&a.operator) == text(&b.operator)
        && text(&a.value) == text(&b.value)
        && text(&a.effect) == text(&b.effect)
}

/// Adds `toleration` to the spec, or replaces in place a toleration that matches it by key,
/// operator, value and effect (`v1helper.AddOrUpdateTolerationInPodSpec`). Returns whether
/// the spec changed.
///
/// ```
/// use k8s_openapi::api::core::v1::{PodSpec, Toleration};
/// use lab_runner_k8s::taints::add_or_update_toleration;
/// let mut spec = PodSpec::default();
/// let t = Toleration { key: Some("a".into()), operator: Some("Exists".into()), ..Default::default() };
/// assert!(add_or_update_toleration(&mut spec, &t));
/// assert!(!add_or_update_toleration(&mut spec, &t));
/// ```
pub fn add_or_update_toleration(spec: &mut PodSpec, toleration: &Toleration) -> bool {
    let existing = spec.tolerations.get_or_insert_with(Vec::new);
    match existing.iter_mut().find(|candidate| same_toleration(candidate, toleration)) {
        Some(candidate) if candidate == toleration => false,
        Some(candidate) => {
            *candidate = toleration.clone();
            true
        }
        None => {
            existing.push(toleration.clone());
            true
        }
    }
}

fn exists_toleration(key: &str, effect: TaintEffect) -> Toleration {
    Toleration {
        key: Some(key.to_string()),
        operator: Some("Exists".to_string()),
        effect: Some(effect.as_str().to_string()),
        ..Default::default()
    }
}

/// The tolerations the DaemonSet controller adds to every daemon pod, in upstream's order
/// (`daemonset_util.go` `AddOrUpdateDaemonPodTolerations`): not-ready and
/// unreachable `NoExecute` (no tolerationSeconds), then disk-pressure, memory-pressure,
/// pid-pressure and unschedulable `NoSchedule`, and network-unavailable `NoSchedule` only for
/// `hostNetwork: true` pods. All use operator `Exists`.
///
/// ```
/// use lab_runner_k8s::taints::daemon_pod_default_tolerations;
/// assert_eq!(daemon_pod_default_tolerations(false).len(), 6);
/// assert_eq!(daemon_pod_default_tolerations(true).len(), 7);
/// ```
pub fn daemon_pod_default_tolerations(host_network: bool) -> Vec<Toleration> {
    let mut tolerations = vec![
        exists_toleration(TAINT_NODE_NOT_READY, TaintEffect::NoExecute),
        exists_toleration(TAINT_NODE_UNREACHABLE, TaintEffect::NoExecute),
        exists_toleration(TAINT_NODE_DISK_PRESSURE, TaintEffect::NoSchedule),
        exists_toleration(TAINT_NODE_MEMORY_PRESSURE, TaintEffect::NoSchedule),
        exists_toleration(TAINT_NODE_PID_PRESSURE, TaintEffect::NoSchedule),
        exists_toleration(TAINT_NODE_UNSCHEDULABLE, TaintEffect::NoSchedule),
    ];
    if host_network {
        tolerations.push(exists_toleration(TAINT_NODE_NETWORK_UNAVAILABLE, TaintEffect::NoSchedule));
    }
    tolerations
}

/// Applies [`daemon_pod_default_tolerations`] to a pod spec the way the controller does: each
/// one through [`add_or_update_toleration`], so a user toleration with the same
/// key/operator/value/effect is replaced in place and no duplicate appears.
///
/// ```
/// use k8s_openapi::api::core::v1::PodSpec;
/// use lab_runner_k8s::taints::add_daemon_pod_tolerations;
/// let mut spec = PodSpec { host_network: Some(true), ..Default::default() };
/// add_daemon_pod_tolerations(&mut spec);
/// assert_eq!(spec.tolerations.unwrap().len(), 7);
/// ```
pub fn add_daemon_pod_tolerations(spec: &mut PodSpec) {
    for toleration in daemon_pod_default_tolerations(spec.host_network.unwrap_or(false)) {
        add_or_update_toleration(spec, &toleration);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint { key: key.into(), value: value.map(Into::into), effect: effect.into(), ..Default::default() }
    }

    fn toleration(
        key: Option<&str>,
        operator: Option<&str>,
        value: Option<&str>,
        effect: Option<&str>,
    ) -> Toleration {
        Toleration {
            key: key.map(Into::into),
            operator: operator.map(Into::into),
            value: value.map(Into::into),
            effect: effect.map(Into::into),
            toleration_seconds: None,
        }
    }

    #[test]
    fn tolerates_taint_follows_upstream_rules() {
        let gpu = taint("nvidia.com/gpu", Some("present"), "NoSchedule");
        // (case, toleration, expected) — the cases of upstream's TestTolerationToleratesTaint.
        let cases = [
            (
                "equal same value",
                toleration(Some("nvidia.com/gpu"), Some("Equal"), Some("present"), None),
                true,
            ),
            (
                "empty operator means Equal",
                toleration(Some("nvidia.com/gpu"), None, Some("present"), None),
                true,
            ),
            (
                "equal other value",
                toleration(Some("nvidia.com/gpu"), Some("Equal"), Some("absent"), None),
                false,
            ),
            ("equal missing value", toleration(Some("nvidia.com/gpu"), Some("Equal"), None, None), false),
            ("exists any value", toleration(Some("nvidia.com/gpu"), Some("Exists"), None, None), true),
            (
                "exists ignores value",
                toleration(Some("nvidia.com/gpu"), Some("Exists"), Some("x"), None),
                true,
            ),
            ("other key", toleration(Some("other"), Some("Exists"), None, None), false),
            ("empty key exists matches all", toleration(None, Some("Exists"), None, None), true),
            ("empty key equal compares value", toleration(None, Some("Equal"), Some("present"), None), true),
            ("empty key equal other value", toleration(None, Some("Equal"), Some("x"), None), false),
            (
                "effect match",
                toleration(Some("nvidia.com/gpu"), Some("Exists"), None, Some("NoSchedule")),
                true,
            ),
            (
                "effect mismatch",
                toleration(Some("nvidia.com/gpu"), Some("Exists"), None, Some("NoExecute")),
                false,
            ),
            (
                "unknown operator",
                toleration(Some("nvidia.com/gpu"), Some("Gt"), Some("present"), None),
                false,
            ),
        ];
        for (name, tol, expected) in cases {
            assert_eq!(tolerates_taint(&tol, &gpu), expected, "{name}");
        }
    }

    #[test]
    fn empty_taint_value_equals_absent_toleration_value() {
        let control_plane = taint("node-role.kubernetes.io/control-plane", None, "NoSchedule");
        let tol = toleration(Some("node-role.kubernetes.io/control-plane"), Some("Equal"), Some(""), None);
        assert!(tolerates_taint(&tol, &control_plane));
        let tol = toleration(Some("node-role.kubernetes.io/control-plane"), None, None, Some("NoSchedule"));
        assert!(tolerates_taint(&tol, &control_plane));
    }

    #[test]
    fn toleration_seconds_do_not_matter_for_matching() {
        let t = taint("node.kubernetes.io/not-ready", None, "NoExecute");
        let mut tol =
            toleration(Some("node.kubernetes.io/not-ready"), Some("Exists"), None, Some("NoExecute"));
        tol.toleration_seconds = Some(0);
        assert!(tolerates_taint(&tol, &t));
    }

    #[test]
    fn first_untolerated_taint_in_node_order_for_effects() {
        let taints = vec![
            taint("soft", None, "PreferNoSchedule"),
            taint("a", Some("1"), "NoSchedule"),
            taint("b", None, "NoExecute"),
        ];
        let found = find_untolerated_taint(&taints, &[], TaintEffect::DO_NOT_SCHEDULE).unwrap();
        assert_eq!(found.key, "a");
        let tolerate_a = [toleration(Some("a"), Some("Equal"), Some("1"), Some("NoSchedule"))];
        let found = find_untolerated_taint(&taints, &tolerate_a, TaintEffect::DO_NOT_SCHEDULE).unwrap();
        assert_eq!(found.key, "b");
        let found = find_untolerated_taint(&taints, &[], &[TaintEffect::NoExecute]).unwrap();
        assert_eq!(found.key, "b");
        let everything = [toleration(None, Some("Exists"), None, None)];
        assert!(find_untolerated_taint(&taints, &everything, TaintEffect::DO_NOT_SCHEDULE).is_none());
        // PreferNoSchedule is never a "do not schedule" taint.
        assert!(find_untolerated_taint(&taints[..1], &[], TaintEffect::DO_NOT_SCHEDULE).is_none());
        let bogus = vec![taint("x", None, "Bogus")];
        assert!(find_untolerated_taint(&bogus, &[], TaintEffect::DO_NOT_SCHEDULE).is_none());
    }

    #[test]
    fn effect_round_trip_and_error() {
        for effect in [TaintEffect::NoSchedule, TaintEffect::PreferNoSchedule, TaintEffect::NoExecute] {
            assert_eq!(effect.to_string().parse::<TaintEffect>().unwrap(), effect);
        }
        let error = "Sometimes".parse::<TaintEffect>().unwrap_err();
        assert_eq!(error, Error::UnknownEffect("Sometimes".into()));
    }

    #[test]
    fn daemon_default_tolerations_are_the_upstream_list() {
        // daemonset_util.go `AddOrUpdateDaemonPodTolerations`, copied as literals.
        let expected = [
            ("node.kubernetes.io/not-ready", "NoExecute"),
            ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/disk-pressure", "NoSchedule"),
            ("node.kubernetes.io/memory-pressure", "NoSchedule"),
            ("node.kubernetes.io/pid-pressure", "NoSchedule"),
            ("node.kubernetes.io/unschedulable", "NoSchedule"),
        ];
        let plain = daemon_pod_default_tolerations(false);
        let pairs: Vec<_> =
            plain.iter().map(|t| (t.key.clone().unwrap(), t.effect.clone().unwrap())).collect();
        let expected_pairs: Vec<_> = expected.iter().map(|(k, e)| (k.to_string(), e.to_string())).collect();
        assert_eq!(pairs, expected_pairs);
        assert!(
            plain.iter().all(|t| t.operator.as_deref() == Some("Exists") && t.toleration_seconds.is_none())
        );
        let host = daemon_pod_default_tolerations(true);
        assert_eq!(host.last().unwrap().key.as_deref(), Some("node.kubernetes.io/network-unavailable"));
        assert_eq!(host.last().unwrap().effect.as_deref(), Some("NoSchedule"));
    }

    #[test]
    fn add_daemon_tolerations_replaces_same_toleration_in_place() {
        let mut user =
            toleration(Some("node.kubernetes.io/not-ready"), Some("Exists"), None, Some("NoExecute"));
        user.toleration_seconds = Some(300);
        let mut spec = PodSpec {
            tolerations: Some(vec![toleration(Some("mine"), Some("Exists"), None, None), user]),
            ..Default::default()
        };
        add_daemon_pod_tolerations(&mut spec);
        let tolerations = spec.tolerations.unwrap();
        assert_eq!(tolerations.len(), 7);
        assert_eq!(tolerations[0].key.as_deref(), Some("mine"));
        // The user's not-ready toleration is replaced where it stood, without its seconds.
        assert_eq!(tolerations[1].key.as_deref(), Some("node.kubernetes.io/not-ready"));
        assert_eq!(tolerations[1].toleration_seconds, None);
        assert_eq!(tolerations[2].key.as_deref(), Some("node.kubernetes.io/unreachable"));
    }

    #[test]
    fn add_toleration_is_idempotent() {
        let mut spec = PodSpec::default();
        add_daemon_pod_tolerations(&mut spec);
        let once = spec.clone();
        add_daemon_pod_tolerations(&mut spec);
        assert_eq!(spec, once);
    }
}
