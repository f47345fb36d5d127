//! PodDisruptionBudgets, the eviction and binding subresources and CronJobs on the simulator's manual clock: budget status as the disruption controller computes it, evictions refused with 429 or granted, pods bound by another scheduler, Jobs created at each scheduled minute.

use lab_runner::k8s::testing::node;
use lab_runner::sim::{
    harness::{Cluster, rt},
    store::{DryRun, Subresource},
};
use serde_json::{Value, json};

/// Two plain workers, `node-a` and `node-b`.
fn two_workers() -> Cluster {
    Cluster::new(["node-a", "node-b"].iter().map(|n| node(n).json()).collect())
}

/// The scenario-specific views of the shared fixture.
trait Scenario {
    /// The names of the pods in `default` not being deleted, sorted.
    fn pod_names(&self) -> Vec<String>;
    /// `POST …/pods/{name}/eviction`; the status code and body.
    async fn evict(&self, pod: &str) -> (u16, Value);
    /// `POST …/pods/{name}/binding` with `binding` as the body; the status code and body.
    async fn bind(&self, pod: &str, binding: Value) -> (u16, Value);
    /// `POST …/pods/{pod}/{subresource}`; the status code and body.
    async fn post(&self, pod: &str, subresource: &str, body: Value) -> (u16, Value);
    /// The messages of the Events with `reason`.
    fn events(&self, reason: &str) -> Vec<String>;
}

impl Scenario for Cluster {
    fn pod_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .list("pods", Some("default"))
            .iter()
            .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
            .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    }

    async fn evict(&self, pod: &str) -> (u16, Value) {
        let body = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": "default"}});
        self.post(pod, "eviction", body).await
    }

    async fn bind(&self, pod: &str, binding: Value) -> (u16, Value) {
        self.post(pod, "binding", binding).await
    }

    async fn post(&self, pod: &str, subresource: &str, body: Value) -> (u16, Value) {
        let request = axum::http::Request::builder()
            .method("POST")
            .uri(format!("/api/v1/namespaces/default/pods/{pod}/{subresource}"))
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body.to_string()))
            .unwrap();
        let response = self.sim.request(request).await;
        let code = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (code, serde_json::from_slice(&bytes).unwrap())
    }

    fn events(&self, reason: &str) -> Vec<String> {
        self.list("events", Some("default"))
            .into_iter()
            .filter(|e| e["reason"] == json!(reason))
            .map(|e| e["message"].as_str().unwrap().to_string())
            .collect()
    }
}

fn deployment(replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}},
    })
}

fn budget(bound: &str, value: Value) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": "web", "namespace": "default"},
           "spec": {bound: value, "selector": {"matchLabels": {"app": "web"}}}})
}

fn counts(pdb: &Value) -> [i64; 4] {
    let status = &pdb["status"];
    let n = |field: &str| status[field].as_i64().unwrap();
    [n("currentHealthy"), n("desiredHealthy"), n("expectedPods"), n("disruptionsAllowed")]
}

#[tokio::test]
async fn a_budget_counts_ready_pods_and_evictions_respect_it() {
    let mut cluster = two_workers();
    cluster.create("deployments", deployment(3));
    cluster.create("poddisruptionbudgets", budget("minAvailable", json!(2)));
    cluster.run_for(60);
    let pdb = cluster.get("poddisruptionbudgets", "default", "web");
    // [currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed]
    assert_eq!(counts(&pdb), [3, 2, 3, 1]);
    assert_eq!(pdb["status"]["observedGeneration"], json!(1));
    assert_eq!(pdb["status"]["conditions"][0]["reason"], json!("SufficientPods"));

    let pods = cluster.pod_names();
    let (code, status) = cluster.evict(&pods[0]).await;
    assert_eq!((code, &status["status"]), (201, &json!("Success")));
    // The budget took the disruption at once; a second eviction before the replacement is
    // Ready is refused with upstream's text and cause (the counts are the status as last
    // written: the controller has not run since the first eviction).
    let pdb = cluster.get("poddisruptionbudgets", "default", "web");
    assert_eq!(pdb["status"]["disruptionsAllowed"], json!(0));
    assert!(pdb["status"]["disruptedPods"][&pods[0]].is_string());
    let (code, status) = cluster.evict(&pods[1]).await;
    assert_eq!(code, 429);
    assert_eq!(status["reason"], json!("TooManyRequests"));
    assert_eq!(status["message"], json!("Cannot evict pod as it would violate the pod's disruption budget."));
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 3 currently"})
    );
    // Once the ReplicaSet's replacement is Ready, one disruption is allowed again.
    cluster.run_for(60);
    let pdb = cluster.get("poddisruptionbudgets", "default", "web");
    assert_eq!(counts(&pdb), [3, 2, 3, 1]);
    assert!(pdb["status"]["disruptedPods"].is_null());
    assert!(!cluster.pod_names().contains(&pods[0]));
    let (code, _) = cluster.evict(&pods[1]).await;
    assert_eq!(code, 201);
    // A pod that does not exist is 404 as a GET would be.
    let (code, status) = cluster.evict("missing").await;
    assert_eq!((code, status["message"].as_str().unwrap()), (404, "pods \"missing\" not found"));
}

#[tokio::test]
async fn max_unavailable_counts_the_deployments_replicas_and_unmanaged_pods_are_reported() {
    let mut cluster = two_workers();
    cluster.create("deployments", deployment(4));
    cluster.create("poddisruptionbudgets", budget("maxUnavailable", json!("50%")));
    cluster.run_for(60);
    assert_eq!(counts(&cluster.get("poddisruptionbudgets", "default", "web")), [4, 2, 4, 2]);
    // A bare pod with the label has no controller: upstream warns and leaves it out of the scale.
    cluster.create("pods", json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "namespace": "default", "labels": {"app": "web"}},
               "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}),
    );
    cluster.run_for(60);
    assert_eq!(counts(&cluster.get("poddisruptionbudgets", "default", "web")), [5, 2, 4, 3]);
    assert_eq!(cluster.events("UnmanagedPods").len(), 1);
    // An unready pod's eviction does not take a disruption while the budget is met.
    let mut stray = cluster.get("pods", "default", "stray");
    stray["status"]["conditions"] = json!([{"type": "Ready", "status": "False"}]);
    stray["status"]["phase"] = json!("Running");
    cluster.sim.state.store.update(&rt("pods"), stray, Subresource::Status, DryRun::Off).unwrap();
    let before =
        cluster.get("poddisruptionbudgets", "default", "web")["status"]["disruptionsAllowed"].clone();
    let (code, _) = cluster.evict("stray").await;
    assert_eq!(code, 201);
    assert_eq!(cluster.get("poddisruptionbudgets", "default", "web")["status"]["disruptionsAllowed"], before);
}

fn cron_job(schedule: &str, policy: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": {"name": "tick", "namespace": "default"},
           "spec": {"schedule": schedule, "concurrencyPolicy": policy, "successfulJobsHistoryLimit": 2,
                    "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                        "containers": [{"name": "main", "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0"}]}}}}}})
}

fn job_names(cluster: &Cluster) -> Vec<String> {
    let mut names: Vec<String> = cluster
        .list("jobs.batch", Some("default"))
        .iter()
        .filter(|j| j["metadata"]["deletionTimestamp"].is_null())
        .map(|j| j["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_cron_job_creates_a_job_each_scheduled_minute_and_keeps_its_history_limit() {
    let mut cluster = two_workers();
    let created = cluster.create("cronjobs", cron_job("*/1 * * * *", "Allow"));
    let cj = cluster.get("cronjobs", "default", "tick");
    assert_eq!(cj["spec"]["suspend"], json!(false));
    assert_eq!(cj["spec"]["failedJobsHistoryLimit"], json!(1));
    let start: k8s_openapi::jiff::Timestamp =
        created["metadata"]["creationTimestamp"].as_str().unwrap().parse().unwrap();
    let first_minute = (start.as_second() / 60 + 1) * 60;
    cluster.run_for(first_minute - start.as_second());
    assert_eq!(job_names(&cluster), vec![format!("tick-{}", first_minute / 60)]);
    let job = cluster.get("jobs", "default", &format!("tick-{}", first_minute / 60));
    assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], json!("CronJob"));
    let cj = cluster.get("cronjobs", "default", "tick");
    assert_eq!(cj["status"]["active"].as_array().unwrap().len(), 1);
    assert_eq!(
        cj["status"]["lastScheduleTime"]
            .as_str()
            .unwrap()
            .parse::<k8s_openapi::jiff::Timestamp>()
            .unwrap()
            .as_second(),
        first_minute
    );
    // Four more minutes: each Job completes; two successful ones are kept.
    cluster.run_for(4 * 60 + 30);
    let names = job_names(&cluster);
    assert!(names.len() <= 3, "{names:?}");
    assert!(names.contains(&format!("tick-{}", first_minute / 60 + 4)), "{names:?}");
    assert!(!cluster.events("SawCompletedJob").is_empty());
    assert!(!cluster.events("SuccessfulDelete").is_empty());
    assert!(cluster.get("cronjobs", "default", "tick")["status"]["lastSuccessfulTime"].is_string());
}

#[tokio::test]
async fn a_suspended_cron_job_creates_nothing_and_an_invalid_schedule_is_refused() {
    let mut cluster = two_workers();
    let mut suspended = cron_job("@hourly", "Forbid");
    suspended["spec"]["suspend"] = json!(true);
    cluster.create("cronjobs", suspended);
    cluster.run_for(2 * 3600);
    assert!(job_names(&cluster).is_empty());
    let mut bad = cron_job("61 * * * *", "Allow");
    bad["metadata"]["name"] = json!("bad");
    let error = cluster.sim.state.store.create(&rt("cronjobs.batch"), bad).unwrap_err();
    assert_eq!(
        error.to_string(),
        "CronJob.batch \"bad\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61"
    );
}

/// A pod for another scheduler waits until that scheduler posts a Binding; the kubelet of the
/// node it names then runs it. Upstream's refusals (pkg/registry/core/pod/storage/storage.go):
/// a mismatched name is a 400, a Binding without target a 500 (`ValidatePodBinding`'s aggregate
/// is no `StatusError`), a second binding a 409 on `pods/binding`.
#[tokio::test]
async fn a_pod_for_another_scheduler_runs_where_its_binding_puts_it() {
    let mut cluster = two_workers();
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "custom", "namespace": "default"},
                     "spec": {"schedulerName": "gpu-packer",
                              "containers": [{"name": "main", "image": "nginx:1.27"}]}});
    let created = cluster.create("pods", pod);
    cluster.run_for(30);
    assert!(cluster.get("pods", "default", "custom")["spec"]["nodeName"].is_null(), "not ours to schedule");

    let binding = |name: &str, target: Value| json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": target});
    let (code, body) = cluster.bind("custom", binding("other", json!({"name": "node-b"}))).await;
    assert_eq!(
        (code, body["message"].as_str()),
        (400, Some("name in URL does not match name in Binding object"))
    );
    let (code, body) = cluster.bind("custom", binding("custom", json!({"kind": "Node"}))).await;
    assert_eq!(
        (code, body["message"].as_str(), body.get("reason")),
        (500, Some("target.name: Required value"), None)
    );
    let (code, body) = cluster.bind("missing", binding("missing", json!({"name": "node-b"}))).await;
    assert_eq!((code, body["message"].as_str()), (404, Some("pods \"missing\" not found")));

    let mut with_uid = binding("custom", json!({"kind": "Node", "name": "node-b"}));
    with_uid["metadata"]["uid"] = created["metadata"]["uid"].clone();
    let (code, body) = cluster.bind("custom", with_uid.clone()).await;
    assert_eq!((code, body["status"].as_str()), (201, Some("Success")), "{body}");
    let (code, body) = cluster.bind("custom", with_uid).await;
    assert_eq!(
        (code, body["message"].as_str()),
        (
            409,
            Some(
                "Operation cannot be fulfilled on pods/binding \"custom\": pod custom is already assigned to node \"node-b\""
            )
        )
    );
    cluster.run_for(30);
    let pod = cluster.get("pods", "default", "custom");
    assert_eq!(pod["spec"]["nodeName"], "node-b");
    assert_eq!(pod["status"]["phase"], "Running", "{pod}");
}

/// `spec.timeZone` (pkg/apis/batch/validation/validation.go `validateTimeZone`, the controller's
/// `getTimeZone`): an IANA zone is accepted and the schedule runs in it — `0 9 * * *` in
/// Asia/Tokyo fires at 00:00 UTC; a `CRON_TZ=` prefix is refused on create with upstream's text
/// (`validateScheduleFormat`).
#[tokio::test]
async fn a_cron_job_schedules_in_its_time_zone_and_a_cron_tz_prefix_is_refused() {
    let mut cluster = two_workers();
    for zone in ["UTC", "Etc/UTC", "Asia/Tokyo"] {
        let mut cj = cron_job("0 9 * * *", "Allow");
        cj["metadata"]["name"] = json!(format!("at-{}", zone.replace('/', "-").to_lowercase()));
        cj["spec"]["timeZone"] = json!(zone);
        cluster.create("cronjobs", cj);
    }
    // 2026-01-01T00:00Z is 09:00 in Tokyo: the next run there is 2026-01-02T00:00Z; the UTC ones
    // run at 09:00Z the same day.
    cluster.run_for(9 * 3600 + 30);
    let names = job_names(&cluster);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("at-utc-") || n.starts_with("at-etc-utc-")), "{names:?}");
    cluster.run_for(15 * 3600);
    let tokyo: Vec<String> =
        job_names(&cluster).into_iter().filter(|n| n.starts_with("at-asia-tokyo-")).collect();
    let midnight = "2026-01-02T00:00:00Z".parse::<k8s_openapi::jiff::Timestamp>().unwrap().as_second() / 60;
    assert_eq!(tokyo, vec![format!("at-asia-tokyo-{midnight}")]);
    let mut prefixed = cron_job("CRON_TZ=Asia/Tokyo 0 9 * * *", "Allow");
    prefixed["metadata"]["name"] = json!("prefixed");
    let error = cluster.sim.state.store.create(&rt("cronjobs.batch"), prefixed).unwrap_err();
    assert_eq!(
        error.to_string(),
        "CronJob.batch \"prefixed\" is invalid: spec.schedule: Invalid value: \"CRON_TZ=Asia/Tokyo 0 9 * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
    );
}

/// The Priority plugin's `validatePriorityClass` (plugin/pkg/admission/priority/admission.go):
/// one global default; a second one, created or marked later, is forbidden; re-marking the
/// default itself is not.
#[tokio::test]
async fn a_second_global_default_priority_class_is_forbidden() {
    let cluster = two_workers();
    let class = |name: &str, global_default: bool| {
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
               "value": 1000, "globalDefault": global_default})
    };
    let classes = rt("priorityclasses.scheduling.k8s.io");
    let store = &cluster.sim.state.store;
    store.create(&classes, class("first", true)).unwrap();
    let error = store.create(&classes, class("second", true)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass first is already marked as default. Only one default can exist"
    );
    let mut second = store.create(&classes, class("second", false)).unwrap();
    second["globalDefault"] = json!(true);
    let error = store.update(&classes, second, Subresource::Main, DryRun::Off).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("PriorityClass first is already marked as default. Only one default can exist")
    );
    let mut first = store.get_value(&classes, "", "first").unwrap();
    first["description"] = json!("the default");
    store.update(&classes, first, Subresource::Main, DryRun::Off).unwrap();
}
