//! The `alertRule` check: PrometheusRule alert expressions parsed with `promql-parser` and
//! evaluated at one instant over kube-state-metrics series built from each of the three kinds of
//! breakage and from the restored DaemonSet state, each shown in several sceneries that vary what
//! a rule must not depend on (generations, ages, pod names, target labels). A rule passes when it
//! yields a sample for every breakage in every scenery (not only the learner's own variant), none
//! for the restored state in any, and its `for` is long enough. Rules the platform had before the
//! lab started are not the learner's and are left alone.
//!
//! The evaluator covers what such rules use: selectors with label matchers, number literals,
//! unary minus, arithmetic and comparison operators (with `bool`, `on`/`ignoring`, one-to-one
//! matching), `and`/`or`/`unless`, and the `sum`/`min`/`max`/`avg`/`count` aggregations with
//! `by`/`without`. Anything else is reported as not supported, which makes the check ERROR.

use std::collections::BTreeMap;

use promql_parser::{
    label::Matcher,
    parser::{self, Expr, LabelModifier},
};
use serde_json::Value;

use super::{Observed, Outcome};
use crate::{
    english_display,
    i18n::{Arg, Localized, Message},
    lab::model::{AlertRuleCheck, Timeout},
    msg,
};

/// Errors from evaluating an expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The expression does not parse (the parser's words).
    Parse(String),
    /// The expression uses something the evaluator does not implement.
    Unsupported(Construct),
}

/// A PromQL construct the evaluator does not implement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Construct {
    /// `offset` or `@` on a selector.
    OffsetOrAt,
    /// `or` between label matchers.
    OrInSelector,
    /// An aggregation that takes a parameter (`topk`, `quantile`).
    AggregationParameter(String),
    /// An aggregation over a scalar.
    AggregationOverScalar(String),
    /// An aggregation other than sum, min, max, avg and count.
    Aggregation(String),
    /// `vector()` of a vector.
    VectorOfVector,
    /// A function call other than `vector(s)`.
    Function(String),
    /// `x[5m]`.
    RangeSelector,
    /// `x[5m:1m]`.
    Subquery,
    /// `"text"`.
    StringLiteral,
    /// A parser extension.
    Extension,
    /// A binary operator these operands do not take.
    Operator(String),
    /// A comparison of two scalars without `bool`.
    ScalarComparison(String),
}

impl Localized for Error {
    fn message(&self) -> Message {
        let construct = match self {
            Error::Parse(reason) => return msg!("alert-does-not-parse", reason = reason),
            Error::Unsupported(construct) => construct,
        };
        let construct = match construct {
            Construct::OffsetOrAt => msg!("alert-construct-offset"),
            Construct::OrInSelector => msg!("alert-construct-or-in-selector"),
            Construct::AggregationParameter(op) => msg!("alert-construct-aggregation-parameter", op = op),
            Construct::AggregationOverScalar(op) => msg!("alert-construct-aggregation-scalar", op = op),
            Construct::Aggregation(op) => msg!("alert-construct-aggregation", op = op),
            Construct::VectorOfVector => msg!("alert-construct-vector-of-vector"),
            Construct::Function(name) => msg!("alert-construct-function", name = name),
            Construct::RangeSelector => msg!("alert-construct-range-selector"),
            Construct::Subquery => msg!("alert-construct-subquery"),
            Construct::StringLiteral => msg!("alert-construct-string-literal"),
            Construct::Extension => msg!("alert-construct-extension"),
            Construct::Operator(op) => msg!("alert-construct-operator", op = op),
            Construct::ScalarComparison(op) => msg!("alert-construct-scalar-comparison", op = op),
        };
        msg!("alert-unsupported", construct = construct)
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A series' labels, `__name__` included.
pub type Labels = BTreeMap<String, String>;

/// One sample of an instant vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Labels.
    pub labels: Labels,
    /// Value.
    pub value: f64,
}

/// The value of an expression at one instant.
#[derive(Debug, Clone, PartialEq)]
pub enum Evaluated {
    /// A scalar.
    Scalar(f64),
    /// An instant vector.
    Vector(Vec<Sample>),
}

/// The DaemonSet counters a state is made of, as kube-state-metrics exports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaemonSetState {
    /// `desiredNumberScheduled`.
    pub desired: i64,
    /// `currentNumberScheduled`.
    pub current: i64,
    /// `numberReady`.
    pub ready: i64,
    /// `numberAvailable`.
    pub available: i64,
    /// `numberUnavailable`.
    pub unavailable: i64,
    /// `updatedNumberScheduled`.
    pub updated: i64,
    /// `numberMisscheduled`.
    pub misscheduled: i64,
    /// `metadata.generation`.
    pub generation: i64,
    /// `status.observedGeneration`.
    pub observed_generation: i64,
}

impl DaemonSetState {
    /// A rollout stopped at one of `desired` nodes: the new pod there is not available.
    pub fn stalled(desired: i64) -> DaemonSetState {
        DaemonSetState {
            desired,
            current: desired,
            ready: desired - 1,
            available: desired - 1,
            unavailable: 1,
            updated: 1,
            misscheduled: 0,
            generation: 2,
            observed_generation: 2,
        }
    }

    /// The template no longer targets one of `desired` nodes (a toleration or nodeSelector
    /// drift): DESIRED itself drops by one and every other counter agrees with it, so the
    /// rollout "succeeds".
    pub fn desired_dropped(desired: i64) -> DaemonSetState {
        let targeted = desired - 1;
        DaemonSetState {
            desired: targeted,
            current: targeted,
            ready: targeted,
            available: targeted,
            unavailable: 0,
            updated: targeted,
            misscheduled: 0,
            generation: 2,
            observed_generation: 2,
        }
    }

    /// One generation everywhere on `desired` nodes.
    pub fn restored(desired: i64) -> DaemonSetState {
        DaemonSetState {
            desired,
            current: desired,
            ready: desired,
            available: desired,
            unavailable: 0,
            updated: desired,
            misscheduled: 0,
            generation: 3,
            observed_generation: 3,
        }
    }

    /// This state at `generation` (observed, as a settled controller has it).
    pub fn at_generation(self, generation: i64) -> DaemonSetState {
        DaemonSetState { generation, observed_generation: generation, ..self }
    }

    /// The kube-state-metrics series for DaemonSet `namespace/name` in this state
    /// (`kube-state-metrics/internal/store/daemonset.go` metric names), in the first scenery.
    pub fn series(&self, namespace: &str, name: &str) -> Vec<Sample> {
        self.series_in(namespace, name, &SCENERIES[0])
    }

    fn series_in(&self, namespace: &str, name: &str, scenery: &Scenery) -> Vec<Sample> {
        let metrics = [
            ("kube_daemonset_status_desired_number_scheduled", self.desired),
            ("kube_daemonset_status_current_number_scheduled", self.current),
            ("kube_daemonset_status_number_ready", self.ready),
            ("kube_daemonset_status_number_available", self.available),
            ("kube_daemonset_status_number_unavailable", self.unavailable),
            ("kube_daemonset_status_updated_number_scheduled", self.updated),
            ("kube_daemonset_status_number_misscheduled", self.misscheduled),
            ("kube_daemonset_metadata_generation", self.generation),
            ("kube_daemonset_status_observed_generation", self.observed_generation),
            ("kube_daemonset_created", scenery.created),
        ];
        metrics
            .iter()
            .map(|(metric, value)| Sample {
                labels: scenery.labels(&[
                    ("__name__", metric),
                    ("namespace", namespace),
                    ("daemonset", name),
                ]),
                value: *value as f64,
            })
            .collect()
    }
}

/// What the alert check varies between its synthetic states because a rule about a rollout's
/// unavailability must not depend on it: the generation (and observed generation) the state is
/// at, when the DaemonSet was created, the stuck pod's name and uid, and the target labels a
/// Prometheus setup adds to what it scrapes (kube-prometheus adds `container`, `endpoint`,
/// `service`). Every breakage is shown in every scenery and the restored state too, so a rule
/// keyed on any of these (`kube_daemonset_metadata_generation == 2`) misses some of them.
#[derive(Debug, Clone, Copy)]
pub struct Scenery {
    /// `metadata.generation`, and `status.observedGeneration` with it.
    pub generation: i64,
    /// `kube_daemonset_created`, Unix seconds.
    pub created: i64,
    /// The stuck pod's name suffix and uid.
    pub pod: (&'static str, &'static str),
    /// The scrape target's instance.
    pub instance: &'static str,
    /// Whether the target labels of a Prometheus Operator setup are added.
    pub operator_labels: bool,
}

/// The sceneries every synthetic state is shown in; the restored state is shown at every
/// generation a broken one is, and at a first generation besides.
pub const SCENERIES: [Scenery; 3] = [
    Scenery {
        generation: 2,
        created: 1_700_000_000,
        pod: ("x7k2p", "3f1c2a9e-0000-4000-8000-000000000001"),
        instance: "kube-state-metrics:8080",
        operator_labels: false,
    },
    Scenery {
        generation: 7,
        created: 1_712_345_678,
        pod: ("m9q4z", "8d2e4b10-0000-4000-8000-000000000002"),
        instance: "10.42.0.17:8080",
        operator_labels: true,
    },
    Scenery {
        generation: 3,
        created: 1_690_000_000,
        pod: ("b2c8d", "c41f0a77-0000-4000-8000-000000000003"),
        instance: "10.42.1.5:8443",
        operator_labels: false,
    },
];

/// The generations the restored state is shown at: every scenery's, and 1.
const RESTORED_GENERATIONS: [i64; 4] = [1, 2, 3, 7];

impl Scenery {
    /// `own` labels with this scenery's job and target labels.
    fn labels(&self, own: &[(&str, &str)]) -> Labels {
        let mut labels: Labels = own.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        labels.insert("job".into(), "kube-state-metrics".into());
        labels.insert("instance".into(), self.instance.into());
        if self.operator_labels {
            for (key, value) in [
                ("container", "kube-state-metrics"),
                ("endpoint", "http-metrics"),
                ("service", "kube-state-metrics"),
            ] {
                labels.insert(key.into(), value.into());
            }
        }
        labels
    }
}

/// The three ways the course's DaemonSet updates break (the `stuck-rollout` lab's variants), as
/// the series each leaves behind in each scenery: the DaemonSet's counters plus the pod-level series kube-state-metrics
/// exports for the stuck pod (`kube_pod_container_status_waiting_reason`,
/// `kube_pod_status_unschedulable`: kube-state-metrics/internal/store/pod.go). A rule must fire
/// on every one of them, in every scenery.
pub fn breakages(namespace: &str, name: &str, desired: i64) -> Vec<(Message, Vec<Vec<Sample>>)> {
    let pod_series = |scenery: &Scenery, metric: &str, extra: &[(&str, &str)]| {
        let pod = format!("{name}-{}", scenery.pod.0);
        let mut own = vec![("__name__", metric), ("namespace", namespace), ("pod", pod.as_str())];
        own.push(("uid", scenery.pod.1));
        own.extend_from_slice(extra);
        Sample { labels: scenery.labels(&own), value: 1.0 }
    };
    let in_every = |state: DaemonSetState, pod: Option<(&str, &[(&str, &str)])>| -> Vec<Vec<Sample>> {
        SCENERIES
            .iter()
            .map(|scenery| {
                let mut series = state.at_generation(scenery.generation).series_in(namespace, name, scenery);
                if let Some((metric, extra)) = pod {
                    series.push(pod_series(scenery, metric, extra));
                }
                series
            })
            .collect()
    };
    vec![
        (
            msg!("alert-breakage-image"),
            in_every(
                DaemonSetState::stalled(desired),
                Some((
                    "kube_pod_container_status_waiting_reason",
                    &[("container", "main"), ("reason", "ImagePullBackOff")],
                )),
            ),
        ),
        (
            msg!("alert-breakage-unschedulable"),
            in_every(DaemonSetState::stalled(desired), Some(("kube_pod_status_unschedulable", &[]))),
        ),
        (msg!("alert-breakage-desired-dropped"), in_every(DaemonSetState::desired_dropped(desired), None)),
    ]
}

/// The restored state on `desired` nodes in every scenery, at every generation a broken state is
/// shown at (and a first one).
pub fn restored(namespace: &str, name: &str, desired: i64) -> Vec<Vec<Sample>> {
    SCENERIES
        .iter()
        .flat_map(|scenery| {
            RESTORED_GENERATIONS.iter().map(move |generation| {
                DaemonSetState::restored(desired)
                    .at_generation(*generation)
                    .series_in(namespace, name, scenery)
            })
        })
        .collect()
}

/// Parses and evaluates `expr` over `series`.
pub fn evaluate(expr: &str, series: &[Sample]) -> Result<Evaluated> {
    let parsed = parser::parse(expr).map_err(Error::Parse)?;
    eval(&parsed, series)
}

fn matches(matcher: &Matcher, labels: &Labels) -> bool {
    // An absent label matches as the empty string, as in Prometheus.
    matcher.is_match(labels.get(&matcher.name).map(String::as_str).unwrap_or(""))
}

fn signature(labels: &Labels, modifier: Option<&LabelModifier>) -> Labels {
    labels
        .iter()
        .filter(|(k, _)| match modifier {
            Some(LabelModifier::Include(on)) => on.labels.contains(k),
            Some(LabelModifier::Exclude(ignoring)) => *k != "__name__" && !ignoring.labels.contains(k),
            None => *k != "__name__",
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn without_name(labels: &Labels) -> Labels {
    labels.iter().filter(|(k, _)| *k != "__name__").map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn eval(expr: &Expr, series: &[Sample]) -> Result<Evaluated> {
    match expr {
        Expr::NumberLiteral(n) => Ok(Evaluated::Scalar(n.val)),
        Expr::Paren(p) => eval(&p.expr, series),
        Expr::Unary(u) => Ok(match eval(&u.expr, series)? {
            Evaluated::Scalar(v) => Evaluated::Scalar(-v),
            Evaluated::Vector(samples) => Evaluated::Vector(
                samples
                    .into_iter()
                    .map(|s| Sample { labels: without_name(&s.labels), value: -s.value })
                    .collect(),
            ),
        }),
        Expr::VectorSelector(selector) => {
            if selector.offset.is_some() || selector.at.is_some() {
                return Err(Error::Unsupported(Construct::OffsetOrAt));
            }
            if !selector.matchers.or_matchers.is_empty() {
                return Err(Error::Unsupported(Construct::OrInSelector));
            }
            Ok(Evaluated::Vector(
                series
                    .iter()
                    .filter(|s| selector.name.as_ref().is_none_or(|n| s.labels.get("__name__") == Some(n)))
                    .filter(|s| selector.matchers.matchers.iter().all(|m| matches(m, &s.labels)))
                    .cloned()
                    .collect(),
            ))
        }
        Expr::Binary(binary) => {
            let op = binary.op.to_string();
            let lhs = eval(&binary.lhs, series)?;
            let rhs = eval(&binary.rhs, series)?;
            let modifier = binary.modifier.as_ref();
            let return_bool = modifier.is_some_and(|m| m.return_bool);
            let matching = modifier.and_then(|m| m.matching.as_ref());
            binary_op(&op, lhs, rhs, return_bool, matching)
        }
        Expr::Aggregate(aggregate) => {
            let op = aggregate.op.to_string();
            if aggregate.param.is_some() {
                return Err(Error::Unsupported(Construct::AggregationParameter(op)));
            }
            let Evaluated::Vector(samples) = eval(&aggregate.expr, series)? else {
                return Err(Error::Unsupported(Construct::AggregationOverScalar(op)));
            };
            let mut groups: BTreeMap<Labels, Vec<f64>> = BTreeMap::new();
            for sample in samples {
                let key = match &aggregate.modifier {
                    Some(LabelModifier::Include(by)) => sample
                        .labels
                        .iter()
                        .filter(|(k, _)| by.labels.contains(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    Some(LabelModifier::Exclude(without)) => without_name(&sample.labels)
                        .into_iter()
                        .filter(|(k, _)| !without.labels.contains(k))
                        .collect(),
                    None => Labels::new(),
                };
                groups.entry(key).or_default().push(sample.value);
            }
            let fold = |values: &[f64]| -> Result<f64> {
                Ok(match op.as_str() {
                    "sum" => values.iter().sum(),
                    "min" => values.iter().copied().fold(f64::INFINITY, f64::min),
                    "max" => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    "avg" => values.iter().sum::<f64>() / values.len() as f64,
                    "count" => values.len() as f64,
                    other => return Err(Error::Unsupported(Construct::Aggregation(other.to_string()))),
                })
            };
            let mut out = Vec::new();
            for (labels, values) in groups {
                out.push(Sample { labels, value: fold(&values)? });
            }
            Ok(Evaluated::Vector(out))
        }
        // `vector(s)`: the scalar as a one-sample vector without labels (an always-firing alert).
        Expr::Call(call) if call.func.name == "vector" && call.args.args.len() == 1 => {
            match eval(&call.args.args[0], series)? {
                Evaluated::Scalar(value) => {
                    Ok(Evaluated::Vector(vec![Sample { labels: Labels::new(), value }]))
                }
                Evaluated::Vector(_) => Err(Error::Unsupported(Construct::VectorOfVector)),
            }
        }
        Expr::Call(call) => Err(Error::Unsupported(Construct::Function(call.func.name.to_string()))),
        Expr::MatrixSelector(_) => Err(Error::Unsupported(Construct::RangeSelector)),
        Expr::Subquery(_) => Err(Error::Unsupported(Construct::Subquery)),
        Expr::StringLiteral(_) => Err(Error::Unsupported(Construct::StringLiteral)),
        Expr::Extension(_) => Err(Error::Unsupported(Construct::Extension)),
    }
}

fn arithmetic(op: &str, a: f64, b: f64) -> Option<std::result::Result<f64, bool>> {
    // Some(Ok(value)) for arithmetic, Some(Err(holds)) for comparisons, None for set operators.
    Some(match op {
        "+" => Ok(a + b),
        "-" => Ok(a - b),
        "*" => Ok(a * b),
        "/" => Ok(a / b),
        "%" => Ok(a % b),
        "^" => Ok(a.powf(b)),
        "==" => Err(a == b),
        "!=" => Err(a != b),
        ">" => Err(a > b),
        "<" => Err(a < b),
        ">=" => Err(a >= b),
        "<=" => Err(a <= b),
        _ => return None,
    })
}

fn binary_op(
    op: &str,
    lhs: Evaluated,
    rhs: Evaluated,
    return_bool: bool,
    matching: Option<&LabelModifier>,
) -> Result<Evaluated> {
    use Evaluated::{Scalar, Vector};
    let combine = |a: f64, b: f64, keep: f64| -> Result<Option<f64>> {
        match arithmetic(op, a, b) {
            Some(Ok(v)) => Ok(Some(v)),
            Some(Err(holds)) if return_bool => Ok(Some(if holds { 1.0 } else { 0.0 })),
            Some(Err(true)) => Ok(Some(keep)),
            Some(Err(false)) => Ok(None),
            None => Err(Error::Unsupported(Construct::Operator(op.to_string()))),
        }
    };
    let is_comparison = matches!(op, "==" | "!=" | ">" | "<" | ">=" | "<=");
    let relabel =
        |labels: &Labels| if is_comparison && !return_bool { labels.clone() } else { without_name(labels) };
    match (lhs, rhs) {
        (Scalar(a), Scalar(b)) => match arithmetic(op, a, b) {
            Some(Ok(v)) => Ok(Scalar(v)),
            Some(Err(holds)) if return_bool => Ok(Scalar(if holds { 1.0 } else { 0.0 })),
            _ => Err(Error::Unsupported(Construct::ScalarComparison(op.to_string()))),
        },
        (Vector(samples), Scalar(b)) => {
            let mut out = Vec::new();
            for s in samples {
                if let Some(value) = combine(s.value, b, s.value)? {
                    out.push(Sample { labels: relabel(&s.labels), value });
                }
            }
            Ok(Vector(out))
        }
        (Scalar(a), Vector(samples)) => {
            let mut out = Vec::new();
            for s in samples {
                if let Some(value) = combine(a, s.value, s.value)? {
                    out.push(Sample { labels: relabel(&s.labels), value });
                }
            }
            Ok(Vector(out))
        }
        (Vector(left), Vector(right)) => {
            let right_by: BTreeMap<Labels, &Sample> =
                right.iter().map(|s| (signature(&s.labels, matching), s)).collect();
            let has = |s: &Sample| right_by.contains_key(&signature(&s.labels, matching));
            match op {
                "and" => return Ok(Vector(left.into_iter().filter(|s| has(s)).collect())),
                "unless" => return Ok(Vector(left.into_iter().filter(|s| !has(s)).collect())),
                "or" => {
                    let left_sigs: Vec<Labels> =
                        left.iter().map(|s| signature(&s.labels, matching)).collect();
                    let mut out = left;
                    out.extend(
                        right.into_iter().filter(|s| !left_sigs.contains(&signature(&s.labels, matching))),
                    );
                    return Ok(Vector(out));
                }
                _ => {}
            }
            let mut out = Vec::new();
            for s in &left {
                let Some(other) = right_by.get(&signature(&s.labels, matching)) else { continue };
                if let Some(value) = combine(s.value, other.value, s.value)? {
                    let labels = if is_comparison && !return_bool {
                        s.labels.clone()
                    } else {
                        signature(&s.labels, matching)
                    };
                    out.push(Sample { labels, value });
                }
            }
            Ok(Vector(out))
        }
    }
}

/// How one alerting rule fares against the synthetic states.
enum RuleVerdict {
    /// It fires on every breakage in every scenery, never on the restored state, long enough.
    Passes(Message),
    /// It does not, with why.
    Fails(Message),
    /// Its expression cannot be evaluated, with why.
    Unevaluable(Message),
}

/// Evaluates an `alertRule` check over the observed PrometheusRules and DaemonSet.
///
/// Only a rule that could be the learner's answer is graded: `before_start` holds the uids of
/// the objects in the rules' namespace when the lab was first started (`None`: not recorded),
/// and a PrometheusRule among them (the platform's own) is left alone — named in the evidence
/// only with `details` — whatever its expressions use. Of the rest, one rule that passes
/// passes the check; otherwise an expression the evaluator cannot judge makes it ERROR (it
/// might be right), and failing rules FAIL.
pub fn alert_rule(
    check: &AlertRuleCheck,
    observed: &Observed,
    before_start: Option<&std::collections::BTreeSet<String>>,
    details: bool,
) -> Outcome {
    let rules = match observed.select(&check.rules) {
        Ok(rules) => rules,
        Err(e) => return Outcome::Error(vec![e.message()]),
    };
    let Some(daemon_sets) = observed.objects("apps/v1", "DaemonSet") else {
        return Outcome::Error(vec![msg!("grade-not-observed", kind = "apps/v1 DaemonSet")]);
    };
    let namespace = check.daemon_set.namespace.clone().unwrap_or_default();
    let name = &check.daemon_set.name;
    let desired = daemon_sets
        .iter()
        .find(|d| {
            d.pointer("/metadata/name").and_then(Value::as_str) == Some(name.as_str())
                && d.pointer("/metadata/namespace").and_then(Value::as_str) == Some(namespace.as_str())
        })
        .and_then(|d| d.pointer("/status/desiredNumberScheduled").and_then(Value::as_i64))
        .filter(|d| *d > 0)
        .unwrap_or(3);
    let states = States {
        broken: breakages(&namespace, name, desired),
        restored: restored(&namespace, name, desired),
        daemon_set: format!("{namespace}/{name}"),
        min_for: check.min_for.unwrap_or(Timeout(std::time::Duration::from_secs(60))),
    };
    let (mut passed, mut failed, mut unevaluable, mut foreign) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut found_any = false;
    for rule_object in rules {
        let who = super::observed::describe(rule_object);
        let uid = rule_object.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default();
        if before_start.is_some_and(|uids| uids.contains(uid)) {
            foreign.push(msg!("alert-rule-not-the-learners", object = &who));
            continue;
        }
        let groups = rule_object.pointer("/spec/groups").and_then(Value::as_array).into_iter().flatten();
        for rule in groups.flat_map(|g| g.get("rules").and_then(Value::as_array).into_iter().flatten()) {
            let Some(alert) = rule.get("alert").and_then(Value::as_str) else { continue };
            found_any = true;
            match judge_rule(&states, &who, alert, rule) {
                RuleVerdict::Passes(line) => passed.push(line),
                RuleVerdict::Fails(line) => failed.push(line),
                RuleVerdict::Unevaluable(line) => unevaluable.push(line),
            }
        }
    }
    let noted = |mut lines: Vec<Message>| {
        if details {
            lines.extend(foreign.iter().cloned());
        }
        lines
    };
    if !passed.is_empty() {
        return Outcome::Pass(noted(passed.into_iter().take(1).collect()));
    }
    if !unevaluable.is_empty() {
        return Outcome::Error(noted(unevaluable.into_iter().chain(failed).collect()));
    }
    if !found_any {
        failed.push(msg!("alert-no-rule", target = super::observed::describe_target(&check.rules)));
    }
    Outcome::Fail(noted(failed))
}

/// The synthetic states a rule is evaluated over.
struct States {
    /// Each breakage, in every scenery.
    broken: Vec<(Message, Vec<Vec<Sample>>)>,
    /// The restored state, in every scenery and generation.
    restored: Vec<Vec<Sample>>,
    /// `namespace/name` of the DaemonSet.
    daemon_set: String,
    /// The shortest `for` accepted.
    min_for: Timeout,
}

/// One alerting rule against every synthetic state.
fn judge_rule(states: &States, who: &Message, alert: &str, rule: &Value) -> RuleVerdict {
    let expr = rule.get("expr").and_then(Value::as_str).unwrap_or("");
    let for_text = rule.get("for").and_then(Value::as_str).unwrap_or("0s");
    let for_ok = prometheus_duration(for_text).is_some_and(|d| d >= states.min_for.0);
    let fires = |series: &[Sample]| match evaluate(expr, series) {
        Ok(Evaluated::Vector(samples)) => Ok(!samples.is_empty()),
        Ok(Evaluated::Scalar(_)) => Err(msg!("alert-yields-scalar")),
        Err(e) => Err(e.message()),
    };
    let unevaluable = |reason: Message| {
        let expr = format!("{expr:?}");
        RuleVerdict::Unevaluable(msg!(
            "alert-expr-error",
            object = who,
            alert = alert,
            expr = expr,
            reason = reason
        ))
    };
    let mut missed = Vec::new();
    let mut incidental = false;
    for (breakage, sceneries) in &states.broken {
        let mut fired = 0;
        for series in sceneries {
            match fires(series) {
                Ok(true) => fired += 1,
                Ok(false) => {}
                Err(e) => return unevaluable(e),
            }
        }
        if fired < sceneries.len() {
            incidental |= fired > 0;
            missed.push(breakage.clone());
        }
    }
    let mut on_restored = false;
    for series in &states.restored {
        match fires(series) {
            Ok(fired) => on_restored |= fired,
            Err(e) => return unevaluable(e),
        }
    }
    let daemon_set = &states.daemon_set;
    let line = match (missed.is_empty(), on_restored) {
        (true, false) if for_ok => {
            return RuleVerdict::Passes(msg!(
                "alert-fires-on-every-breakage",
                object = who,
                alert = alert,
                daemonset = daemon_set,
                duration = for_text
            ));
        }
        (true, false) => msg!(
            "alert-for-too-short",
            object = who,
            alert = alert,
            duration = for_text,
            least = states.min_for.to_string()
        ),
        (false, _) if incidental => msg!(
            "alert-fires-on-incidentals",
            object = who,
            alert = alert,
            breakages = Arg::joined(missed, msg!("alert-nor-when"))
        ),
        (false, _) if missed.len() == states.broken.len() => {
            msg!("alert-never-fires", object = who, alert = alert, daemonset = daemon_set)
        }
        (false, _) => msg!(
            "alert-misses",
            object = who,
            alert = alert,
            breakages = Arg::joined(missed, msg!("alert-nor-when"))
        ),
        (true, true) => {
            msg!("alert-fires-when-restored", object = who, alert = alert, daemonset = daemon_set)
        }
    };
    RuleVerdict::Fails(line)
}

/// A Prometheus duration (`1m`, `90s`, `1h30m`, `500ms`).
fn prometheus_duration(text: &str) -> Option<std::time::Duration> {
    let mut total = std::time::Duration::ZERO;
    let mut digits = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: u64 = digits.parse().ok()?;
        digits.clear();
        let unit = match (c, chars.peek()) {
            ('m', Some('s')) => {
                chars.next();
                std::time::Duration::from_millis(n)
            }
            ('s', _) => std::time::Duration::from_secs(n),
            ('m', _) => std::time::Duration::from_secs(n * 60),
            ('h', _) => std::time::Duration::from_secs(n * 3600),
            ('d', _) => std::time::Duration::from_secs(n * 86400),
            ('w', _) => std::time::Duration::from_secs(n * 604_800),
            ('y', _) => std::time::Duration::from_secs(n * 31_536_000),
            _ => return None,
        };
        total += unit;
    }
    digits.is_empty().then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::Status;

    fn fires(expr: &str, state: DaemonSetState) -> bool {
        match evaluate(expr, &state.series("gpu-operator", "toolkit")).unwrap() {
            Evaluated::Vector(samples) => !samples.is_empty(),
            Evaluated::Scalar(_) => panic!("scalar"),
        }
    }

    #[test]
    fn typical_rules_separate_broken_from_restored() {
        let broken = DaemonSetState::stalled(3);
        let restored = DaemonSetState::restored(3);
        for expr in [
            r#"kube_daemonset_status_number_unavailable{namespace="gpu-operator"} > 0"#,
            "kube_daemonset_status_desired_number_scheduled - kube_daemonset_status_updated_number_scheduled > 0",
            "kube_daemonset_status_number_ready / kube_daemonset_status_desired_number_scheduled < 1",
            "sum by (namespace, daemonset) (kube_daemonset_status_number_unavailable) > 0",
            "kube_daemonset_status_updated_number_scheduled != on(namespace, daemonset) kube_daemonset_status_desired_number_scheduled",
        ] {
            assert!(fires(expr, broken), "{expr} on broken");
            assert!(!fires(expr, restored), "{expr} on restored");
        }
        // Wrong rules: always or never firing, or on another namespace.
        assert!(fires("kube_daemonset_status_desired_number_scheduled > 0", restored));
        assert!(!fires(r#"kube_daemonset_status_number_unavailable{namespace="other"} > 0"#, broken));
    }

    #[test]
    fn unsupported_functions_are_named() {
        let error = evaluate("rate(kube_pod_container_status_restarts_total[5m]) > 0", &[]).unwrap_err();
        assert_eq!(error.to_string(), "uses function rate(), which the engine's evaluator does not support");
    }

    #[test]
    fn a_prometheus_rule_is_graded_on_both_states_and_its_for() {
        let rule = |expr: &str, for_: &str| {
            serde_json::json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
                "metadata": {"name": "toolkit", "namespace": "monitoring"},
                "spec": {"groups": [{"name": "g", "rules": [{"alert": "ToolkitStuck", "expr": expr, "for": for_}]}]}})
        };
        let check: AlertRuleCheck = serde_json::from_value(serde_json::json!({
            "rules": {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule"},
            "daemonSet": {"apiVersion": "apps/v1", "kind": "DaemonSet", "namespace": "gpu-operator", "name": "toolkit"},
        }))
        .unwrap();
        let grade = |rule: Value| {
            let mut observed = Observed::new();
            observed.insert("monitoring.coreos.com/v1", "PrometheusRule", vec![rule]);
            observed.insert("apps/v1", "DaemonSet", vec![]);
            alert_rule(&check, &observed, None, false)
        };
        let good = r#"kube_daemonset_status_number_unavailable{daemonset="toolkit"} > 0
            or kube_daemonset_status_desired_number_scheduled{daemonset="toolkit"} < 3"#;
        assert_eq!(grade(rule(good, "5m")).status(), Status::Pass);
        // The wrong answer the instructor notes list: it misses the toleration drift.
        assert_eq!(
            grade(rule("kube_daemonset_status_desired_number_scheduled != kube_daemonset_status_number_ready", "5m")).english(),
            (Status::Fail, vec![
                "prometheusrule monitoring/toolkit: alert ToolkitStuck does not fire when the template no longer targets a node (DESIRED dropped)".into()
            ])
        );
        // One variant only: a pod waiting on its image.
        assert_eq!(
            grade(rule(r#"kube_pod_container_status_waiting_reason{reason="ImagePullBackOff"} > 0"#, "5m")).english(),
            (Status::Fail, vec![
                "prometheusrule monitoring/toolkit: alert ToolkitStuck does not fire when the new pod cannot be scheduled, nor when the template no longer targets a node (DESIRED dropped)".into()
            ])
        );
        assert_eq!(
            grade(rule("vector(1)", "5m")).english(),
            (Status::Fail, vec![
                "prometheusrule monitoring/toolkit: alert ToolkitStuck also fires when gpu-operator/toolkit is restored".into()
            ])
        );
        assert_eq!(
            grade(rule("kube_daemonset_status_number_ready < 0", "5m")).english(),
            (Status::Fail, vec![
                "prometheusrule monitoring/toolkit: alert ToolkitStuck does not fire on a broken rollout of gpu-operator/toolkit".into()
            ])
        );
        assert_eq!(
            grade(rule(good, "0s")).english(),
            (
                Status::Fail,
                vec![
                    "prometheusrule monitoring/toolkit: alert ToolkitStuck: `for: 0s` is shorter than 1m"
                        .into()
                ]
            )
        );
        assert_eq!(
            grade(rule("kube_daemonset_status_desired_number_scheduled > 0", "5m")).english(),
            (Status::Fail, vec![
                "prometheusrule monitoring/toolkit: alert ToolkitStuck also fires when gpu-operator/toolkit is restored"
                    .into()
            ])
        );
    }

    #[test]
    fn a_rule_keyed_on_what_the_states_vary_fails_and_foreign_rules_are_left_alone() {
        let check: AlertRuleCheck = serde_json::from_value(serde_json::json!({
            "rules": {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "namespace": "gpu-operator"},
            "daemonSet": {"apiVersion": "apps/v1", "kind": "DaemonSet", "namespace": "gpu-operator", "name": "toolkit"},
        }))
        .unwrap();
        let rule = |name: &str, uid: &str, expr: &str| {
            serde_json::json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
                "metadata": {"name": name, "namespace": "gpu-operator", "uid": uid},
                "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": expr, "for": "5m"}]}]}})
        };
        let grade = |rules: Vec<Value>, before: &[&str], details: bool| {
            let mut observed = Observed::new();
            observed.insert("monitoring.coreos.com/v1", "PrometheusRule", rules);
            observed.insert("apps/v1", "DaemonSet", vec![]);
            let before: std::collections::BTreeSet<String> = before.iter().map(|u| u.to_string()).collect();
            alert_rule(&check, &observed, Some(&before), details)
        };
        // Keyed on the generation, the age or a target label: right in one scenery only.
        for expr in [
            "kube_daemonset_metadata_generation == 2",
            "kube_daemonset_status_observed_generation < 3 or kube_daemonset_status_desired_number_scheduled < 3",
            "kube_daemonset_created < 1700000001 and kube_daemonset_created > 1699999999",
            r#"kube_daemonset_status_number_ready{instance="kube-state-metrics:8080"} < 3"#,
        ] {
            let (status, evidence) = grade(vec![rule("mine", "u1", expr)], &[], false).english();
            assert_eq!(status, Status::Fail, "{expr}: {evidence:?}");
        }
        let (_, evidence) =
            grade(vec![rule("mine", "u1", "kube_daemonset_metadata_generation == 2")], &[], false).english();
        assert!(
            evidence[0].contains("does not always fire when the new image cannot be pulled"),
            "{evidence:?}"
        );
        let good = r#"kube_daemonset_status_number_unavailable{daemonset="toolkit"} > 0
            or kube_daemonset_status_desired_number_scheduled{daemonset="toolkit"} < 3"#;
        let platform = rule("platform", "p1", "rate(node_cpu_seconds_total[5m]) > 0.9");
        // The platform's rule, there before the lab, is never graded: named with --details only.
        let both = vec![platform.clone(), rule("mine", "u1", good)];
        assert_eq!(grade(both.clone(), &["p1"], false).english().1.len(), 1);
        let (status, evidence) = grade(both, &["p1"], true).english();
        assert_eq!(status, Status::Pass);
        assert_eq!(
            evidence[1],
            "prometheusrule gpu-operator/platform existed before the lab started: not graded"
        );
        assert_eq!(grade(vec![platform.clone()], &["p1"], false).status(), Status::Fail);
        // A rule made after start that cannot be evaluated might be the answer: ERROR, unless
        // another rule passes.
        assert_eq!(grade(vec![platform.clone()], &[], false).status(), Status::Error);
        assert_eq!(grade(vec![platform, rule("mine", "u1", good)], &[], false).status(), Status::Pass);
    }

    #[test]
    fn durations() {
        assert_eq!(prometheus_duration("1m30s"), Some(std::time::Duration::from_secs(90)));
        assert_eq!(prometheus_duration("500ms"), Some(std::time::Duration::from_millis(500)));
        assert_eq!(prometheus_duration("5x"), None);
    }
}
