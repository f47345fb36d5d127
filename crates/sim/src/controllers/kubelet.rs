//! The kubelets: run bound pods against the image catalog, report container states and pod
//! conditions, pull back-off, and finish graceful deletion.
//!
//! Upstream (v1.33): `pkg/kubelet/images/image_manager.go` (`EnsureImageExists`: events
//! `Pulling`, `Pulled`, `Failed`, `BackOff`; back-off key `<podUID>_<image>`; the back-off
//! status message wraps the previous error since PR #127918), `pkg/kubelet/kubelet.go`
//! (`backOffPeriod` 10s, `MaxContainerBackOff` 300s), `pkg/kubelet/kuberuntime/
//! kuberuntime_container.go` (`Error: <reason>`, `Created container: <name>`,
//! `Started container <name>`, `Stopping container <name>`), `pkg/kubelet/status/generate.go`
//! (conditions, `containers with unready status: [...]`).

use std::collections::{BTreeSet, HashMap, HashSet};

use k8s_openapi::{
    api::core::v1::{Container, Node, Pod},
    jiff::Timestamp,
};
use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result, Wake, admission,
    config::{ImageRun, normalize_image},
    events::{EventType, Involved, Source},
    later, timestamp,
    undecodable::decode_or_skip,
};
use crate::k8s::resources::{self, NodeUsage, SchedulerResources};
use crate::{
    gpu::agent::ContainerEvent,
    store::{DeleteOptions, DryRun, Subresource},
};

/// Where one container is.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// Pulling; the outcome was decided against the catalog when the pull started. `shown` is the
    /// waiting state of the last failed start, still shown while a retry pulls: the kubelet keeps
    /// a container's last start failure in its `reasonCache` until a start succeeds, and
    /// `convertToAPIContainerStatuses` reports it instead of `ContainerCreating`
    /// (pkg/kubelet/kubelet_pods.go, pkg/kubelet/reason_cache.go, v1.33).
    Pulling { started: Timestamp, done_at: Timestamp, outcome: PullOutcome, shown: Option<Value> },
    /// The last pull failed (`ErrImagePull`); the next sync shows the back-off.
    PullFailed { cri_error: String, back_off_shown_at: Timestamp, retry_at: Timestamp },
    /// In back-off (`ImagePullBackOff`) until `retry_at`.
    PullBackOff { message: String, retry_at: Timestamp },
    /// `imagePullPolicy: Never` and the image is not on the node.
    NeverPull { message: String },
    /// Running since `started`; Ready from `ready_at`; a batch image exits by itself at `exits`.
    Running {
        started: Timestamp,
        ready_at: Timestamp,
        container_id: String,
        image_id: String,
        exits: Option<(Timestamp, i32)>,
    },
    /// Exited and will not be restarted (restartPolicy Never, or OnFailure after success).
    Terminated { terminated: Value, container_id: String, image_id: String },
    /// Exited, waiting out the crash back-off before the restart (`CrashLoopBackOff`).
    CrashBackOff { message: String, retry_at: Timestamp },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum PullOutcome {
    Found { size_bytes: u64 },
    Missing,
}

#[derive(Debug, Clone)]
struct ContainerRun {
    name: String,
    image: String,
    step: Step,
    /// `restartCount`: restarts after an exit.
    restarts: i32,
    /// `lastState`: the previous exit, `{}` before one.
    last_state: Value,
}

/// Whether a pod is being stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lifecycle {
    Active,
    Stopping { remove_at: Timestamp },
}

#[derive(Debug, Clone)]
struct PodRun {
    uid: String,
    node: String,
    host_ip: String,
    pod_ip: String,
    started: Timestamp,
    containers: Vec<ContainerRun>,
    lifecycle: Lifecycle,
    /// What the pod holds on its node once admitted (the kubelet's `NodeInfo` of active pods).
    requests: SchedulerResources,
}

/// The kubelets of every node (their in-memory state: containers, image caches, back-off).
#[derive(Debug, Default)]
pub(crate) struct Kubelet {
    pods: HashMap<Key, PodRun>,
    images: HashSet<(String, String)>,
    back_off: HashMap<String, f64>,
    next_ip: HashMap<String, u32>,
    /// The revision of each pod's last status write by this kubelet. That write comes back as
    /// a change; a pod still at that revision is skipped unless a wake-up names it, as the
    /// kubelet's pod config ignores an update that differs only in the status it wrote itself
    /// (`checkAndUpdatePod`, pkg/kubelet/config/config.go).
    written: HashMap<Key, u64>,
}

fn pull_policy(container: &Container) -> &str {
    match container.image_pull_policy.as_deref() {
        Some(policy) => policy,
        // `SetDefaults_Container`: Always for `:latest` or no tag, else IfNotPresent.
        None => {
            let image = container.image.as_deref().unwrap_or_default();
            let last = image.rsplit('/').next().unwrap_or_default();
            if last.contains('@') {
                "IfNotPresent"
            } else {
                match last.split_once(':') {
                    Some((_, "latest")) | None => "Always",
                    Some(_) => "IfNotPresent",
                }
            }
        }
    }
}

/// Go's `time.Duration.String()` for the Pulled message (`2s`, `1.5s`, `500ms`, `1m30s`).
fn go_duration(seconds: f64) -> String {
    let millis = (seconds * 1000.0).round() as u64;
    if millis == 0 {
        return "0s".to_string();
    }
    if millis < 1000 {
        return format!("{millis}ms");
    }
    let minutes = millis / 60_000;
    let rest = millis % 60_000;
    let secs = if rest.is_multiple_of(1000) {
        format!("{}s", rest / 1000)
    } else {
        let text = format!("{:.3}", rest as f64 / 1000.0);
        format!("{}s", text.trim_end_matches('0'))
    };
    if minutes > 0 { format!("{minutes}m{secs}") } else { secs }
}

/// containerd's error for a reference no registry has (its `failed to resolve reference` text,
/// as a real node shows it).
fn not_found_error(image: &str) -> String {
    let full = normalize_image(image);
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image \"{full}\": failed to resolve reference \"{full}\": {full}: not found"
    )
}

fn hex_digest(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn image_id(image: &str) -> String {
    let full = normalize_image(image);
    let repository = match full.rsplit_once('@') {
        Some((repository, _)) => repository.to_string(),
        None => {
            let slash = full.rfind('/').unwrap_or(0);
            match full[slash..].rfind(':') {
                Some(colon) => full[..slash + colon].to_string(),
                None => full.clone(),
            }
        }
    };
    format!("{repository}@sha256:{}", hex_digest(&full))
}

impl Kubelet {
    /// Reconciles the changed pods that are bound to an existing node.
    /// `woken` are the pods a timer, a node change or a resync names: they are reconciled even
    /// when unchanged since this kubelet's own last write.
    pub(crate) fn run(
        &mut self,
        env: &mut Env<'_>,
        changed: &BTreeSet<Key>,
        woken: &BTreeSet<Key>,
        gpu: &mut crate::gpu::agent::GpuAgents,
    ) -> Result<()> {
        for key in changed {
            let Some(stored) = env.ctx.store.get("pods", &key.0, &key.1) else {
                self.forget(key);
                continue;
            };
            if self.written.get(key) == Some(&stored.revision) && !woken.contains(key) {
                continue;
            }
            let Some(pod) = decode_or_skip::<Pod>(&stored) else { continue };
            let Some(node_name) =
                pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty())
            else {
                continue;
            };
            let Some(node) = env.node(&node_name) else {
                continue;
            };
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            if matches!(phase, Some("Succeeded" | "Failed")) {
                // Nothing runs any more; a deleted terminal pod's object goes at once.
                if pod.metadata.deletion_timestamp.is_some() {
                    self.remove_pod(env, key, &pod)?;
                } else {
                    self.forget(key);
                }
                continue;
            }
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            if self.pods.get(key).is_some_and(|run| run.uid != uid) {
                self.forget(key);
            }
            // A restarted simulator's kubelet finds its containers where the store says they
            // are, as a real kubelet restart finds them in the container runtime.
            if !self.pods.contains_key(key)
                && pod.metadata.deletion_timestamp.is_none()
                && let Some(run) = self.recover(env, key, &pod, node)
            {
                self.pods.insert(key.clone(), run);
            }
            // Admission (`canAdmitPod`): the device manager asks the node's device plugin to
            // allocate before the pod's first start (sim::gpu, failRequestsGreaterThanOne).
            if !self.pods.contains_key(key)
                && pod.metadata.deletion_timestamp.is_none()
                && let Some(message) = gpu.admission_error(&node_name, &pod)
            {
                reject_pod(env, key, &pod, &node_name, "UnexpectedAdmissionError", &message)?;
                continue;
            }
            if !self.pods.contains_key(key)
                && pod.metadata.deletion_timestamp.is_none()
                && let Some(rejection) = self.admission_rejection(&pod, node)
            {
                reject_pod(env, key, &pod, &node_name, &rejection.reason, &rejection.message)?;
                continue;
            }
            self.reconcile(env, key, &pod, node, gpu)?;
        }
        Ok(())
    }

    /// The pod's run as its stored status records it, when every container is running or
    /// terminated there (a kubelet restart: the runtime still has them, nothing is pulled,
    /// created or started again, and no Event is recorded). `None` for anything else, which
    /// starts afresh.
    fn recover(&mut self, env: &Env<'_>, key: &Key, pod: &Pod, node: &Node) -> Option<PodRun> {
        let stored = env.ctx.store.get_value(&env.ctx.types.pods, &key.0, &key.1).ok()?;
        let status = &stored["status"];
        let node_name = node.metadata.name.clone()?;
        let host_ip = status["hostIP"].as_str()?.to_string();
        let pod_ip = status["podIP"].as_str()?.to_string();
        let started = status["startTime"].as_str()?.parse::<Timestamp>().ok()?;
        let statuses = status["containerStatuses"].as_array()?;
        let specs = stored["spec"]["containers"].as_array()?;
        if specs.is_empty() || statuses.len() != specs.len() {
            return None;
        }
        let mut containers = Vec::new();
        for spec in specs {
            let name = spec["name"].as_str()?;
            let image = spec["image"].as_str().unwrap_or_default().to_string();
            let status = statuses.iter().find(|s| s["name"] == name)?;
            let container_id = status["containerID"].as_str()?.to_string();
            let image_id = status["imageID"].as_str().unwrap_or_default().to_string();
            let step = if let Some(running) = status["state"]["running"].as_object() {
                let since = running.get("startedAt")?.as_str()?.parse::<Timestamp>().ok()?;
                let ready_at = if status["ready"] == json!(true) {
                    // Ready stays ready, even when a sped-up clock restarted behind its last run.
                    since.min(env.ctx.now)
                } else {
                    later(since, env.config.timings.readiness_seconds)
                };
                let exits = match env.config.catalog.find(&image).map(|found| found.run) {
                    Some(ImageRun::Exits { seconds, exit_code }) => Some((later(since, seconds), exit_code)),
                    Some(ImageRun::Serves) | None => None,
                };
                Step::Running { started: since, ready_at, container_id, image_id, exits }
            } else if status["state"]["terminated"].is_object() {
                Step::Terminated {
                    terminated: json!({"terminated": status["state"]["terminated"].clone()}),
                    container_id,
                    image_id,
                }
            } else {
                return None;
            };
            containers.push(ContainerRun {
                name: name.to_string(),
                image,
                step,
                restarts: i32::try_from(status["restartCount"].as_i64().unwrap_or(0)).unwrap_or(0),
                last_state: if status["lastState"].is_object() {
                    status["lastState"].clone()
                } else {
                    json!({})
                },
            });
        }
        for container in &containers {
            self.images.insert((node_name.clone(), normalize_image(&container.image)));
        }
        // Later pods on the node get the next addresses.
        if let Some(last) = pod_ip.rsplit('.').next().and_then(|octet| octet.parse::<u32>().ok()) {
            let next = self.next_ip.entry(node_name.clone()).or_insert(1);
            *next = (*next).max(last);
        }
        Some(PodRun {
            uid: stored["metadata"]["uid"].as_str()?.to_string(),
            node: node_name,
            host_ip,
            pod_ip,
            started,
            containers,
            lifecycle: Lifecycle::Active,
            requests: pod_requests(pod),
        })
    }

    /// The device manager's allocation, then `PredicateAdmitHandler`'s fit, against the pods this
    /// kubelet already admitted on the node (`OtherPods`: its active pods).
    fn admission_rejection(&self, pod: &Pod, node: &Node) -> Option<admission::Rejection> {
        let node_name = node.metadata.name.as_deref()?;
        let allocatable = resources::node_allocatable(node).ok()?;
        let mut usage = NodeUsage::default();
        for run in self.pods.values().filter(|run| run.node == node_name) {
            usage.requested.add_resources(&run.requests);
            usage.pod_count += 1;
        }
        admission::allocate_devices(pod, &allocatable, &usage.requested)
            .or_else(|| admission::fit(pod, &allocatable, &usage))
    }

    fn forget(&mut self, key: &Key) {
        self.written.remove(key);
        if let Some(run) = self.pods.remove(key) {
            self.back_off.retain(|k, _| !k.starts_with(&format!("{}_", run.uid)));
        }
    }

    fn start_pod(&mut self, env: &mut Env<'_>, pod: &Pod, node: &Node) -> PodRun {
        let node_name = node.metadata.name.clone().unwrap_or_default();
        let host_ip = node
            .status
            .as_ref()
            .and_then(|s| s.addresses.as_ref())
            .and_then(|a| a.iter().find(|a| a.type_ == "InternalIP"))
            .map(|a| a.address.clone())
            .unwrap_or_else(|| "10.0.0.1".to_string());
        let next = self.next_ip.entry(node_name.clone()).or_insert(1);
        *next = if *next >= 254 { 2 } else { *next + 1 };
        let pod_ip = format!("{}.{}", node_pod_range(env, node), *next);
        let mut run = PodRun {
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            node: node_name,
            host_ip,
            pod_ip,
            started: env.ctx.now,
            containers: Vec::new(),
            lifecycle: Lifecycle::Active,
            requests: pod_requests(pod),
        };
        let containers = pod.spec.as_ref().map(|s| s.containers.clone()).unwrap_or_default();
        for container in &containers {
            let step = self.begin_pull(env, pod, &run, container);
            run.containers.push(ContainerRun {
                name: container.name.clone(),
                image: container.image.clone().unwrap_or_default(),
                step,
                restarts: 0,
                last_state: json!({}),
            });
        }
        run
    }

    /// `EnsureImageExists` up to the pull itself: present, never-pull, or start pulling.
    fn begin_pull(&mut self, env: &mut Env<'_>, pod: &Pod, run: &PodRun, container: &Container) -> Step {
        let now = env.ctx.now;
        let image = container.image.clone().unwrap_or_default();
        let involved = Involved::of_pod(pod).container(&container.name);
        let source = Source::kubelet(&run.node);
        let present = self.images.contains(&(run.node.clone(), normalize_image(&image)));
        let policy = pull_policy(container);
        if present && policy != "Always" {
            let message = format!("Container image \"{image}\" already present on machine");
            env.recorder.record(&env.ctx, &involved, EventType::Normal, "Pulled", &message, &source);
            return self.start_container(env, &involved, &source, &container.name, &image);
        }
        if policy == "Never" {
            let message = format!("Container image \"{image}\" is not present with pull policy of Never");
            env.recorder.record(
                &env.ctx,
                &involved,
                EventType::Warning,
                "ErrImageNeverPull",
                &message,
                &source,
            );
            env.recorder.record(
                &env.ctx,
                &involved,
                EventType::Warning,
                "Failed",
                "Error: ErrImageNeverPull",
                &source,
            );
            return Step::NeverPull { message };
        }
        env.recorder.record(
            &env.ctx,
            &involved,
            EventType::Normal,
            "Pulling",
            &format!("Pulling image \"{image}\""),
            &source,
        );
        let timings = &env.config.timings;
        let (delay, outcome) = match env.config.catalog.find(&image) {
            Some(found) => (
                found.pull_seconds.unwrap_or(timings.pull_seconds),
                PullOutcome::Found { size_bytes: found.size_bytes },
            ),
            None => (timings.pull_fail_seconds, PullOutcome::Missing),
        };
        Step::Pulling { started: now, done_at: later(now, delay), outcome, shown: None }
    }

    fn start_container(
        &mut self,
        env: &mut Env<'_>,
        involved: &Involved,
        source: &Source,
        name: &str,
        image: &str,
    ) -> Step {
        let now = env.ctx.now;
        env.recorder.record(
            &env.ctx,
            involved,
            EventType::Normal,
            "Created",
            &format!("Created container: {name}"),
            source,
        );
        env.recorder.record(
            &env.ctx,
            involved,
            EventType::Normal,
            "Started",
            &format!("Started container {name}"),
            source,
        );
        let exits = match env.config.catalog.find(image).map(|found| found.run) {
            Some(ImageRun::Exits { seconds, exit_code }) => Some((later(now, seconds), exit_code)),
            Some(ImageRun::Serves) | None => None,
        };
        Step::Running {
            started: now,
            ready_at: later(now, env.config.timings.readiness_seconds),
            container_id: format!("containerd://{}", hex_digest(&format!("{}/{name}/{now}", involved.uid))),
            image_id: image_id(image),
            exits,
        }
    }

    /// Moves one container through every transition due by now.
    fn advance(&mut self, env: &mut Env<'_>, pod: &Pod, run: &mut PodRun, index: usize) -> Step {
        let now = env.ctx.now;
        let container_spec = pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.iter().find(|c| c.name == run.containers[index].name))
            .cloned();
        let mut step = run.containers[index].step.clone();
        let image = run.containers[index].image.clone();
        let name = run.containers[index].name.clone();
        let involved = Involved::of_pod(pod).container(&name);
        let source = Source::kubelet(&run.node);
        let back_off_key = format!("{}_{image}", run.uid);
        loop {
            step = match step {
                Step::Pulling { started, done_at, outcome, .. } if now >= done_at => match outcome {
                    PullOutcome::Found { size_bytes } => {
                        self.images.insert((run.node.clone(), normalize_image(&image)));
                        self.back_off.remove(&back_off_key);
                        let took = go_duration(done_at.duration_since(started).as_secs_f64());
                        let message = format!(
                            "Successfully pulled image \"{image}\" in {took} ({took} including waiting). Image size: {size_bytes} bytes."
                        );
                        env.recorder.record(
                            &env.ctx,
                            &involved,
                            EventType::Normal,
                            "Pulled",
                            &message,
                            &source,
                        );
                        self.start_container(env, &involved, &source, &name, &image)
                    }
                    PullOutcome::Missing => {
                        let cri_error = not_found_error(&image);
                        let message = format!("Failed to pull image \"{image}\": {cri_error}");
                        env.recorder.record(
                            &env.ctx,
                            &involved,
                            EventType::Warning,
                            "Failed",
                            &message,
                            &source,
                        );
                        env.recorder.record(
                            &env.ctx,
                            &involved,
                            EventType::Warning,
                            "Failed",
                            "Error: ErrImagePull",
                            &source,
                        );
                        let timings = &env.config.timings;
                        let delay = match self.back_off.get(&back_off_key) {
                            Some(previous) => (previous * 2.0).min(timings.back_off_max_seconds),
                            None => timings.back_off_initial_seconds,
                        };
                        self.back_off.insert(back_off_key.clone(), delay);
                        let back_off_shown_at = later(now, timings.back_off_sync_seconds.min(delay));
                        Step::PullFailed { cri_error, back_off_shown_at, retry_at: later(now, delay) }
                    }
                },
                Step::PullFailed { cri_error, back_off_shown_at, retry_at } if now >= back_off_shown_at => {
                    let event = format!("Back-off pulling image \"{image}\"");
                    env.recorder.record(&env.ctx, &involved, EventType::Normal, "BackOff", &event, &source);
                    env.recorder.record(
                        &env.ctx,
                        &involved,
                        EventType::Warning,
                        "Failed",
                        "Error: ImagePullBackOff",
                        &source,
                    );
                    Step::PullBackOff { message: format!("{event}: ErrImagePull: {cri_error}"), retry_at }
                }
                Step::PullBackOff { message, retry_at } if now >= retry_at => match &container_spec {
                    Some(container) => match self.begin_pull(env, pod, run, container) {
                        Step::Pulling { started, done_at, outcome, .. } => {
                            let shown =
                                json!({"waiting": {"reason": "ImagePullBackOff", "message": message}});
                            Step::Pulling { started, done_at, outcome, shown: Some(shown) }
                        }
                        other => other,
                    },
                    None => return Step::PullBackOff { message: String::new(), retry_at },
                },
                Step::Running { started, container_id, image_id, exits: Some((at, exit_code)), .. }
                    if now >= at =>
                {
                    // The process exited: `kuberuntime` reports it terminated with reason
                    // Completed (0) or Error; whether it restarts follows restartPolicy
                    // (`ShouldContainerBeRestarted`, pkg/kubelet/container/helpers.go).
                    let terminated = json!({"terminated": {
                        "exitCode": exit_code,
                        "reason": if exit_code == 0 { "Completed" } else { "Error" },
                        "startedAt": timestamp(started),
                        "finishedAt": timestamp(at),
                        "containerID": container_id,
                    }});
                    let policy =
                        pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()).unwrap_or("Always");
                    let restarts = policy == "Always" || (policy == "OnFailure" && exit_code != 0);
                    if !restarts {
                        return Step::Terminated { terminated, container_id, image_id };
                    }
                    run.containers[index].last_state = terminated;
                    // `doBackOff` (kuberuntime_manager.go): the first restart is immediate, later
                    // ones wait 10s, 20s, … up to 300s (the kubelet's crash back-off).
                    let key = format!("{}_{name}_restart", run.uid);
                    let delay = match self.back_off.get(&key) {
                        None => 0.0,
                        Some(previous) if *previous <= 0.0 => env.config.timings.back_off_initial_seconds,
                        Some(previous) => (previous * 2.0).min(env.config.timings.back_off_max_seconds),
                    };
                    self.back_off.insert(key, delay);
                    let pod_ref = format!(
                        "{}_{}({})",
                        pod.metadata.name.as_deref().unwrap_or_default(),
                        pod.metadata.namespace.as_deref().unwrap_or_default(),
                        run.uid
                    );
                    if delay <= 0.0 {
                        run.containers[index].restarts += 1;
                        self.start_container(env, &involved, &source, &name, &image)
                    } else {
                        let event = format!("Back-off restarting failed container {name} in pod {pod_ref}");
                        env.recorder.record(
                            &env.ctx,
                            &involved,
                            EventType::Warning,
                            "BackOff",
                            &event,
                            &source,
                        );
                        let message = format!(
                            "back-off {} restarting failed container={name} pod={pod_ref}",
                            go_duration(delay)
                        );
                        Step::CrashBackOff { message, retry_at: later(at, delay) }
                    }
                }
                Step::CrashBackOff { retry_at, .. } if now >= retry_at => {
                    run.containers[index].restarts += 1;
                    self.start_container(env, &involved, &source, &name, &image)
                }
                other => return other,
            };
        }
    }

    fn reconcile(
        &mut self,
        env: &mut Env<'_>,
        key: &Key,
        pod: &Pod,
        node: &Node,
        gpu: &mut crate::gpu::agent::GpuAgents,
    ) -> Result<()> {
        let now = env.ctx.now;
        let mut run = match self.pods.remove(key) {
            Some(run) => run,
            None if pod.metadata.deletion_timestamp.is_some() => {
                // Never started here: nothing to stop.
                return self.remove_pod(env, key, pod);
            }
            None => self.start_pod(env, pod, node),
        };
        if let Some(deletion) = &pod.metadata.deletion_timestamp {
            if run.lifecycle == Lifecycle::Active {
                for container in &run.containers {
                    if matches!(container.step, Step::Running { .. }) {
                        env.recorder.record(
                            &env.ctx,
                            &Involved::of_pod(pod).container(&container.name),
                            EventType::Normal,
                            "Killing",
                            &format!("Stopping container {}", container.name),
                            &Source::kubelet(&run.node),
                        );
                    }
                }
                let stopped = later(now, env.config.timings.container_stop_seconds);
                run.lifecycle = Lifecycle::Stopping { remove_at: stopped.min(deletion.0) };
            }
            if let Lifecycle::Stopping { remove_at } = run.lifecycle {
                if now >= remove_at {
                    return self.remove_pod(env, key, pod);
                }
                env.timers.at(remove_at, Wake::Pod(key.clone()));
            }
            self.pods.insert(key.clone(), run);
            return Ok(());
        }
        for index in 0..run.containers.len() {
            let step = self.advance(env, pod, &mut run, index);
            run.containers[index].step = step;
        }
        self.write_status(env, key, pod.metadata.resource_version.as_deref(), &run, gpu)?;
        if run.containers.iter().all(|c| matches!(c.step, Step::Terminated { .. }))
            && !run.containers.is_empty()
        {
            // Terminal: the pod's sandbox is gone; nothing more happens until its deletion.
            self.forget(key);
            return Ok(());
        }
        let mut wakes: Vec<Timestamp> = Vec::new();
        for container in &run.containers {
            match &container.step {
                Step::Pulling { done_at, .. } => wakes.push(*done_at),
                Step::PullFailed { back_off_shown_at, .. } => wakes.push(*back_off_shown_at),
                Step::PullBackOff { retry_at, .. } => wakes.push(*retry_at),
                Step::Running { ready_at, exits, .. } => {
                    if *ready_at > now {
                        wakes.push(*ready_at);
                    }
                    if let Some((at, _)) = exits {
                        wakes.push(*at);
                    }
                }
                Step::CrashBackOff { retry_at, .. } => wakes.push(*retry_at),
                Step::NeverPull { .. } | Step::Terminated { .. } => {}
            }
        }
        if let Some(next) = wakes.into_iter().min() {
            env.timers.at(next, Wake::Pod(key.clone()));
        }
        self.pods.insert(key.clone(), run);
        Ok(())
    }

    /// The status manager's final delete (grace 0, uid precondition) once containers stopped.
    fn remove_pod(&mut self, env: &mut Env<'_>, key: &Key, pod: &Pod) -> Result<()> {
        self.forget(key);
        if pod.metadata.finalizers.as_ref().is_some_and(|f| !f.is_empty()) {
            write_killed_status(env, key, pod)?;
        }
        let options = DeleteOptions {
            grace_period_seconds: Some(0),
            precondition_uid: pod.metadata.uid.clone(),
            ..Default::default()
        };
        match env.ctx.store.delete(&env.ctx.types.pods, &key.0, &key.1, &options) {
            Ok(_) | Err(crate::store::Error::NotFound { .. } | crate::store::Error::Conflict { .. }) => {
                Ok(())
            }
            Err(error) => Err(Error::Store(error)),
        }
    }

    /// `reconciled` is the resourceVersion of the pod the run was reconciled against: the write
    /// is remembered as this kubelet's own only when nothing changed the pod in between.
    fn write_status(
        &mut self,
        env: &mut Env<'_>,
        key: &Key,
        reconciled: Option<&str>,
        run: &PodRun,
        gpu: &mut crate::gpu::agent::GpuAgents,
    ) -> Result<()> {
        let now = env.ctx.now;
        let store = env.ctx.store;
        let types = env.ctx.types;
        let Ok(mut value) = store.get_value(&types.pods, &key.0, &key.1) else { return Ok(()) };
        if value["metadata"]["uid"].as_str() != Some(run.uid.as_str()) {
            return Ok(());
        }
        let unchanged_since_reconciled =
            reconciled.is_some() && value["metadata"]["resourceVersion"].as_str() == reconciled;
        let before = value["status"].clone();
        let containers = container_statuses(run, now);
        let mut status = value["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        status["conditions"] = json!(pod_conditions(&status["conditions"], &containers, now));
        let restarting = run.containers.iter().any(|c| c.restarts > 0);
        status["phase"] = json!(match containers.terminal_phase {
            Some(phase) => phase.as_str(),
            None if (containers.all_running || restarting) && !run.containers.is_empty() => "Running",
            None => "Pending",
        });
        status["hostIP"] = json!(run.host_ip);
        status["hostIPs"] = json!([{"ip": run.host_ip}]);
        status["podIP"] = json!(run.pod_ip);
        status["podIPs"] = json!([{"ip": run.pod_ip}]);
        status["startTime"] = json!(timestamp(run.started));
        status["containerStatuses"] = json!(containers.statuses);
        let all_running = containers.all_running;
        // The NVIDIA config-manager containers' outcome (sim::gpu, issue #6).
        let nvidia = value["spec"]["initContainers"]
            .as_array()
            .into_iter()
            .chain(value["spec"]["containers"].as_array())
            .flatten()
            .any(|c| c["image"].as_str().is_some_and(|image| image.starts_with("nvcr.io/nvidia/")));
        if nvidia && let Ok(pod) = serde_json::from_value::<Pod>(value.clone()) {
            let (wake, events) = gpu.kubelet_sync(store, &pod, &env.config.gpus, all_running, now);
            if let Some(at) = wake {
                env.timers.at(at, Wake::Pod(key.clone()));
            }
            record_restarts(env, &pod, &run.node, &events);
            gpu.overlay_pod_status(&pod, &mut status);
        }
        if status == before {
            return Ok(());
        }
        // The NVIDIA containers' sync (above) runs at every pass: their pods are never skipped.
        let remember = unchanged_since_reconciled && !nvidia;
        value["status"] = status;
        match store.update(&types.pods, value, Subresource::Status, DryRun::Off) {
            Ok(written) if remember => {
                if let Some(revision) = crate::store::revision_of(&written) {
                    self.written.insert(key.clone(), revision);
                }
                Ok(())
            }
            Ok(_) | Err(crate::store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(Error::Store(error)),
        }
    }
}

/// A deleted pod's terminal status (1.33's kubelet moves a deleted pod to a terminal phase
/// before its final delete: `generateAPIPodStatus` with `podIsTerminal`, kubelet_pods.go): phase
/// Failed, Ready False, each running container terminated by the kill with 137 (`Error`). Written
/// only for a pod a finalizer keeps (a Job's tracked pod), whose status stays to be read; any
/// other pod's object goes with the final delete right after.
fn write_killed_status(env: &mut Env<'_>, key: &Key, pod: &Pod) -> Result<()> {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    if matches!(phase, Some("Succeeded" | "Failed")) {
        return Ok(());
    }
    let now = timestamp(env.ctx.now);
    let store = env.ctx.store;
    let Ok(mut value) = store.get_value(&env.ctx.types.pods, &key.0, &key.1) else { return Ok(()) };
    if value["metadata"]["uid"].as_str() != pod.metadata.uid.as_deref() {
        return Ok(());
    }
    value["status"]["phase"] = json!("Failed");
    for list in ["initContainerStatuses", "containerStatuses"] {
        for container in value["status"][list].as_array_mut().into_iter().flatten() {
            let Some(running) = container["state"]["running"].as_object().cloned() else { continue };
            container["state"] = json!({"terminated": {
                "exitCode": 137, "reason": "Error", "startedAt": running.get("startedAt"),
                "finishedAt": now, "containerID": container["containerID"].clone()}});
            container["ready"] = json!(false);
            container["started"] = json!(false);
        }
    }
    // As a failed pod's (`GeneratePodReadyCondition`): every container unready.
    let names: Vec<String> = value["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    let message = format!("containers with unready status: [{}]", names.join(" "));
    for condition in value["status"]["conditions"].as_array_mut().into_iter().flatten() {
        if condition["type"] == "Ready" || condition["type"] == "ContainersReady" {
            if condition["status"] != "False" {
                condition["lastTransitionTime"] = json!(now);
            }
            condition["status"] = json!("False");
            condition["reason"] = json!("ContainersNotReady");
            condition["message"] = json!(message);
        }
    }
    match store.update(&env.ctx.types.pods, value, Subresource::Status, DryRun::Off) {
        Ok(_) | Err(crate::store::Error::NotFound { .. } | crate::store::Error::Conflict { .. }) => Ok(()),
        Err(error) => Err(Error::Store(error)),
    }
}

/// What the kubelet shows of one container (`convertToAPIContainerStatuses`, kubelet_pods.go).
struct ShownContainer {
    state: Value,
    ready: bool,
    started: bool,
    /// The image as the runtime names it, once pulled (else the spec's).
    image: Option<String>,
    image_id: Option<String>,
    container_id: Option<String>,
}

impl ContainerRun {
    fn shown(&self, now: Timestamp) -> ShownContainer {
        let waiting = |state: Value| ShownContainer {
            state,
            ready: false,
            started: false,
            image: None,
            image_id: None,
            container_id: None,
        };
        match &self.step {
            Step::Pulling { shown, .. } => {
                waiting(shown.clone().unwrap_or_else(|| json!({"waiting": {"reason": "ContainerCreating"}})))
            }
            Step::PullFailed { cri_error, .. } => {
                waiting(json!({"waiting": {"reason": "ErrImagePull", "message": cri_error}}))
            }
            Step::PullBackOff { message, .. } => {
                waiting(json!({"waiting": {"reason": "ImagePullBackOff", "message": message}}))
            }
            Step::NeverPull { message } => {
                waiting(json!({"waiting": {"reason": "ErrImageNeverPull", "message": message}}))
            }
            Step::Terminated { terminated, container_id, image_id } => ShownContainer {
                state: terminated.clone(),
                image: Some(normalize_image(&self.image)),
                image_id: Some(image_id.clone()),
                container_id: Some(container_id.clone()),
                ..waiting(Value::Null)
            },
            Step::CrashBackOff { message, .. } => ShownContainer {
                image: Some(normalize_image(&self.image)),
                ..waiting(json!({"waiting": {"reason": "CrashLoopBackOff", "message": message}}))
            },
            Step::Running { started, ready_at, container_id, image_id, .. } => ShownContainer {
                state: json!({"running": {"startedAt": timestamp(*started)}}),
                ready: now >= *ready_at,
                started: true,
                image: Some(normalize_image(&self.image)),
                image_id: Some(image_id.clone()),
                container_id: Some(container_id.clone()),
            },
        }
    }
}

/// A finished pod's phase (`getPhase`, kubelet_pods.go).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TerminalPhase {
    /// Every container exited 0.
    Succeeded,
    /// Every container exited, one of them not with 0.
    Failed,
}

impl TerminalPhase {
    fn as_str(self) -> &'static str {
        match self {
            TerminalPhase::Succeeded => "Succeeded",
            TerminalPhase::Failed => "Failed",
        }
    }
}

/// The containers' statuses, and what the pod's phase and conditions follow from.
struct ContainerStatuses {
    statuses: Vec<Value>,
    /// Names of the containers that are not ready.
    unready: Vec<String>,
    /// Every container has started.
    all_running: bool,
    /// Set when every container exited and none restarts.
    terminal_phase: Option<TerminalPhase>,
}

fn container_statuses(run: &PodRun, now: Timestamp) -> ContainerStatuses {
    let mut statuses = Vec::new();
    let mut unready = Vec::new();
    let mut all_running = true;
    let mut terminated_codes: Vec<i64> = Vec::new();
    let mut still_running = false;
    for container in &run.containers {
        let shown = container.shown(now);
        if !shown.started {
            all_running = false;
        }
        match &container.step {
            Step::Terminated { terminated, .. } => {
                terminated_codes.push(terminated["terminated"]["exitCode"].as_i64().unwrap_or(0))
            }
            _ => still_running = true,
        }
        if !shown.ready {
            unready.push(container.name.clone());
        }
        let mut status = json!({
            "name": container.name,
            "image": shown.image.unwrap_or_else(|| container.image.clone()),
            "imageID": shown.image_id.unwrap_or_default(),
            "ready": shown.ready,
            "restartCount": container.restarts,
            "started": shown.started,
            "state": shown.state,
            "lastState": container.last_state,
        });
        if let Some(id) = shown.container_id {
            status["containerID"] = json!(id);
        }
        statuses.push(status);
    }
    // `getPhase` (kubelet_pods.go): every container exited and none restarts → Succeeded when
    // all exited 0, else Failed.
    let terminal_phase = (!still_running && !terminated_codes.is_empty()).then(|| {
        if terminated_codes.iter().all(|code| *code == 0) {
            TerminalPhase::Succeeded
        } else {
            TerminalPhase::Failed
        }
    });
    ContainerStatuses { statuses, unready, all_running, terminal_phase }
}

/// The pod's conditions as the kubelet writes them (`status/generate.go`), in upstream's order,
/// after `current`'s (the scheduler's `PodScheduled` kept; a condition whose status did not change
/// keeps its `lastTransitionTime`).
fn pod_conditions(current: &Value, containers: &ContainerStatuses, now: Timestamp) -> Vec<Value> {
    let condition = |type_: &str, ok: bool, reason: Option<&str>, message: Option<String>| {
        let mut condition = json!({
            "type": type_,
            "status": if ok { "True" } else { "False" },
            "lastProbeTime": null,
            "lastTransitionTime": timestamp(now),
        });
        if let Some(reason) = reason {
            condition["reason"] = json!(reason);
        }
        if let Some(message) = message {
            condition["message"] = json!(message);
        }
        condition
    };
    let ready = containers.unready.is_empty();
    let (reason, message) = if ready {
        (None, None)
    } else if containers.terminal_phase == Some(TerminalPhase::Succeeded) {
        // `GeneratePodReadyCondition` (status/generate.go): a succeeded pod is `PodCompleted`.
        (Some("PodCompleted"), None)
    } else {
        (
            Some("ContainersNotReady"),
            Some(format!("containers with unready status: [{}]", containers.unready.join(" "))),
        )
    };
    let wanted = [
        condition("PodReadyToStartContainers", containers.terminal_phase.is_none(), None, None),
        condition("Initialized", true, None, None),
        condition("Ready", ready, reason, message.clone()),
        condition("ContainersReady", ready, reason, message),
    ];
    let scheduled = crate::k8s::condition::find(current, "PodScheduled")
        .cloned()
        .unwrap_or_else(|| condition("PodScheduled", true, None, None));
    let mut holder = json!({"status": {"conditions": current.clone()}});
    for wanted in wanted {
        crate::k8s::schedule::set_pod_condition(&mut holder, wanted);
    }
    ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"]
        .iter()
        .filter_map(|type_| crate::k8s::condition::find(&holder["status"]["conditions"], type_).cloned())
        .chain(std::iter::once(scheduled))
        .collect()
}

/// The Events of the config-manager containers the GPU agents restarted or backed off, as the
/// kubelet records them (`startContainer`, kuberuntime_container.go; `doBackOff`,
/// kuberuntime_manager.go: `Back-off restarting failed container <name> in pod <format.Pod>`).
fn record_restarts(env: &mut Env<'_>, pod: &Pod, node: &str, events: &[ContainerEvent]) {
    let source = Source::kubelet(node);
    for event in events {
        match event {
            ContainerEvent::Restarted(name) => {
                let involved = Involved::of_pod(pod).container(name);
                let image = pod
                    .spec
                    .as_ref()
                    .into_iter()
                    .flat_map(|s| s.init_containers.iter().flatten().chain(s.containers.iter()))
                    .find(|c| c.name == *name)
                    .and_then(|c| c.image.clone())
                    .unwrap_or_default();
                for (reason, message) in [
                    ("Pulled", format!("Container image \"{image}\" already present on machine")),
                    ("Created", format!("Created container: {name}")),
                    ("Started", format!("Started container {name}")),
                ] {
                    env.recorder.record(&env.ctx, &involved, EventType::Normal, reason, &message, &source);
                }
            }
            ContainerEvent::BackOff(name) => {
                let involved = Involved::of_pod(pod).container(name);
                let message = format!(
                    "Back-off restarting failed container {name} in pod {}_{}({})",
                    involved.name, involved.namespace, involved.uid
                );
                env.recorder.record(&env.ctx, &involved, EventType::Warning, "BackOff", &message, &source);
            }
        }
    }
}

/// `rejectPod` (pkg/kubelet/kubelet.go, v1.33): a Warning event with the reason, and the pod
/// Failed with that reason and `Pod was rejected: <message>`; it is never retried.
/// What a pod holds on its node (nothing when a request does not parse: the scheduler and the
/// API server refuse such a pod before it gets here).
fn pod_requests(pod: &Pod) -> SchedulerResources {
    pod.spec.as_ref().and_then(|spec| resources::pod_scheduler_requests(spec).ok()).unwrap_or_default()
}

fn reject_pod(
    env: &mut Env<'_>,
    key: &Key,
    pod: &Pod,
    node: &str,
    reason: &str,
    message: &str,
) -> Result<()> {
    env.recorder.record(
        &env.ctx,
        &Involved::of_pod(pod),
        EventType::Warning,
        reason,
        message,
        &Source::kubelet(node),
    );
    let store = env.ctx.store;
    let types = env.ctx.types;
    let Ok(mut value) = store.get_value(&types.pods, &key.0, &key.1) else { return Ok(()) };
    if value["metadata"]["uid"] != json!(pod.metadata.uid) {
        return Ok(());
    }
    let mut status = json!({
        "phase": "Failed",
        "reason": reason,
        "message": format!("Pod was rejected: {message}"),
    });
    // The status manager keeps the conditions the kubelet does not own (PodScheduled) and the QoS class.
    for field in ["conditions", "qosClass"] {
        if !value["status"][field].is_null() {
            status[field] = value["status"][field].clone();
        }
    }
    value["status"] = status;
    match store.update(&types.pods, value, Subresource::Status, DryRun::Off) {
        Ok(_) | Err(crate::store::Error::NotFound { .. }) => Ok(()),
        Err(error) => Err(Error::Store(error)),
    }
}

impl Involved {
    /// The involved object of a pod.
    pub fn of_pod(pod: &Pod) -> Involved {
        Involved {
            kind: "Pod".into(),
            api_version: "v1".into(),
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            field_path: None,
        }
    }
}

/// The node's pod range prefix (`10.244.3` of `10.244.3.0/24`): its `spec.podCIDR`, as the
/// CNI's host-local IPAM reads it, or the topology's range for the node's position when unset.
fn node_pod_range(env: &Env<'_>, node: &Node) -> String {
    let cidr = node.spec.as_ref().and_then(|spec| spec.pod_cidr.clone()).unwrap_or_else(|| {
        let index = env.nodes.iter().position(|n| n.metadata.name == node.metadata.name).unwrap_or(0);
        crate::topology::pod_cidr(index)
    });
    let network = cidr.split('/').next().unwrap_or_default();
    match network.rsplit_once('.') {
        Some((prefix, _)) if network.split('.').count() == 4 => prefix.to_string(),
        _ => "10.244.0".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_go_does() {
        assert_eq!(go_duration(2.0), "2s");
        assert_eq!(go_duration(1.5), "1.5s");
        assert_eq!(go_duration(0.5), "500ms");
        assert_eq!(go_duration(90.0), "1m30s");
    }

    #[test]
    fn pull_policy_defaults_by_tag() {
        let container = |image: &str| Container { image: Some(image.into()), ..Default::default() };
        assert_eq!(pull_policy(&container("busybox")), "Always");
        assert_eq!(pull_policy(&container("busybox:latest")), "Always");
        assert_eq!(pull_policy(&container("busybox:1.36")), "IfNotPresent");
        assert_eq!(pull_policy(&container("localhost:5000/x")), "Always");
    }

    #[test]
    fn image_ids_name_the_repository() {
        assert!(image_id("nginx:1.27").starts_with("docker.io/library/nginx@sha256:"));
        assert!(image_id("localhost:5000/x:v1").starts_with("localhost:5000/x@sha256:"));
    }
}
