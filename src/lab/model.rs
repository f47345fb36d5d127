//! The lab bundle v1 model: what `lab.yaml` holds, as Rust types (serde + JSON Schema).
//!
//! Every struct rejects unknown fields, so a typo is an error at its line and column rather than
//! a silently ignored setting (as KUTTL's test steps do). Ids that other parts of the
//! file refer to are [`Spanned`] so the loader can point at them. The format is documented in
//! `docs/lab-format.md`; `docs/lab.schema.json` is generated from these types.

use std::{collections::BTreeMap, fmt, time::Duration};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
pub use serde_saphyr::Spanned;

use crate::session::Lang;

/// The only `apiVersion` this build reads.
pub const API_VERSION: &str = "lab-runner.io/v1";

/// Errors from reading a value of the model from its text form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A timeout is not a number of seconds, minutes or hours.
    #[error("invalid duration {0:?}: use whole numbers with s, m or h, like 90s, 2m or 1m30s")]
    BadDuration(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A lab bundle's `lab.yaml`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "lab-runner lab bundle v1 (lab.yaml)")]
pub struct Lab {
    /// Always `lab-runner.io/v1`.
    pub api_version: ApiVersion,
    /// The lab's id: lowercase letters, digits and `-`; the bundle directory has the same name.
    #[schemars(with = "String", regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"))]
    pub id: Spanned<String>,
    /// One-line title.
    pub title: Text,
    /// What the learner is told at `start`: the situation and the goal.
    pub briefing: Text,
    /// The cluster shape the lab needs.
    #[serde(default)]
    pub requires: Requires,
    /// Stages, applied in order by `start`.
    pub stages: Vec<Stage>,
    /// Named variants of the lab (e.g. three ways a rollout breaks). Empty: one plain lab.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<Variant>,
    /// What the learner must do, graded by `check`.
    pub tasks: Vec<Task>,
    /// What `reset` deletes and restores.
    #[serde(default)]
    pub reset: Reset,
}

/// The bundle format version marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum ApiVersion {
    /// Version 1 of the format.
    #[serde(rename = "lab-runner.io/v1")]
    V1,
}

/// A text in both course languages.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Text {
    /// English.
    #[serde(default)]
    pub en: String,
    /// Japanese.
    #[serde(default)]
    pub ja: String,
}

impl Text {
    /// The text in `lang`, falling back to the other language when that one is empty.
    pub fn get(&self, lang: Lang) -> &str {
        let (wanted, other) = match lang {
            Lang::En => (&self.en, &self.ja),
            Lang::Ja => (&self.ja, &self.en),
        };
        if wanted.trim().is_empty() { other } else { wanted }
    }

    /// The languages whose text is empty, for lint.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if self.en.trim().is_empty() {
            missing.push("en");
        }
        if self.ja.trim().is_empty() {
            missing.push("ja");
        }
        missing
    }
}

/// The cluster a lab needs: a simulator topology, and facts checked on a real cluster.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Requires {
    /// Topology file name under `manifests/clusters/` the embedded simulator starts with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<String>,
    /// Node groups a real cluster must have (checked by `start`'s preflight).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeRequirement>,
}

/// "At least `min` nodes match `selector`, and each advertises `advertise`".
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodeRequirement {
    /// What these nodes are for, shown when the preflight fails.
    pub description: Text,
    /// Which nodes count.
    #[serde(default)]
    pub selector: LabelSelector,
    /// At least this many nodes must match.
    pub min: u32,
    /// Resource names each matching node must advertise in `status.allocatable` with a value
    /// above zero (e.g. `nvidia.com/gpu`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advertise: Vec<String>,
}

/// A Kubernetes label selector (`matchLabels` and `matchExpressions`, as in `metav1.LabelSelector`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must have exactly these values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<SelectorRequirement>,
}

impl LabelSelector {
    /// The same selector as the Kubernetes semantics in [`crate::k8s::selector`] evaluate it.
    pub fn to_k8s(&self) -> crate::k8s::selector::LabelSelector {
        use crate::k8s::selector::{LabelOp, LabelRequirement};
        let labels = self
            .match_labels
            .iter()
            .map(|(key, value)| LabelRequirement { key: key.clone(), op: LabelOp::In(vec![value.clone()]) });
        let expressions = self.match_expressions.iter().map(|requirement| LabelRequirement {
            key: requirement.key.clone(),
            op: match requirement.operator {
                SelectorOperator::In => LabelOp::In(requirement.values.clone()),
                SelectorOperator::NotIn => LabelOp::NotIn(requirement.values.clone()),
                SelectorOperator::Exists => LabelOp::Exists,
                SelectorOperator::DoesNotExist => LabelOp::DoesNotExist,
            },
        });
        crate::k8s::selector::LabelSelector { requirements: labels.chain(expressions).collect() }
    }
}

/// One set-based label requirement.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SelectorRequirement {
    /// The label key.
    pub key: String,
    /// How the key relates to the values.
    pub operator: SelectorOperator,
    /// Values for `In` and `NotIn`; empty for `Exists` and `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// A label selector operator, spelled as Kubernetes spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum SelectorOperator {
    /// The label's value is one of `values`.
    In,
    /// The label is absent or its value is none of `values`.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

/// A set of manifests applied together, with the waits that end the stage.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Stage {
    /// Stage id, unique in the lab (`reset --to-stage` names it).
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// Manifest files (multi-document YAML), relative to the bundle directory, applied in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<String>")]
    pub manifests: Vec<Spanned<String>>,
    /// Per-variant manifests and waits, applied after `manifests` when that variant runs. When a
    /// stage has variants, it must have one for every lab variant.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variants: BTreeMap<String, StageVariant>,
    /// Conditions awaited after applying, whatever the variant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<Wait>,
    /// Objects of this stage that may exist before the lab starts and that it takes over on
    /// purpose: their pre-image (the labels, annotations and fields the manifest sets) is
    /// recorded and restored by `reset --remove`. Any other object of that name that the lab did
    /// not create stops `start` (a Namespace or CRD that exists is used as it is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopt: Vec<ObjectRef>,
    /// Values read from the cluster once the stage's waits hold, stored (salted and hashed) like
    /// the other facts, so a quiz's right answer can be what the cluster actually shows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<FactCapture>,
}

/// A fact `start` reads from the cluster after a stage's waits: one value, at a path of one object
/// or computed by a CEL expression.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FactCapture {
    /// The fact's id (lowercase letters, digits and `-`): a quiz names it with `fact:`.
    #[schemars(with = "String", regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"))]
    pub id: Spanned<String>,
    /// The objects read. With `path`, or with an `expression` using `object`, it must name one
    /// object (`name`); otherwise the expression reads them all as `objects`.
    pub from: Target,
    /// The value's path in the object (`status.readyReplicas`, `spec.hard["requests.cpu"]`).
    /// Exactly one of `path` and `expression`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub path: Option<Spanned<String>>,
    /// A CEL expression over `object` (when `from` names one object) or `objects` (every object
    /// `from` selects), giving a string, a number or a boolean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub expression: Option<Spanned<String>>,
}

/// What one variant adds to a stage.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StageVariant {
    /// Manifest files for this variant, relative to the bundle directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<String>")]
    pub manifests: Vec<Spanned<String>>,
    /// Conditions awaited for this variant (typically the breakage it must show).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<Wait>,
}

/// A condition `start` waits for after applying a stage.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Wait {
    /// What to wait for.
    #[serde(rename = "for")]
    pub wait_for: WaitFor,
    /// The object waited on.
    pub target: ObjectRef,
    /// How long to wait before failing with exit code 4 (`90s`, `2m`, `1m30s`).
    pub timeout: Timeout,
    /// For `stalledAsIntended`: the symptom the breakage must show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symptom: Option<Symptom>,
    /// For `condition`: the condition the target's `status.conditions` must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<ConditionWanted>,
    /// For `event`: the Event that must have been recorded about the target or an object it owns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<EventWanted>,
    /// For `cel`: a CEL expression over the target as `object` that must be true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub expression: Option<Spanned<String>>,
}

/// The kinds of wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WaitFor {
    /// A DaemonSet or Deployment finished rolling out (every counter equals desired, observed
    /// generation current, desired > 0).
    RolledOut,
    /// A Deployment's or Job's `Available`/`Complete`-style readiness.
    Available,
    /// A CustomResourceDefinition is `Established` (and discovery refreshed).
    Established,
    /// A deliberate breakage of a DaemonSet reproduced: the rollout stalled (or drifted) with
    /// `symptom`.
    StalledAsIntended,
    /// Any kind: a condition of `status.conditions` holds, observed at the current generation
    /// (`condition`).
    Condition,
    /// Any kind: an Event with a reason was recorded about the target or an object it owns, at
    /// any depth (`event`).
    Event,
    /// Any kind: a CEL expression over the target is true (`expression`).
    Cel,
}

/// A condition of an object's `status.conditions`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConditionWanted {
    /// The condition's `type` (`ReplicaFailure`, `Progressing`, `Complete`, `Failed`).
    #[serde(rename = "type")]
    pub type_: String,
    /// Its `status` (default `True`).
    #[serde(default)]
    pub status: ConditionStatus,
    /// Its `reason`, when it matters (`FailedCreate`, `ProgressDeadlineExceeded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A condition's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
pub enum ConditionStatus {
    /// `True`.
    #[default]
    True,
    /// `False`.
    False,
    /// `Unknown`.
    Unknown,
}

impl ConditionStatus {
    /// As `status.conditions[].status` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

/// An Event recorded about an object (core/v1 `Event`, by `involvedObject`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EventWanted {
    /// The Event's `reason` (`FailedCreate`, `FailedScheduling`, `BackOff`).
    pub reason: String,
    /// Its `type`; omitted: either.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<EventType>,
}

/// An Event's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

/// The symptom a deliberately broken rollout must show before `start` succeeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Symptom {
    /// The new pod on exactly one node waits in `ImagePullBackOff`; the rollout stalls there.
    ImagePullBackOff,
    /// The new pod stays `Pending` with a `FailedScheduling` event; the rollout stalls there.
    Unschedulable,
    /// `desiredNumberScheduled` dropped: a targeted node is left without a pod while the rollout
    /// reports success.
    DesiredDropped,
}

/// A duration written as `90s`, `2m`, `1h` or `1m30s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout(pub Duration);

impl Timeout {
    /// Parses `90s`, `2m`, `1h`, `1m30s`.
    pub fn parse(text: &str) -> Result<Timeout> {
        let bad = || Error::BadDuration(text.to_string());
        let mut seconds = 0u64;
        let mut digits = String::new();
        for c in text.chars() {
            match c {
                '0'..='9' => digits.push(c),
                's' | 'm' | 'h' if !digits.is_empty() => {
                    let n: u64 = digits.parse().map_err(|_| bad())?;
                    let factor = match c {
                        's' => 1,
                        'm' => 60,
                        _ => 3600,
                    };
                    seconds = n.checked_mul(factor).and_then(|v| seconds.checked_add(v)).ok_or_else(bad)?;
                    digits.clear();
                }
                _ => return Err(bad()),
            }
        }
        if !digits.is_empty() || text.is_empty() {
            return Err(bad());
        }
        Ok(Timeout(Duration::from_secs(seconds)))
    }
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.0.as_secs();
        let (h, m, s) = (total / 3600, total % 3600 / 60, total % 60);
        let mut out = String::new();
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if m > 0 {
            out.push_str(&format!("{m}m"));
        }
        if s > 0 || out.is_empty() {
            out.push_str(&format!("{s}s"));
        }
        f.write_str(&out)
    }
}

impl<'de> Deserialize<'de> for Timeout {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timeout::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Timeout {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl JsonSchema for Timeout {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timeout".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^([0-9]+[hms])+$",
            "description": "A duration: whole numbers with h, m or s, like 90s, 2m or 1m30s."
        })
    }
}

/// One object, named.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectRef {
    /// `apps/v1`, `v1`, …
    pub api_version: String,
    /// `DaemonSet`, `Node`, …
    pub kind: String,
    /// Namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
}

/// A named variant of the lab.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Variant {
    /// Variant id (`start --variant ID`).
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// What this variant breaks, for instructors (`status --instructor`, `labs show`).
    pub description: Text,
}

/// Whether a task is work on the cluster or a question answered with `lab-runner answer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TaskKind {
    /// Graded from cluster state.
    #[default]
    Task,
    /// Graded from an answer stored by `lab-runner answer` (needs a `quiz` expectation).
    Quiz,
}

/// One graded task.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Task {
    /// Task id, unique in the lab (`answer LAB TASK`, `needs`).
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// One-line title.
    pub title: Text,
    /// What to do.
    pub description: Text,
    /// Points for passing; above zero.
    #[schemars(with = "i64")]
    pub points: Spanned<i64>,
    /// Tasks that must pass before this one is graded (otherwise it is BLOCKED).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<String>")]
    pub needs: Vec<Spanned<String>>,
    /// Task or quiz.
    #[serde(default)]
    pub kind: TaskKind,
    /// What must hold for the task to pass: all of these.
    pub expect: Vec<Expectation>,
    /// Hints in tiers, revealed one at a time: nudge, pointer, command.
    #[serde(default)]
    pub hints: Vec<Text>,
    /// The reference solution: shell commands run with kubectl on the PATH, in order.
    #[serde(default)]
    pub solution: Vec<String>,
    /// Attempts a learner might make to reach PASS without doing the task; `selftest` runs each
    /// from the state before the task's solution and proves the task does not pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shortcuts: Vec<Shortcut>,
    /// Other correct ways to do the task (roll back, fix forward, each valid fix): `selftest`
    /// runs each from the state before the task's solution and proves the task passes. The first
    /// is the one `selftest` uses when it solves the tasks in another order (write it with the
    /// steps in the order the description names them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub solutions: Vec<Attempt>,
    /// Objects the task asks the learner to create. In a namespace that existed before the lab
    /// started (one shared with a platform or an operator), `reset` deletes only objects matching
    /// one of these as the learner's: what others made there is theirs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub creates: Vec<Target>,
}

/// Commands a learner might run for a task: a shortcut (must leave it not passing) or an
/// alternative solution (must make it pass).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Attempt {
    /// Its id, unique among the task's shortcuts and solutions (a selftest failure names it).
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// What the learner does, for instructors.
    pub description: Text,
    /// Shell commands run like `solution`'s (kubectl on the PATH), in order; they should wait
    /// for what they start, as a learner would before running `check`.
    pub commands: Vec<String>,
}

/// A shortcut a learner might try: commands that must leave the task not passing.
pub type Shortcut = Attempt;

/// One expectation of a task. Each is written as a one-key map naming its kind.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Expectation {
    /// The selected objects match a partial object.
    Match(MatchExpectation),
    /// No object matches the target.
    Absent(AbsentExpectation),
    /// The number of objects matching the target compares with a value.
    Count(CountExpectation),
    /// A quantity at a path of the selected objects compares with a value.
    Quantity(QuantityExpectation),
    /// A CEL expression over the observed objects, the facts and the answers is true.
    Cel(CelExpectation),
    /// Built-in: rollout analysis of a DaemonSet (engine).
    Rollout(RolloutCheck),
    /// Built-in: the NVIDIA device-plugin config in effect per node (engine).
    DevicePluginConfig(DevicePluginConfigCheck),
    /// Built-in: whether a pod (spec) can be scheduled (engine).
    Schedulable(SchedulableCheck),
    /// Built-in: a ResourceQuota is in force (engine).
    QuotaInForce(QuotaInForceCheck),
    /// Built-in: a PrometheusRule alerts on the broken state and not on the restored one (engine).
    AlertRule(AlertRuleCheck),
    /// Built-in: the answer given with `lab-runner answer` (engine).
    Quiz(QuizCheck),
}

impl Expectation {
    /// The expectation's name as written in `lab.yaml`.
    pub fn name(&self) -> &'static str {
        match self {
            Expectation::Match(_) => "match",
            Expectation::Absent(_) => "absent",
            Expectation::Count(_) => "count",
            Expectation::Quantity(_) => "quantity",
            Expectation::Cel(_) => "cel",
            Expectation::Rollout(_) => "rollout",
            Expectation::DevicePluginConfig(_) => "devicePluginConfig",
            Expectation::Schedulable(_) => "schedulable",
            Expectation::QuotaInForce(_) => "quotaInForce",
            Expectation::AlertRule(_) => "alertRule",
            Expectation::Quiz(_) => "quiz",
        }
    }

    /// True for the named built-in checks the engine evaluates.
    pub fn is_builtin(&self) -> bool {
        !matches!(
            self,
            Expectation::Match(_)
                | Expectation::Absent(_)
                | Expectation::Count(_)
                | Expectation::Quantity(_)
                | Expectation::Cel(_)
        )
    }
}

/// Which objects an expectation looks at: a kind, optionally narrowed by namespace, name or labels.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Target {
    /// `apps/v1`, `v1`, …
    pub api_version: String,
    /// `DaemonSet`, `Node`, …
    pub kind: String,
    /// Only objects in this namespace (omit for cluster-scoped kinds or every namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Only the object with this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Only objects whose labels match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
}

/// How a list in the expected object is compared with the observed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ListSemantics {
    /// Every expected element matches some observed element, in any order; extra observed
    /// elements are fine.
    Contains,
    /// Same length, and element *i* matches observed element *i*.
    Exactly,
    /// The expected list holds one element, and every observed element matches it; an empty or
    /// missing observed list fails.
    Each,
    /// No observed element matches any expected element; a missing list passes.
    None,
}

/// How many of the selected objects must satisfy an expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Quantifier {
    /// Every selected object, and at least one must exist.
    #[default]
    All,
    /// At least one selected object.
    Any,
}

/// `match`: the selected objects match a partial object.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MatchExpectation {
    /// The objects compared.
    pub target: Target,
    /// The expected partial object, inline. Exactly one of `expected` and `expectedFile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<serde_json::Value>,
    /// The expected partial object from a YAML file in the bundle (`expected/…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub expected_file: Option<Spanned<String>>,
    /// The semantics of every list in the expected object, by path (`spec.template.spec.containers`;
    /// a key holding dots is written `["nvidia.com/gpu"]`). A list without a declared semantics
    /// is an error.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lists: BTreeMap<String, ListSemantics>,
    /// Extra paths whose values compare as quantities (paths under `resources`, `capacity`,
    /// `allocatable`, `hard` and `used` always do).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quantities: Vec<String>,
    /// Every selected object must match (default), or any one.
    #[serde(default)]
    pub objects: Quantifier,
}

/// `absent`: nothing matches the target.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AbsentExpectation {
    /// The objects that must not exist.
    pub target: Target,
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum CompareOp {
    /// Equal.
    #[serde(rename = "==")]
    Eq,
    /// Not equal.
    #[serde(rename = "!=")]
    Ne,
    /// Greater than or equal.
    #[serde(rename = ">=")]
    Ge,
    /// Greater than.
    #[serde(rename = ">")]
    Gt,
    /// Less than or equal.
    #[serde(rename = "<=")]
    Le,
    /// Less than.
    #[serde(rename = "<")]
    Lt,
}

impl CompareOp {
    /// Applies the operator to an ordering of observed against expected.
    pub fn holds(self, observed_vs_expected: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CompareOp::Eq => observed_vs_expected == Equal,
            CompareOp::Ne => observed_vs_expected != Equal,
            CompareOp::Ge => observed_vs_expected != Less,
            CompareOp::Gt => observed_vs_expected == Greater,
            CompareOp::Le => observed_vs_expected != Greater,
            CompareOp::Lt => observed_vs_expected == Less,
        }
    }

    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Ge => ">=",
            CompareOp::Gt => ">",
            CompareOp::Le => "<=",
            CompareOp::Lt => "<",
        }
    }
}

/// `count`: how many objects match the target.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CountExpectation {
    /// The objects counted.
    pub target: Target,
    /// Comparison of the count with `value`.
    pub op: CompareOp,
    /// The number compared with.
    pub value: u64,
}

/// `quantity`: a Kubernetes quantity at a path compares with a value.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QuantityExpectation {
    /// The objects looked at.
    pub target: Target,
    /// Path of the quantity (`status.allocatable["nvidia.com/gpu"]`, `spec.containers[0].resources.limits.memory`).
    pub path: String,
    /// Comparison of the observed quantity with `value`.
    pub op: CompareOp,
    /// The quantity compared with (`8`, `1Gi`, `500m`).
    #[schemars(with = "QuantityText")]
    pub value: serde_json::Value,
    /// Every selected object must satisfy it (default), or any one.
    #[serde(default)]
    pub objects: Quantifier,
}

/// `cel`: a CEL expression over the observed objects is true.
///
/// With `target`, the expression is evaluated once per selected object, bound as `object` (and
/// `objects` says how many must satisfy it, as for `match`); each of `targets` is bound by its
/// name as the list of the objects it selects. `answers` maps each quiz task to the answer
/// recorded, and `fact(name, value)` says whether `value` is the fact `start` captured.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CelExpectation {
    /// The objects the expression is evaluated for, one at a time, as `object`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// Named lists of objects: each name is a variable of the expression holding the objects its
    /// target selects (names are CEL identifiers: letters, digits and `_`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub targets: BTreeMap<String, Target>,
    /// The CEL expression; it must be true.
    #[schemars(with = "String")]
    pub expression: Spanned<String>,
    /// With `target`: every selected object must satisfy it (default), or any one.
    #[serde(default)]
    pub objects: Quantifier,
}

impl CelExpectation {
    /// The variable the one `target`'s object is bound to.
    pub const OBJECT: &'static str = "object";
    /// The variable the quiz answers are bound to.
    pub const ANSWERS: &'static str = "answers";
    /// The function comparing a value with a captured fact.
    pub const FACT: &'static str = "fact";

    /// The variables the expression may use: each of `targets`' names, `object` with a `target`,
    /// and `answers`.
    pub fn variables(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.targets.keys().map(String::as_str).collect();
        if self.target.is_some() {
            names.push(Self::OBJECT);
        }
        names.push(Self::ANSWERS);
        names
    }

    /// True when `name` can be one of `targets`: a CEL identifier that is neither a reserved
    /// word, a type name nor a name the expression already has.
    pub fn valid_target_name(name: &str) -> bool {
        use crate::k8s::cel::{RESERVED, TYPE_NAMES};
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && ![Self::OBJECT, Self::ANSWERS, Self::FACT].contains(&name)
            && !RESERVED.contains(&name)
            && !TYPE_NAMES.contains(&name)
    }
}

impl FactCapture {
    /// The variable the expression reads: `object` when `from` names one object, else `objects`.
    pub fn variable(&self) -> &'static str {
        if self.from.name.is_some() { "object" } else { "objects" }
    }
}

/// A quantity as YAML holds it: a string like `1Gi` or a number.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // exists only to shape the JSON Schema
enum QuantityText {
    Text(String),
    Number(f64),
}

/// The state a `rollout` check expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RolloutState {
    /// One generation everywhere: every targeted node runs a Ready pod of one revision,
    /// `numberUnavailable` is 0 and DESIRED equals the number of nodes selected by `nodes`.
    Converged,
    /// Split into two generations: the rollout stopped on some node.
    Stalled,
}

/// `rollout`: rollout analysis of a DaemonSet (per node: pod, revision, image, phase or waiting
/// reason).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RolloutCheck {
    /// The DaemonSet.
    pub target: ObjectRef,
    /// Converged or stalled.
    pub state: RolloutState,
    /// The nodes the DaemonSet must cover; DESIRED must equal their number (so deleting or
    /// relabelling a node does not pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<LabelSelector>,
    /// A stage whose pod template is the breakage: running it does not count as converged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken_stage: Option<String>,
}

/// `devicePluginConfig`: the named NVIDIA device-plugin config in effect on nodes.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DevicePluginConfigCheck {
    /// The ConfigMap holding one key per named config.
    pub config_map: ObjectRef,
    /// The nodes checked.
    #[serde(default)]
    pub nodes: LabelSelector,
    /// The config name that must be in effect (label value and advertised resources consistent
    /// with it). Omitted: any key of the ConfigMap, consistently applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// The node label selecting the config.
    #[serde(default = "default_config_label")]
    pub label: String,
}

fn default_config_label() -> String {
    "nvidia.com/device-plugin.config".to_string()
}

/// Whether a pod must be schedulable or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Schedulability {
    /// It fits some node.
    Schedulable,
    /// It fits no node.
    Unschedulable,
    /// Existing pods run (Ready) on a node that advertises and can hold what they ask for beside
    /// the other pods bound to it (and that `nodes` selects), as the kubelet's admission would
    /// check a pod bound past the scheduler.
    Running,
}

/// `schedulable`: computed with the scheduler predicates in `k8s/` over the observed nodes and
/// pods, or read from existing pods' `PodScheduled` condition.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SchedulableCheck {
    /// Existing pods to judge by their `PodScheduled` condition. Exactly one of `pods` and `podFile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<Target>,
    /// A pod manifest in the bundle whose spec is fitted against the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub pod_file: Option<Spanned<String>>,
    /// Schedulable or unschedulable.
    pub want: Schedulability,
    /// Only these nodes count as places the pod may land.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<LabelSelector>,
    /// For `unschedulable`: text the FailedScheduling reason must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_contains: Option<String>,
}

/// `quotaInForce`: a ResourceQuota pins a resource in a namespace.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QuotaInForceCheck {
    /// The namespace.
    pub namespace: String,
    /// The quota resource name (`requests.nvidia.com/gpu`).
    pub resource: String,
    /// The hard limit expected.
    #[schemars(with = "QuantityText")]
    pub hard: serde_json::Value,
    /// A pod manifest in the bundle that goes over the quota: created with `dryRun=All`, it must
    /// be rejected by admission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub probe_file: Option<Spanned<String>>,
}

/// `alertRule`: a PrometheusRule yields a sample on the broken DaemonSet state and none on the
/// restored one (evaluated over kube-state-metrics series).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AlertRuleCheck {
    /// Where to look for PrometheusRules.
    pub rules: Target,
    /// The DaemonSet whose states the rule is evaluated against.
    pub daemon_set: ObjectRef,
    /// The rule's `for` must be at least this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_for: Option<Timeout>,
}

/// How a quiz answer is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum AnswerMatching {
    /// Ignoring case and surrounding blanks.
    #[default]
    CaseInsensitive,
    /// Exactly as written.
    Exact,
}

/// A fact `start` captures, stored (salted and hashed) in the cluster's inventory so a quiz
/// answer is graded against what actually happened. Written as its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// `variant`: the variant `start` ran.
    Variant,
    /// `affectedNode`: the node a `stalledAsIntended` wait found affected: where the rollout
    /// stalled, or the node left without a pod when DESIRED dropped.
    AffectedNode,
    /// The id of a fact a stage reads from the cluster (`facts:` of a stage).
    Captured(String),
}

impl Fact {
    /// The fact's name as written, and its key in the inventory.
    pub fn key(&self) -> &str {
        match self {
            Fact::Variant => "variant",
            Fact::AffectedNode => "affectedNode",
            Fact::Captured(id) => id,
        }
    }
}

impl<'de> Deserialize<'de> for Fact {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match String::deserialize(deserializer)?.as_str() {
            "variant" => Fact::Variant,
            "affectedNode" => Fact::AffectedNode,
            other => Fact::Captured(other.to_string()),
        })
    }
}

impl Serialize for Fact {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.key())
    }
}

impl JsonSchema for Fact {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Fact".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "`variant` (the variant `start` ran), `affectedNode` (the node a `stalledAsIntended` wait found affected), or the id of a fact a stage reads from the cluster (its `facts:`).",
            "pattern": "^(variant|affectedNode|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$"
        })
    }
}

/// `quiz`: the stored answer is right.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QuizCheck {
    /// A fact `start` captured (`variant`, `affectedNode`, or the id of a stage's fact): the
    /// answer must equal it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<Fact>,
    /// Accepted answers, whatever the variant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accept: Vec<String>,
    /// Accepted answers per variant id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accept_by_variant: BTreeMap<String, Vec<String>>,
    /// How answers compare.
    #[serde(default)]
    pub matching: AnswerMatching,
    /// The answers that make sense at all (an enumerated quiz, e.g. the three classes of cause):
    /// `answer` refuses any other value without recording it. Empty: any value (a `fact:
    /// affectedNode` quiz still requires the name of a node of the cluster).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// How many answers `answer` records before the quiz is locked (omitted: no limit), so an
    /// enumerated quiz cannot be brute-forced by answering each choice in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// The word that stands for the answer in `lab-runner answer LAB TASK WORD`, in each language
    /// (`{en: NODE, ja: ノード名}`), as the task's description writes it; `check` shows it to a
    /// learner who has not answered yet (omitted: `VALUE` / `値`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<Text>,
}

/// What happens to learner objects in the lab's namespaces on reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LearnerObjects {
    /// Delete everything in the lab's namespaces, learner-made or not.
    #[default]
    Delete,
    /// Keep objects the lab did not apply.
    Keep,
}

/// What `reset` deletes and restores.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Reset {
    /// Namespaces the lab owns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// Whether learner objects in those namespaces are deleted.
    #[serde(default)]
    pub learner_objects: LearnerObjects,
    /// Pre-existing state the lab changes, recorded at `start` and restored on reset.
    #[serde(default)]
    pub restore: Restore,
}

/// Pre-existing state recorded before the lab changes it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Restore {
    /// Node label keys whose values (or absence) are restored on every node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_labels: Vec<String>,
    /// ConfigMaps restored to their pre-lab content (or deleted if they did not exist).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_maps: Vec<NamespacedName>,
}

/// A namespaced object's namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NamespacedName {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl Task {
    /// How many answers a quiz takes before it is locked (the smallest `attempts` of its `quiz`
    /// expectations); `None`: no limit, or not a quiz.
    pub fn attempt_limit(&self) -> Option<u32> {
        self.expect
            .iter()
            .filter_map(|e| match e {
                Expectation::Quiz(quiz) => quiz.attempts,
                _ => None,
            })
            .min()
    }
}

impl Stage {
    /// The manifest files applied for `variant` (the stage's own, then the variant's), in order.
    pub fn manifests_for(&self, variant: Option<&str>) -> Vec<&str> {
        let extra = variant.and_then(|v| self.variants.get(v)).map(|v| v.manifests.as_slice()).unwrap_or(&[]);
        self.manifests.iter().chain(extra).map(|m| m.value.as_str()).collect()
    }

    /// The waits for `variant` (the stage's own, then the variant's).
    pub fn waits_for(&self, variant: Option<&str>) -> Vec<&Wait> {
        let extra = variant.and_then(|v| self.variants.get(v)).map(|v| v.waits.as_slice()).unwrap_or(&[]);
        self.waits.iter().chain(extra).collect()
    }
}

impl Lab {
    /// The tasks in an order where every task comes after the tasks it `needs`; otherwise in
    /// declaration order. Tasks caught in a cycle (which the loader rejects) come last.
    pub fn tasks_in_needs_order(&self) -> Vec<&Task> {
        let mut done: Vec<bool> = vec![false; self.tasks.len()];
        let mut order = Vec::with_capacity(self.tasks.len());
        loop {
            let ready = (0..self.tasks.len()).find(|&i| {
                !done[i]
                    && self.tasks[i].needs.iter().all(|need| {
                        self.tasks
                            .iter()
                            .position(|t| t.id.value == need.value)
                            .is_none_or(|j| done[j] || j == i)
                    })
            });
            match ready {
                Some(i) => {
                    done[i] = true;
                    order.push(&self.tasks[i]);
                }
                None => break,
            }
        }
        order.extend(self.tasks.iter().enumerate().filter(|(i, _)| !done[*i]).map(|(_, t)| t));
        order
    }

    /// Total points of all tasks (negative points count as zero; lint rejects them).
    pub fn total_points(&self) -> i64 {
        self.tasks.iter().map(|t| t.points.value.max(0)).sum()
    }

    /// The task with this id.
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id.value == id)
    }

    /// The variant used when none is asked for: chosen from `seed` reproducibly (the same seed
    /// picks the same variant on every machine); `None` for a lab without variants.
    pub fn variant_for_seed(&self, seed: u64) -> Option<&Variant> {
        if self.variants.is_empty() {
            return None;
        }
        let index = splitmix64(seed) % self.variants.len() as u64;
        self.variants.get(index as usize)
    }

    /// The variant with this id.
    pub fn variant(&self, id: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.id.value == id)
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a fixed, portable mix so a seed picks the same variant
/// whatever the platform or Rust version (std's hashers promise no such stability).
fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The JSON Schema of `lab.yaml`, as committed in `docs/lab.schema.json`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Lab);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_and_print() {
        assert_eq!(Timeout::parse("90s").unwrap().0, Duration::from_secs(90));
        assert_eq!(Timeout::parse("1m30s").unwrap().0, Duration::from_secs(90));
        assert_eq!(Timeout::parse("2h").unwrap().0, Duration::from_secs(7200));
        assert_eq!(Timeout::parse("1m30s").unwrap().to_string(), "1m30s");
        for bad in ["", "5", "m", "1d", "1.5m", " 1m"] {
            assert!(Timeout::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn texts_hold_only_en_and_ja() {
        let error = serde_saphyr::from_str::<Text>("en: a\nja: b\nfr: c\n").unwrap_err();
        assert!(error.to_string().contains("unknown field `fr`"), "{error}");
    }

    #[test]
    fn tasks_in_needs_order() {
        let lab: Lab = serde_saphyr::from_str(
            "apiVersion: lab-runner.io/v1\nid: x\ntitle: {en: t}\nbriefing: {en: b}\nstages: []\ntasks:\n\
             - {id: c, title: {en: c}, description: {en: c}, points: 1, needs: [b], expect: []}\n\
             - {id: a, title: {en: a}, description: {en: a}, points: 1, expect: []}\n\
             - {id: b, title: {en: b}, description: {en: b}, points: 1, needs: [a], expect: []}\n\
             - {id: d, title: {en: d}, description: {en: d}, points: 1, expect: []}\n",
        )
        .unwrap();
        let order: Vec<&str> = lab.tasks_in_needs_order().iter().map(|t| t.id.value.as_str()).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
    }

    #[test]
    fn text_falls_back_to_the_other_language() {
        let text = Text { en: "hello".into(), ja: String::new() };
        assert_eq!(text.get(Lang::Ja), "hello");
        assert_eq!(text.missing(), vec!["ja"]);
    }

    #[test]
    fn compare_ops() {
        use std::cmp::Ordering::*;
        assert!(CompareOp::Ge.holds(Equal) && CompareOp::Ge.holds(Greater) && !CompareOp::Ge.holds(Less));
        assert!(CompareOp::Ne.holds(Less) && !CompareOp::Ne.holds(Equal));
        assert!(CompareOp::Lt.holds(Less) && !CompareOp::Le.holds(Greater));
    }

    #[test]
    fn the_seed_picks_a_variant_reproducibly() {
        // Fixed values: a change here changes which variant `start --seed N` gives learners.
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(42) % 3, splitmix64(42) % 3);
    }
}
