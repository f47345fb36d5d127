//! ResourceQuota: usage of pods and object counts, and the validating admission check that charges it.
//!
//! Upstream sources (Kubernetes v1.33):
//! - `staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`
//!   (`CheckRequest`, L440-590 in v1.28, same logic in v1.33; `checkQuotas` skips the status
//!   write for dry-run requests; `prettyPrint`, `prettyPrintResourceNames`, `hasUsageStats`);
//! - `pkg/quota/v1/evaluator/core/pods.go` (`podResources`, `isExtendedResourceNameForQuota`,
//!   `validationSet`, `Constraints`, `Handles`, `MatchingResources`, `podComputeUsageHelper`,
//!   `PodUsageFunc`, `QuotaV1Pod`, `podMatchesScopeFunc`);
//! - `staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go` (`Matches`,
//!   `CalculateUsageStats`, the object count evaluator) and `.../quota/v1/resources.go`
//!   (`Add`, `Mask`, `LessThanOrEqual`, `RemoveZeros`, `CalculateUsage`);
//! - `staging/src/k8s.io/component-helpers/resource/helpers.go` (`PodRequests`, `PodLimits`);
//! - `staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go` (`CanonicalizeBytes`: how a
//!   quantity prints, by the format it was parsed with).
//!
//! Only `requests.<extended>` quota keys are charged for extended resources: a `hard` key
//! `nvidia.com/gpu` or `limits.nvidia.com/gpu` passes validation (it contains a `/`) but no
//! evaluator matches it, so it is never charged nor enforced — as upstream.
//!
//! Not modelled: the services evaluator's `services.nodeports`/`services.loadbalancers` and the
//! PVC evaluator's storage keys (services and PVCs are counted as objects only), and the
//! admission configuration's limited resources (`insufficient quota to consume`).

use std::{collections::BTreeMap, fmt};

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

/// `getScopeSelectorsFromQuota`, written once for the simulator and grading.
pub use crate::k8s::quota_scope::scope_selectors;
use crate::k8s::{quantity::Quantity, quota_scope::pod_matches_scope, resources::is_extended_resource_name};
use crate::kinds::{self, QuotaCharge};

/// Why quota admission rejected a create; the text follows `admission.NewForbidden`'s
/// `<resource> "<name>" is forbidden: ` prefix, which the store adds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The request would take a quota over its `hard` value.
    #[error("exceeded quota: {quota}, requested: {requested}, used: {used}, limited: {limited}")]
    Exceeded {
        /// The quota's name.
        quota: String,
        /// `name=qty` of the exceeded resources' requested amounts, sorted, joined by `,`.
        requested: String,
        /// The same for `status.used`.
        used: String,
        /// The same for `status.hard`.
        limited: String,
    },
    /// A matching quota's `status.used` lacks a resource its `status.hard` constrains.
    #[error("status unknown for quota: {quota}, resources: {resources}")]
    StatusUnknown {
        /// The quota's name.
        quota: String,
        /// The constrained resources, sorted, joined by `,`.
        resources: String,
    },
    /// A quota constrains cpu or memory and a container does not say how much it needs.
    #[error("failed quota: {quota}: must specify {missing}")]
    MustSpecify {
        /// The quota's name.
        quota: String,
        /// `requests.cpu for: a,b; limits.memory for: a`.
        missing: String,
    },
    /// The object asks for a negative amount of something.
    #[error("quota usage is negative for resource(s): {0}")]
    NegativeUsage(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

// ---------------------------------------------------------------------------------------------
// Quantities with upstream's format.

/// The format a quantity keeps from the text it was parsed from, which decides how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// No suffix or a decimal SI suffix (`1`, `500m`, `2k`).
    DecimalSi,
    /// A binary SI suffix (`2Gi`).
    BinarySi,
    /// A decimal exponent (`1e3`).
    DecimalExponent,
}

/// A quantity with its format (`resource.Quantity`), printing as upstream's `String()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Amount {
    /// The exact value.
    pub value: Quantity,
    /// How it prints.
    pub format: Format,
}

impl Amount {
    /// Zero, as `resource.Quantity{Format: DecimalSI}`.
    pub const ZERO: Amount = Amount { value: Quantity::ZERO, format: Format::DecimalSi };

    /// A whole number in DecimalSI (`resource.NewQuantity(n, DecimalSI)`).
    pub fn units(units: i64) -> Amount {
        Amount { value: Quantity::from_units(units), format: Format::DecimalSi }
    }

    /// Parses quantity text, keeping its format; `None` when it is not a quantity.
    ///
    /// ```
    /// use lab_runner_sim::registry::quota::Amount;
    /// assert_eq!(Amount::parse("2048Mi").unwrap().to_string(), "2Gi");
    /// assert_eq!(Amount::parse("1000m").unwrap().to_string(), "1");
    /// assert_eq!(Amount::parse("1500").unwrap().to_string(), "1500");
    /// ```
    pub fn parse(text: &str) -> Option<Amount> {
        let value = text.parse::<Quantity>().ok()?;
        let unsigned = text.trim_start_matches(['+', '-']);
        let suffix = unsigned.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        let format = if suffix.ends_with('i') {
            Format::BinarySi
        } else if suffix.len() > 1 && suffix.starts_with(['e', 'E']) {
            Format::DecimalExponent
        } else {
            Format::DecimalSi
        };
        Some(Amount { value, format })
    }

    /// Parses a JSON quantity (a string, or a number as sent in YAML).
    pub fn from_json(value: &Value) -> Option<Amount> {
        match value {
            Value::String(text) => Amount::parse(text),
            Value::Number(number) => Amount::parse(&number.to_string()),
            _ => None,
        }
    }

    /// `Quantity.Add`: a zero receiver takes the other's format.
    pub fn plus(self, other: Amount) -> Amount {
        let format = if self.value == Quantity::ZERO { other.format } else { self.format };
        Amount { value: self.value.checked_add(other.value).unwrap_or(self.value), format }
    }
}

const NANO: i128 = 1_000_000_000;

fn decimal_suffix(exponent: i32) -> Option<&'static str> {
    Some(match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => return None,
    })
}

impl fmt::Display for Amount {
    /// `Quantity.String()` (`CanonicalizeBytes`): zero is `0`; BinarySI prints the largest
    /// power-of-1024 suffix that keeps an integer mantissa, unless the value is below 1024 in
    /// magnitude or fractional (then DecimalSI); DecimalSI/DecimalExponent print the largest
    /// exponent that is a multiple of 3 and keeps an integer mantissa.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.value.nanos();
        if nanos == 0 {
            return f.write_str("0");
        }
        let mut format = self.format;
        if format == Format::BinarySi && (nanos.abs() < 1024 * NANO || nanos % NANO != 0) {
            format = Format::DecimalSi;
        }
        if format == Format::BinarySi {
            let mut mantissa = nanos / NANO;
            let mut power = 0;
            while power < 6 && mantissa % 1024 == 0 {
                mantissa /= 1024;
                power += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
            return write!(f, "{mantissa}{suffix}");
        }
        // nanos = mantissa * 10^exponent with exponent starting at -9.
        let (mut mantissa, mut exponent) = (nanos, -9);
        while mantissa % 1000 == 0 && exponent < 18 {
            mantissa /= 1000;
            exponent += 3;
        }
        match format {
            Format::DecimalExponent if exponent != 0 => write!(f, "{mantissa}e{exponent}"),
            _ => write!(f, "{mantissa}{}", decimal_suffix(exponent).unwrap_or("")),
        }
    }
}

/// A resource list with formats (`v1.ResourceList`), sorted by name.
pub type Usage = BTreeMap<String, Amount>;

/// Parses a JSON resource list, skipping entries that are not quantities (validation keeps
/// them out of stored objects).
pub fn usage_of(list: &Value) -> Usage {
    let Some(map) = list.as_object() else { return Usage::new() };
    map.iter().filter_map(|(name, value)| Some((name.clone(), Amount::from_json(value)?))).collect()
}

/// A resource list as JSON, each quantity in its canonical text.
pub fn usage_json(usage: &Usage) -> Value {
    Value::Object(usage.iter().map(|(name, amount)| (name.clone(), json!(amount.to_string()))).collect())
}

/// `quota.Add`.
pub fn add(a: &Usage, b: &Usage) -> Usage {
    let mut result = a.clone();
    for (name, amount) in b {
        let slot = result.entry(name.clone()).or_insert(Amount::ZERO);
        *slot = slot.plus(*amount);
    }
    result
}

/// `quota.Mask`: only the named resources.
pub fn mask<'a>(usage: &Usage, names: impl IntoIterator<Item = &'a String>) -> Usage {
    names.into_iter().filter_map(|name| Some((name.clone(), *usage.get(name)?))).collect()
}

/// `quota.Equals`: the same names with equal values.
pub fn equals(a: &Usage, b: &Usage) -> bool {
    a.len() == b.len()
        && a.iter().all(|(name, amount)| b.get(name).is_some_and(|other| other.value == amount.value))
}

/// `prettyPrint`: `name=qty` sorted by name, joined by `,`.
fn pretty_print(usage: &Usage) -> String {
    usage.iter().map(|(name, amount)| format!("{name}={amount}")).collect::<Vec<_>>().join(",")
}

// ---------------------------------------------------------------------------------------------
// Evaluators.

/// The resources the pod evaluator tracks by name (pods.go `podResources`).
const POD_RESOURCES: &[&str] = &[
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
];

/// pods.go `validationSet`: the keys whose quota makes every container state its amount.
const VALIDATION_SET: &[&str] =
    &["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"];

/// `v1helper.IsNativeResource`.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// pods.go `isExtendedResourceNameForQuota`: only `requests.<extended>` is a quota name.
fn is_extended_for_quota(name: &str) -> bool {
    !is_native(name) && name.starts_with("requests.")
}

/// Which evaluator measures a group-resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evaluator {
    /// pods.go's pod evaluator.
    Pods,
    /// The generic object count evaluator: `count/<resource>[.<group>]` and, for some core
    /// types, a legacy name.
    ObjectCount {
        /// `count/configmaps`, `count/deployments.apps`.
        count_name: String,
        /// `configmaps`, when the type has one.
        legacy_name: Option<String>,
    },
}

impl Evaluator {
    /// The evaluator for objects of `group_resource` (`pods`, `configmaps`,
    /// `deployments.apps`); `None` for what quota ignores (events, as `ignoredResources`).
    pub fn for_resource(group_resource: &str) -> Option<Evaluator> {
        // The kind's strategy says how it is charged (`kinds::QuotaCharge`); a custom resource
        // is counted as any object.
        match kinds::strategy(group_resource).quota() {
            QuotaCharge::Pods => Some(Evaluator::Pods),
            QuotaCharge::Ignored => None,
            QuotaCharge::ObjectCount { legacy_name } => Some(Evaluator::ObjectCount {
                count_name: format!("count/{group_resource}"),
                legacy_name: legacy_name.then(|| group_resource.to_string()),
            }),
        }
    }

    /// `MatchingResources`: the names among `input` this evaluator measures.
    pub fn matching_resources<'a>(&self, input: impl IntoIterator<Item = &'a String>) -> Vec<String> {
        input
            .into_iter()
            .filter(|name| match self {
                Evaluator::Pods => {
                    POD_RESOURCES.contains(&name.as_str())
                        || name.starts_with("hugepages-")
                        || name.starts_with("requests.hugepages-")
                        || is_extended_for_quota(name)
                }
                Evaluator::ObjectCount { count_name, legacy_name } => {
                    *name == count_name || legacy_name.as_ref() == Some(*name)
                }
            })
            .cloned()
            .collect()
    }

    /// `Usage` of one object at `now`.
    pub fn usage(&self, object: &Value, now: Timestamp) -> Usage {
        match self {
            Evaluator::Pods => pod_usage(object, now),
            Evaluator::ObjectCount { count_name, legacy_name } => {
                let mut usage = Usage::from([(count_name.clone(), Amount::units(1))]);
                if let Some(legacy) = legacy_name {
                    usage.insert(legacy.clone(), Amount::units(1));
                }
                usage
            }
        }
    }

    /// Whether `object` is in every scope `selectors` name (object counts match no scope:
    /// `generic.MatchesNoScopeFunc`).
    pub fn matches_scopes(&self, selectors: &[Value], object: &Value) -> bool {
        match self {
            Evaluator::Pods => selectors.iter().all(|selector| pod_matches_scope(selector, object)),
            Evaluator::ObjectCount { .. } => selectors.is_empty(),
        }
    }
}

/// `addResourceList` (helpers.go): a missing name takes a copy, a present one `Add`s.
fn add_into(target: &mut Usage, other: &Usage) {
    for (name, amount) in other {
        match target.get_mut(name) {
            Some(slot) => *slot = slot.plus(*amount),
            None => {
                target.insert(name.clone(), *amount);
            }
        }
    }
}

/// `maxResourceList` (helpers.go).
fn max_into(target: &mut Usage, other: &Usage) {
    for (name, amount) in other {
        match target.get_mut(name) {
            Some(slot) if amount.value > slot.value => *slot = *amount,
            Some(_) => {}
            None => {
                target.insert(name.clone(), *amount);
            }
        }
    }
}

/// A container's requests after API defaulting (a limit without a request is the request,
/// `SetDefaults_Pod`), or its limits.
fn container_list(container: &Value, which: Which) -> Usage {
    let requests = usage_of(&container["resources"]["requests"]);
    let limits = usage_of(&container["resources"]["limits"]);
    match which {
        Which::Limits => limits,
        Which::Requests => {
            let mut requests = requests;
            for (name, amount) in limits {
                requests.entry(name).or_insert(amount);
            }
            requests
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Requests,
    Limits,
}

/// `AggregateContainerRequests`/`AggregateContainerLimits`: containers summed; init containers
/// maxed, restartable (sidecar) ones accumulated.
fn aggregate(spec: &Value, which: Which) -> Usage {
    let mut total = Usage::new();
    for container in spec["containers"].as_array().into_iter().flatten() {
        add_into(&mut total, &container_list(container, which));
    }
    let mut sidecars = Usage::new();
    let mut init_max = Usage::new();
    for container in spec["initContainers"].as_array().into_iter().flatten() {
        let own = container_list(container, which);
        let step = if container["restartPolicy"].as_str() == Some("Always") {
            add_into(&mut total, &own);
            add_into(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut step = Usage::new();
            add_into(&mut step, &own);
            add_into(&mut step, &sidecars);
            step
        };
        max_into(&mut init_max, &step);
    }
    max_into(&mut total, &init_max);
    total
}

/// `PodRequests`: the aggregate plus `spec.overhead`.
fn pod_requests(spec: &Value) -> Usage {
    let mut requests = aggregate(spec, Which::Requests);
    add_into(&mut requests, &usage_of(&spec["overhead"]));
    requests
}

/// `PodLimits`: the aggregate plus the overhead of the resources that have a limit.
fn pod_limits(spec: &Value) -> Usage {
    let mut limits = aggregate(spec, Which::Limits);
    for (name, amount) in usage_of(&spec["overhead"]) {
        if let Some(slot) = limits.get_mut(&name) {
            *slot = slot.plus(amount);
        }
    }
    limits
}

/// pods.go `podComputeUsageHelper`.
fn compute_usage(requests: &Usage, limits: &Usage) -> Usage {
    let mut result = Usage::from([("pods".to_string(), Amount::units(1))]);
    for resource in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(request) = requests.get(resource) {
            result.insert(resource.to_string(), *request);
            result.insert(format!("requests.{resource}"), *request);
        }
        if let Some(limit) = limits.get(resource) {
            result.insert(format!("limits.{resource}"), *limit);
        }
    }
    for (resource, request) in requests {
        if resource.starts_with("hugepages-") {
            result.insert(resource.clone(), *request);
            result.insert(format!("requests.{resource}"), *request);
        }
        // Only `requests.<name>` quota is supported for extended resources.
        if is_extended_resource_name(resource) {
            result.insert(format!("requests.{resource}"), *request);
        }
    }
    result
}

/// pods.go `QuotaV1Pod`: terminal pods, and pods whose deletion grace period has run out
/// (`deletionTimestamp + deletionGracePeriodSeconds` passed), are not charged.
pub fn pod_is_charged(pod: &Value, now: Timestamp) -> bool {
    if matches!(pod["status"]["phase"].as_str(), Some("Failed" | "Succeeded")) {
        return false;
    }
    let deletion = pod["metadata"]["deletionTimestamp"].as_str().and_then(|t| t.parse::<Timestamp>().ok());
    let grace = pod["metadata"]["deletionGracePeriodSeconds"].as_i64();
    if let (Some(deletion), Some(grace)) = (deletion, grace)
        && deletion.checked_add(SignedDuration::from_secs(grace)).is_ok_and(|end| now > end)
    {
        return false;
    }
    true
}

/// pods.go `PodUsageFunc`: `count/pods` always; compute resources only while charged.
pub fn pod_usage(pod: &Value, now: Timestamp) -> Usage {
    let count = Usage::from([("count/pods".to_string(), Amount::units(1))]);
    if !pod_is_charged(pod, now) {
        return count;
    }
    let spec = &pod["spec"];
    add(&count, &compute_usage(&pod_requests(spec), &pod_limits(spec)))
}

/// pods.go `Constraints`: with cpu or memory quota'd, every container (and init container)
/// must state that amount.
fn pod_constraints(restricted: &[String], pod: &Value) -> Option<String> {
    let required: Vec<&String> = restricted.iter().filter(|r| VALIDATION_SET.contains(&r.as_str())).collect();
    if required.is_empty() {
        return None;
    }
    let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let spec = &pod["spec"];
    let containers = spec["containers"].as_array().into_iter().flatten();
    for container in containers.chain(spec["initContainers"].as_array().into_iter().flatten()) {
        let usage = compute_usage(
            &container_list(container, Which::Requests),
            &usage_of(&container["resources"]["limits"]),
        );
        for resource in &required {
            if !usage.contains_key(resource.as_str()) {
                let names = missing.entry(resource.as_str()).or_default();
                let name = container["name"].as_str().unwrap_or_default().to_string();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    let parts: Vec<String> = missing
        .into_iter()
        .map(|(resource, mut names)| {
            names.sort();
            format!("{resource} for: {}", names.join(","))
        })
        .collect();
    Some(parts.join("; "))
}

// ---------------------------------------------------------------------------------------------
// Admission.

/// The hard or used list of a quota's status.
fn status_list(quota: &Value, which: &str) -> Usage {
    usage_of(&quota["status"][which])
}

/// `generic.Matches`: the quota's `status.hard` names something the evaluator measures, and the
/// object is in every scope of the quota.
fn quota_matches(evaluator: &Evaluator, quota: &Value, object: &Value) -> bool {
    let hard = status_list(quota, "hard");
    !evaluator.matching_resources(hard.keys()).is_empty()
        && evaluator.matches_scopes(&scope_selectors(quota), object)
}

/// Quota admission on create (`CheckRequest` for `admission.Create`; both evaluators handle
/// only creates): checks `object` of `group_resource` against `quotas` (the namespace's
/// ResourceQuotas, in name order) and returns the quotas whose `status.used` it charges, ready
/// to be written in the same transaction as the object. A dry-run caller checks and discards
/// them (`checkQuotas` does not update quotas for dry-run requests).
pub fn admit(group_resource: &str, object: &Value, quotas: &[Value], now: Timestamp) -> Result<Vec<Value>> {
    let Some(evaluator) = Evaluator::for_resource(group_resource) else { return Ok(Vec::new()) };
    let mut interesting = Vec::new();
    for quota in quotas {
        if !quota_matches(&evaluator, quota, object) {
            continue;
        }
        let name = quota["metadata"]["name"].as_str().unwrap_or_default();
        let hard = status_list(quota, "hard");
        let restricted = evaluator.matching_resources(hard.keys());
        if evaluator == Evaluator::Pods
            && let Some(missing) = pod_constraints(&restricted, object)
        {
            return Err(Error::MustSpecify { quota: name.to_string(), missing });
        }
        let used = status_list(quota, "used");
        if restricted.iter().any(|resource| !used.contains_key(resource)) {
            let mut resources = restricted.clone();
            resources.sort();
            return Err(Error::StatusUnknown { quota: name.to_string(), resources: resources.join(",") });
        }
        interesting.push(quota);
    }
    if interesting.is_empty() {
        return Ok(Vec::new());
    }
    let input = evaluator.usage(object, now);
    let negative: Vec<&str> = input
        .iter()
        .filter(|(_, amount)| amount.value < Quantity::ZERO)
        .map(|(name, _)| name.as_str())
        .collect();
    if !negative.is_empty() {
        return Err(Error::NegativeUsage(negative.join(",")));
    }
    // `RemoveZeros`.
    let delta: Usage = input.into_iter().filter(|(_, amount)| amount.value != Quantity::ZERO).collect();
    if delta.is_empty() {
        return Ok(Vec::new());
    }
    let mut charged = Vec::new();
    for quota in interesting {
        let hard = status_list(quota, "hard");
        let used = status_list(quota, "used");
        let requested = mask(&delta, hard.keys());
        if requested.is_empty() {
            continue;
        }
        let new_used = add(&used, &requested);
        let exceeded: Vec<&String> = requested
            .keys()
            .filter(|name| match (new_used.get(*name), hard.get(*name)) {
                (Some(new), Some(limit)) => new.value > limit.value,
                _ => false,
            })
            .collect();
        if !exceeded.is_empty() {
            return Err(Error::Exceeded {
                quota: quota["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                requested: pretty_print(&mask(&requested, exceeded.iter().copied())),
                used: pretty_print(&mask(&used, exceeded.iter().copied())),
                limited: pretty_print(&mask(&hard, exceeded.iter().copied())),
            });
        }
        let mut updated = quota.clone();
        updated["status"]["used"] = usage_json(&new_used);
        charged.push(updated);
    }
    Ok(charged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::testing;

    fn now() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    fn amount(text: &str) -> String {
        Amount::parse(text).unwrap().to_string()
    }

    #[test]
    fn quantities_print_as_upstream_canonical_strings() {
        for (text, printed) in [
            ("0", "0"),
            ("1", "1"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("0.5", "500m"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("2Gi", "2Gi"),
            ("2048Mi", "2Gi"),
            ("1.5Gi", "1536Mi"),
            ("512", "512"),
            ("1024", "1024"),
            ("1Ki", "1Ki"),
            ("100Mi", "100Mi"),
            ("1e3", "1e3"),
            ("1E", "1E"),
            ("1G", "1G"),
        ] {
            assert_eq!(amount(text), printed, "{text}");
        }
        // A zero takes the format of what is added to it (`Quantity.Add`).
        let sum = Amount::ZERO.plus(Amount::parse("1Gi").unwrap());
        assert_eq!(sum.to_string(), "1Gi");
        let sum = Amount::parse("1").unwrap().plus(Amount::parse("1Gi").unwrap());
        assert_eq!(sum.to_string(), "1073741825");
    }

    /// The shared test pod in `team-a` with `containers` in place of its own.
    fn pod(containers: Value) -> Value {
        let mut pod = testing::pod("p").namespace("team-a").json();
        pod["spec"]["containers"] = containers;
        pod
    }

    fn printed(usage: &Usage) -> String {
        pretty_print(usage)
    }

    #[test]
    fn pod_usage_charges_requests_of_extended_resources_only_under_the_requests_prefix() {
        let gpu = pod(
            json!([{"name": "cuda", "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "1Gi"}}},
                             {"name": "side", "resources": {"requests": {"cpu": "250m", "nvidia.com/mig-1g.5gb": "2"}}}]),
        );
        assert_eq!(
            printed(&pod_usage(&gpu, now())),
            "count/pods=1,cpu=250m,limits.memory=1Gi,memory=1Gi,pods=1,requests.cpu=250m,\
             requests.memory=1Gi,requests.nvidia.com/gpu=1,requests.nvidia.com/mig-1g.5gb=2"
        );
    }

    #[test]
    fn terminal_and_expired_deleting_pods_are_not_charged() {
        let mut done = pod(json!([{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]));
        done["status"]["phase"] = json!("Succeeded");
        assert_eq!(printed(&pod_usage(&done, now())), "count/pods=1");
        let mut deleting = pod(json!([{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]));
        deleting["metadata"]["deletionTimestamp"] = json!("2025-12-31T23:59:00Z");
        deleting["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        assert_eq!(printed(&pod_usage(&deleting, now())), "count/pods=1");
        deleting["metadata"]["deletionGracePeriodSeconds"] = json!(120);
        assert!(pod_usage(&deleting, now()).contains_key("requests.nvidia.com/gpu"));
    }

    #[test]
    fn init_containers_are_maxed_and_sidecars_summed() {
        let mut p = pod(json!([{"name": "a", "resources": {"requests": {"cpu": "1"}}}]));
        p["spec"]["initContainers"] = json!([
            {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
            {"name": "init", "resources": {"requests": {"cpu": "2"}}},
        ]);
        // Sidecar adds 500m to the 1; the init step needs 2 + 500m.
        assert_eq!(pod_usage(&p, now())["requests.cpu"].to_string(), "2500m");
    }

    fn quota(hard: Value, used: Option<Value>) -> Value {
        let mut status = json!({"hard": hard});
        if let Some(used) = used {
            status["used"] = used;
        }
        json!({"metadata": {"name": "gpu-quota", "namespace": "team-a"}, "spec": {"hard": hard}, "status": status})
    }

    fn gpu_pod(count: &str) -> Value {
        testing::pod("p").namespace("team-a").gpus(count).json()
    }

    #[test]
    fn over_quota_create_is_rejected_with_upstreams_text() {
        let q = quota(json!({"requests.nvidia.com/gpu": "2"}), Some(json!({"requests.nvidia.com/gpu": "2"})));
        let error = admit("pods", &gpu_pod("1"), &[q], now()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, \
             limited: requests.nvidia.com/gpu=2"
        );
    }

    #[test]
    fn an_admitted_create_charges_the_quota() {
        let q = quota(
            json!({"requests.nvidia.com/gpu": "2", "pods": "10"}),
            Some(json!({"requests.nvidia.com/gpu": "0", "pods": "0"})),
        );
        let charged = admit("pods", &gpu_pod("1"), &[q], now()).unwrap();
        assert_eq!(charged[0]["status"]["used"], json!({"pods": "1", "requests.nvidia.com/gpu": "1"}));
    }

    #[test]
    fn bare_and_limits_gpu_keys_are_never_charged_nor_enforced() {
        let q = quota(json!({"nvidia.com/gpu": "0", "limits.nvidia.com/gpu": "0"}), None);
        assert_eq!(admit("pods", &gpu_pod("4"), &[q], now()).unwrap(), Vec::<Value>::new());
    }

    #[test]
    fn status_unknown_until_used_is_filled_and_no_status_does_not_match() {
        let q = quota(json!({"requests.nvidia.com/gpu": "2", "pods": "3"}), Some(json!({"pods": "0"})));
        assert_eq!(
            admit("pods", &gpu_pod("1"), &[q], now()).unwrap_err().to_string(),
            "status unknown for quota: gpu-quota, resources: pods,requests.nvidia.com/gpu"
        );
        // Before the controller's first sync `status.hard` is empty: nothing matches (upstream
        // `generic.Matches` reads `status.hard`).
        let fresh = json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "0"}}});
        assert!(admit("pods", &gpu_pod("1"), &[fresh], now()).unwrap().is_empty());
    }

    #[test]
    fn cpu_quota_requires_every_container_to_state_cpu() {
        let q = quota(
            json!({"requests.cpu": "2", "limits.memory": "1Gi"}),
            Some(json!({"requests.cpu": "0", "limits.memory": "0"})),
        );
        let p = pod(
            json!([{"name": "b", "resources": {}}, {"name": "a", "resources": {"requests": {"cpu": "1"}}}]),
        );
        assert_eq!(
            admit("pods", &p, &[q], now()).unwrap_err().to_string(),
            "failed quota: gpu-quota: must specify limits.memory for: a,b; requests.cpu for: b"
        );
    }

    #[test]
    fn object_counts_use_count_and_legacy_names() {
        let q = quota(
            json!({"configmaps": "1", "count/deployments.apps": "5"}),
            Some(json!({"configmaps": "1", "count/deployments.apps": "0"})),
        );
        let cm = json!({"metadata": {"name": "c"}});
        assert_eq!(
            admit("configmaps", &cm, std::slice::from_ref(&q), now()).unwrap_err().to_string(),
            "exceeded quota: gpu-quota, requested: configmaps=1, used: configmaps=1, limited: configmaps=1"
        );
        let charged = admit("deployments.apps", &cm, &[q], now()).unwrap();
        assert_eq!(charged[0]["status"]["used"]["count/deployments.apps"], json!("1"));
        assert!(Evaluator::for_resource("events").is_none());
    }

    #[test]
    fn scopes_select_pods() {
        let mut q = quota(json!({"pods": "0"}), Some(json!({"pods": "0"})));
        q["spec"]["scopes"] = json!(["BestEffort"]);
        let mut p = gpu_pod("1");
        p["status"]["qosClass"] = json!("Burstable");
        assert!(admit("pods", &p, std::slice::from_ref(&q), now()).unwrap().is_empty());
        p["status"]["qosClass"] = json!("BestEffort");
        assert!(admit("pods", &p, &[q], now()).is_err());
    }
}
