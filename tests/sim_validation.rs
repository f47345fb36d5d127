//! Every write kube-apiserver 1.33 refuses is refused, in its words (issue #29): one table per
//! kind, each row one case of upstream's `validation_test.go` (or the issue's own finding) with
//! the status code and message upstream answers, and a read-back showing nothing was stored.

use serde_json::{Value, json};

use crate::support::http::{call, send};
use lab_runner::sim::harness::Harness;

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const NODES: &str = "/api/v1/nodes";
const QUOTAS: &str = "/api/v1/namespaces/default/resourcequotas";
const PODS: &str = "/api/v1/namespaces/default/pods";
const STATEFULSETS: &str = "/apis/apps/v1/namespaces/default/statefulsets";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const REPLICASETS: &str = "/apis/apps/v1/namespaces/default/replicasets";
const DAEMONSETS: &str = "/apis/apps/v1/namespaces/default/daemonsets";
const JOBS: &str = "/apis/batch/v1/namespaces/default/jobs";
const CRONJOBS: &str = "/apis/batch/v1/namespaces/default/cronjobs";

/// The qualified-name text of `IsQualifiedName` for a bad name part.
const QUALIFIED: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
/// `IsConfigMapKey`'s regular-expression text.
const CONFIG_KEY: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const NEGATIVE: &str = "must be greater than or equal to 0";
const EFFECTS: &str = "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"";

/// What must hold once the write is refused.
enum After {
    /// Nothing at this path (a refused create).
    Absent(String),
    /// The object at this path still has this value at this JSON pointer (`null`: none).
    Unchanged(String, &'static str, Value),
}

/// One refused write.
struct Case {
    /// Upstream's test and case, or the issue's finding.
    name: &'static str,
    method: &'static str,
    uri: String,
    content_type: &'static str,
    body: Value,
    code: u16,
    message: String,
    after: After,
}

impl Case {
    fn create(name: &'static str, collection: &str, body: Value, message: impl Into<String>) -> Case {
        let object = body["metadata"]["name"].as_str().unwrap_or_default();
        let after = After::Absent(format!("{collection}/{object}"));
        Case {
            name,
            method: "POST",
            uri: collection.into(),
            content_type: JSON,
            body,
            code: 422,
            message: message.into(),
            after,
        }
    }

    fn code(self, code: u16) -> Case {
        Case { code, ..self }
    }
}

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

fn job_template() -> Value {
    json!({"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})
}

fn config_map(name: &str, data: Value, binary: Value) -> Value {
    json!({"metadata": {"name": name}, "data": data, "binaryData": binary})
}

fn statefulset(name: &str, spec: Value) -> Value {
    let mut base =
        json!({"serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": template()});
    for (key, value) in spec.as_object().unwrap() {
        base[key] = value.clone();
    }
    json!({"metadata": {"name": name}, "spec": base})
}

fn deployment(name: &str, spec: Value) -> Value {
    let mut object = statefulset(name, spec);
    object["spec"].as_object_mut().unwrap().remove("serviceName");
    object
}

fn job(name: &str, spec: Value) -> Value {
    let mut object = json!({"metadata": {"name": name}, "spec": job_template()["spec"].clone()});
    for (key, value) in spec.as_object().unwrap() {
        object["spec"][key] = value.clone();
    }
    object
}

fn cron_job(name: &str, spec: Value) -> Value {
    let mut object = json!({"metadata": {"name": name}, "spec": {"schedule": "*/5 * * * *", "jobTemplate": job_template()}});
    for (key, value) in spec.as_object().unwrap() {
        object["spec"][key] = value.clone();
    }
    object
}

/// Runs each case and checks its answer and the read-back.
async fn check(sim: &Harness, cases: Vec<Case>) {
    for case in cases {
        let (code, status) =
            call(sim, case.method, &case.uri, case.content_type, case.body.to_string()).await;
        assert_eq!(code, case.code, "{}: {status}", case.name);
        assert_eq!(status["message"], case.message.as_str(), "{}", case.name);
        match case.after {
            After::Absent(path) => {
                let (code, body) = call(sim, "GET", &path, JSON, "").await;
                assert_eq!(code, 404, "{}: stored anyway: {body}", case.name);
            }
            After::Unchanged(path, pointer, value) => {
                let (code, body) = call(sim, "GET", &path, JSON, "").await;
                assert_eq!(code, 200, "{}: {body}", case.name);
                assert_eq!(body.pointer(pointer).unwrap_or(&Value::Null), &value, "{}: changed", case.name);
            }
        }
    }
}

async fn created(sim: &Harness, collection: &str, body: Value) -> Value {
    let (code, object) = call(sim, "POST", collection, JSON, body.to_string()).await;
    assert_eq!(code, 201, "{object}");
    object
}

/// core `TestValidateConfigMap` ("invalid key", "dot key", "double dot key", "over max key
/// length", "empty key", "invalid binary data key", "duplicated key", "over max configmap
/// size"), the issue's `bad key!` and `a/b`, and binaryData that is not base64 (a decode error).
#[tokio::test]
async fn config_maps_refused_as_upstream() {
    let sim = Harness::start();
    let key = |key: &str, errors: &[&str]| {
        let parts: Vec<String> =
            errors.iter().map(|e| format!("data[{key}]: Invalid value: {key:?}: {e}")).collect();
        let body = if parts.len() == 1 { parts[0].clone() } else { format!("[{}]", parts.join(", ")) };
        format!("ConfigMap \"validname\" is invalid: {body}")
    };
    let long = "a".repeat(254);
    let cases = vec![
        Case::create("invalid key", CONFIGMAPS, config_map("validname", json!({"a*b": "v"}), json!(null)), key("a*b", &[CONFIG_KEY])),
        Case::create("issue: bad key!", CONFIGMAPS, config_map("validname", json!({"bad key!": "v"}), json!(null)), key("bad key!", &[CONFIG_KEY])),
        Case::create("issue: a/b", CONFIGMAPS, config_map("validname", json!({"a/b": "v"}), json!(null)), key("a/b", &[CONFIG_KEY])),
        Case::create("dot key", CONFIGMAPS, config_map("validname", json!({".": "v"}), json!(null)), key(".", &["must not be '.'"])),
        Case::create("double dot key", CONFIGMAPS, config_map("validname", json!({"..": "v"}), json!(null)), key("..", &["must not be '..'"])),
        Case::create("over max key length", CONFIGMAPS, config_map("validname", json!({&long: "v"}), json!(null)), key(&long, &["must be no more than 253 characters"])),
        Case::create("empty key", CONFIGMAPS, config_map("validname", json!({"": "v"}), json!(null)), key("", &[CONFIG_KEY])),
        Case::create(
            "invalid binary data key",
            CONFIGMAPS,
            config_map("validname", json!(null), json!({"a*b": "dmFsdWU="})),
            format!("ConfigMap \"validname\" is invalid: binaryData[a*b]: Invalid value: \"a*b\": {CONFIG_KEY}"),
        ),
        Case::create(
            "duplicated key",
            CONFIGMAPS,
            config_map("validname", json!({"key": "value1"}), json!({"key": "dmFsdWUy"})),
            "ConfigMap \"validname\" is invalid: data[key]: Invalid value: \"key\": duplicate of key present in binaryData",
        ),
        Case::create(
            "over max configmap size",
            CONFIGMAPS,
            config_map("validname", json!({"key": "a".repeat(1024 * 1024 + 1)}), json!(null)),
            "ConfigMap \"validname\" is invalid: []: Too long: may not be more than 1048576 bytes",
        ),
        Case::create(
            "issue: binaryData that is not base64",
            CONFIGMAPS,
            config_map("validname", json!(null), json!({"k": "not base64!"})),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: illegal base64 data at input byte 3",
        )
        .code(400),
    ];
    check(&sim, cases).await;
    // Upstream's valid neighbours ("leading dot key", "max key length") are stored.
    created(&sim, CONFIGMAPS, config_map("leading", json!({".ab": "v", &"a".repeat(253): "v"}), json!(null)))
        .await;
    // Grown by merge patches past 1 MiB: refused, the stored data as it was.
    created(&sim, CONFIGMAPS, config_map("grown", json!({"a": "x".repeat(600 * 1024)}), json!(null))).await;
    let grow = Case {
        name: "issue: a ConfigMap grown past 1 MiB by merge patch",
        method: "PATCH",
        uri: format!("{CONFIGMAPS}/grown"),
        content_type: MERGE,
        body: json!({"data": {"b": "x".repeat(600 * 1024)}}),
        code: 422,
        message: "ConfigMap \"grown\" is invalid: []: Too long: may not be more than 1048576 bytes".into(),
        after: After::Unchanged(format!("{CONFIGMAPS}/grown"), "/data/b", Value::Null),
    };
    check(&sim, vec![grow]).await;
}

/// core `TestValidateNode` (taints: a bad effect, a bad key, a missing effect) and
/// `TestValidateResourceQuota` (a hard resource that is not a resource name, an unknown scope).
#[tokio::test]
async fn taints_and_quotas_refused_as_upstream() {
    let sim = Harness::start();
    let node = |taint: Value| json!({"metadata": {"name": "n-valid"}, "spec": {"taints": [taint]}});
    let quota = |spec: Value| json!({"metadata": {"name": "q"}, "spec": spec});
    let cases = vec![
        Case::create(
            "issue: a taint with effect Bogus",
            NODES,
            node(json!({"key": "dedicated", "value": "gpu", "effect": "Bogus"})),
            format!(
                "Node \"n-valid\" is invalid: spec.taints[0].effect: Unsupported value: \"Bogus\": {EFFECTS}"
            ),
        ),
        Case::create(
            "issue: a taint with key bad key!",
            NODES,
            node(json!({"key": "bad key!", "effect": "NoSchedule"})),
            format!(
                "Node \"n-valid\" is invalid: spec.taints[0].key: Invalid value: \"bad key!\": {QUALIFIED}"
            ),
        ),
        Case::create(
            "missing-taint-effect",
            NODES,
            node(json!({"key": "dedicated"})),
            "Node \"n-valid\" is invalid: spec.taints[0].effect: Required value",
        ),
        Case::create(
            "issue: quota hard key bad name!",
            QUOTAS,
            quota(json!({"hard": {"bad name!": "1"}})),
            format!(
                "ResourceQuota \"q\" is invalid: [spec.hard[bad name!]: Invalid value: \"bad name!\": {QUALIFIED}, spec.hard[bad name!]: Invalid value: \"bad name!\": must be a standard resource for quota]"
            ),
        ),
        Case::create(
            "issue: quota scope Bogus",
            QUOTAS,
            quota(json!({"hard": {"pods": "1"}, "scopes": ["Bogus"]})),
            "ResourceQuota \"q\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Bogus\"}: unsupported scope",
        ),
        Case::create(
            "invalid-quota-scope: BestEffort on cpu",
            QUOTAS,
            quota(json!({"hard": {"cpu": "1"}, "scopes": ["BestEffort"]})),
            "ResourceQuota \"q\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\"}: unsupported scope applied to resource",
        ),
    ];
    check(&sim, cases).await;
    created(
        &sim,
        QUOTAS,
        quota(json!({"hard": {"requests.nvidia.com/gpu": "4", "pods": "10"}, "scopes": ["NotBestEffort"]})),
    )
    .await;
}

/// apps `TestValidateStatefulSet` (negative replicas, partition, minReadySeconds) by POST, merge
/// patch and PUT; `TestValidateDeployment` (strategy type, progress deadline).
#[tokio::test]
async fn workloads_refused_as_upstream() {
    let sim = Harness::start();
    let sts = |field: &str, value: Value| {
        let mut spec = json!({});
        spec[field] = value;
        statefulset("web-bad", spec)
    };
    let invalid = |kind: &str, name: &str, field: &str| {
        format!("{kind} \"{name}\" is invalid: {field}: Invalid value: -1: {NEGATIVE}")
    };
    let mut cases = vec![
        Case::create(
            "negative replicas",
            STATEFULSETS,
            sts("replicas", json!(-1)),
            invalid("StatefulSet.apps", "web-bad", "spec.replicas"),
        ),
        Case::create(
            "negative minReadySeconds",
            STATEFULSETS,
            sts("minReadySeconds", json!(-1)),
            invalid("StatefulSet.apps", "web-bad", "spec.minReadySeconds"),
        ),
        Case::create(
            "negative partition",
            STATEFULSETS,
            sts("updateStrategy", json!({"type": "RollingUpdate", "rollingUpdate": {"partition": -1}})),
            invalid("StatefulSet.apps", "web-bad", "spec.updateStrategy.rollingUpdate.partition"),
        ),
        Case::create(
            "invalid strategy type",
            DEPLOYMENTS,
            deployment("d", json!({"strategy": {"type": "Bogus"}})),
            "Deployment.apps \"d\" is invalid: spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"Bogus\", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", \"RollingUpdate\"",
        ),
        Case::create(
            "progressDeadlineSeconds not above minReadySeconds",
            DEPLOYMENTS,
            deployment("d", json!({"progressDeadlineSeconds": 0})),
            "Deployment.apps \"d\" is invalid: spec.progressDeadlineSeconds: Invalid value: 0: must be greater than minReadySeconds",
        ),
    ];
    cases.extend(statefulset_cases());
    cases.extend(template_label_cases());
    created(&sim, STATEFULSETS, statefulset("web", json!({"replicas": 2}))).await;
    let web = format!("{STATEFULSETS}/web");
    cases.push(Case {
        name: "ValidateStatefulSetUpdate: serviceName may not change",
        method: "PATCH",
        uri: web.clone(),
        content_type: MERGE,
        body: json!({"spec": {"serviceName": "other"}}),
        code: 422,
        message: "StatefulSet.apps \"web\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden".into(),
        after: After::Unchanged(web.clone(), "/spec/serviceName", json!("web")),
    });
    for field in ["replicas", "minReadySeconds"] {
        let mut patch = json!({"spec": {}});
        patch["spec"][field] = json!(-1);
        cases.push(Case {
            name: "merge patch to a negative count",
            method: "PATCH",
            uri: web.clone(),
            content_type: MERGE,
            body: patch,
            code: 422,
            message: invalid("StatefulSet.apps", "web", &format!("spec.{field}")),
            after: After::Unchanged(web.clone(), "/spec/replicas", json!(2)),
        });
    }
    let (_, mut stored) = call(&sim, "GET", &web, JSON, "").await;
    stored["spec"]["replicas"] = json!(-1);
    cases.push(Case {
        name: "PUT of negative replicas",
        method: "PUT",
        uri: web.clone(),
        content_type: JSON,
        body: stored,
        code: 422,
        message: invalid("StatefulSet.apps", "web", "spec.replicas"),
        after: After::Unchanged(web.clone(), "/spec/replicas", json!(2)),
    });
    check(&sim, cases).await;
}

/// apps `TestValidateStatefulSet` (v1.33): "invalid revisionHistoryLimit" (kubernetes/kubernetes#129017),
/// "invalid podManagementPolicy" and "invalid update strategy" (`Invalid value`, upstream's own
/// sentence), and a name that is not a DNS label (`ValidateStatefulSetName`, kubernetes/kubernetes#114172).
fn statefulset_cases() -> Vec<Case> {
    vec![
        Case::create(
            "negative revisionHistoryLimit",
            STATEFULSETS,
            statefulset("web-bad", json!({"revisionHistoryLimit": -1})),
            format!(
                "StatefulSet.apps \"web-bad\" is invalid: spec.revisionHistoryLimit: Invalid value: -1: {NEGATIVE}"
            ),
        ),
        Case::create(
            "invalid podManagementPolicy",
            STATEFULSETS,
            statefulset("web-bad", json!({"podManagementPolicy": "Bogus"})),
            "StatefulSet.apps \"web-bad\" is invalid: spec.podManagementPolicy: Invalid value: \"Bogus\": must be 'OrderedReady' or 'Parallel'",
        ),
        Case::create(
            "invalid update strategy",
            STATEFULSETS,
            statefulset("web-bad", json!({"updateStrategy": {"type": "Bogus"}})),
            "StatefulSet.apps \"web-bad\" is invalid: spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:\"Bogus\", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'",
        ),
        Case::create(
            "a name that is a subdomain, not a label",
            STATEFULSETS,
            statefulset("web.bad", json!({})),
            "StatefulSet.apps \"web.bad\" is invalid: metadata.name: Invalid value: \"web.bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
    ]
}

/// The selector must select the template's labels, for every workload as for a Job (apps
/// `TestValidateDeployment`, `TestValidateReplicaSet`, `TestValidateDaemonSet`,
/// `TestValidateStatefulSet`: "selector_doesnt_match").
fn template_label_cases() -> Vec<Case> {
    let mismatched = |name: &str, drop_service: bool| {
        let mut object = statefulset(name, json!({}));
        object["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"});
        if drop_service {
            object["spec"].as_object_mut().unwrap().remove("serviceName");
        }
        object
    };
    let message = |kind: &str, name: &str| {
        format!(
            "{kind}.apps \"{name}\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{{\"app\":\"other\"}}: `selector` does not match template `labels`"
        )
    };
    vec![
        Case::create("Deployment", DEPLOYMENTS, mismatched("d", true), message("Deployment", "d")),
        Case::create("ReplicaSet", REPLICASETS, mismatched("r", true), message("ReplicaSet", "r")),
        Case::create("DaemonSet", DAEMONSETS, mismatched("ds", true), message("DaemonSet", "ds")),
        Case::create("StatefulSet", STATEFULSETS, mismatched("s", false), message("StatefulSet", "s")),
    ]
}

/// batch `TestValidateCronJob` (negative history limits and starting deadline, a name over 52
/// characters) and `TestValidateJob` (negative ttlSecondsAfterFinished, a name whose generated
/// `job-name` labels exceed 63 characters).
#[tokio::test]
async fn batch_refused_as_upstream() {
    let sim = Harness::start();
    let name53 = "a".repeat(53);
    let name64 = "j".repeat(64);
    let negative = |kind: &str, name: &str, field: &str, value: i64| {
        format!("{kind} \"{name}\" is invalid: spec.{field}: Invalid value: {value}: {NEGATIVE}")
    };
    let cases = vec![
        Case::create(
            "negative successfulJobsHistoryLimit",
            CRONJOBS,
            cron_job("cj", json!({"successfulJobsHistoryLimit": -1})),
            negative("CronJob.batch", "cj", "successfulJobsHistoryLimit", -1),
        ),
        Case::create(
            "negative failedJobsHistoryLimit",
            CRONJOBS,
            cron_job("cj", json!({"failedJobsHistoryLimit": -1})),
            negative("CronJob.batch", "cj", "failedJobsHistoryLimit", -1),
        ),
        Case::create(
            "negative startingDeadlineSeconds",
            CRONJOBS,
            cron_job("cj", json!({"startingDeadlineSeconds": -5})),
            negative("CronJob.batch", "cj", "startingDeadlineSeconds", -5),
        ),
        Case::create(
            "name over 52 characters",
            CRONJOBS,
            cron_job(&name53, json!({})),
            format!(
                "CronJob.batch \"{name53}\" is invalid: metadata.name: Invalid value: \"{name53}\": must be no more than 52 characters"
            ),
        ),
        Case::create(
            "negative ttlSecondsAfterFinished",
            JOBS,
            job("j", json!({"ttlSecondsAfterFinished": -1})),
            negative("Job.batch", "j", "ttlSecondsAfterFinished", -1),
        ),
        Case::create(
            "issue: a 64-character Job name",
            JOBS,
            job(&name64, json!({})),
            format!(
                "Job.batch \"{name64}\" is invalid: spec.template.labels: Invalid value: \"{name64}\": must be no more than 63 characters"
            ),
        ),
    ];
    check(&sim, cases).await;
    created(&sim, CRONJOBS, cron_job(&"a".repeat(52), json!({}))).await;
    created(&sim, JOBS, job(&"j".repeat(63), json!({}))).await;
}

/// core `TestValidateTolerations` ("invalid toleration effect") on a pod update, and the
/// transport's refusals: a patch may not rename an object or move it (`checkName`).
#[tokio::test]
async fn pod_patches_and_renames_refused_as_upstream() {
    let sim = Harness::start();
    created(
        &sim,
        PODS,
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
    .await;
    let pod = format!("{PODS}/p");
    let (_, stored) = call(&sim, "GET", &pod, JSON, "").await;
    let tolerations = stored["spec"]["tolerations"].clone();
    let target = format!("{CONFIGMAPS}/target");
    created(&sim, CONFIGMAPS, config_map("target", json!({"k": "v"}), json!(null))).await;
    let cases = vec![
        Case {
            name: "issue: a toleration with effect Bogus added by patch",
            method: "PATCH",
            uri: pod.clone(),
            content_type: JSON_PATCH,
            body: json!([{"op": "add", "path": "/spec/tolerations/-",
                          "value": {"key": "k", "operator": "Exists", "effect": "Bogus"}}]),
            code: 422,
            message: format!(
                "Pod \"p\" is invalid: spec.tolerations[{}].effect: Unsupported value: \"Bogus\": {EFFECTS}",
                tolerations.as_array().map_or(0, Vec::len)
            ),
            after: After::Unchanged(pod.clone(), "/spec/tolerations", tolerations.clone()),
        },
        Case {
            name: "issue: a patch that renames the object",
            method: "PATCH",
            uri: target.clone(),
            content_type: MERGE,
            body: json!({"metadata": {"name": "other"}, "data": {"k": "w"}}),
            code: 400,
            message: "the name of the object (other) does not match the name on the URL (target)".into(),
            after: After::Unchanged(target.clone(), "/data/k", json!("v")),
        },
        Case {
            name: "issue: a patch that moves the object to another namespace",
            method: "PATCH",
            uri: target.clone(),
            content_type: MERGE,
            body: json!({"metadata": {"namespace": "kube-system"}, "data": {"k": "w"}}),
            code: 400,
            message: "the namespace of the object (kube-system) does not match the namespace on the request (default)".into(),
            after: After::Unchanged(target.clone(), "/data/k", json!("v")),
        },
        Case {
            name: "a JSON patch that removes the name",
            method: "PATCH",
            uri: target.clone(),
            content_type: JSON_PATCH,
            body: json!([{"op": "remove", "path": "/metadata/name"}]),
            code: 400,
            message: "the name of the object () does not match the name on the URL (target)".into(),
            after: After::Unchanged(target.clone(), "/metadata/name", json!("target")),
        },
    ];
    check(&sim, cases).await;
    let (code, _) = call(&sim, "GET", &format!("{CONFIGMAPS}/other"), JSON, "").await;
    assert_eq!(code, 404);
}

/// A patch that changes the object's type (issue #29). Merge and JSON patches: the patched JSON
/// is decoded into the URL's type, which fails for a kind the scheme does not know or cannot
/// convert (`endpoints/handlers/patch.go` `jsonPatcher.applyPatchToCurrentObject`: 422 with the
/// patched JSON as the `patch` field's value). Apply: the field manager's version check
/// (`versioncheck.go`, 400). A strategic merge patch's result is converted with
/// `FromUnstructured`, which ignores the type fields: the kind stays the URL's, as upstream.
#[tokio::test]
async fn patches_that_change_the_kind_refused_as_upstream() {
    let sim = Harness::start();
    let target = format!("{CONFIGMAPS}/target");
    created(&sim, CONFIGMAPS, config_map("target", json!({"k": "v"}), json!(null))).await;
    let cases = [
        (
            MERGE,
            json!({"kind": "Bogus", "data": {"k": "w"}}),
            r#"no kind "Bogus" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#,
            r#""kind":"Bogus""#,
        ),
        (
            MERGE,
            json!({"apiVersion": "apps/v1", "data": {"k": "w"}}),
            r#"no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#,
            r#""apiVersion":"apps/v1""#,
        ),
        (
            JSON_PATCH,
            json!([{"op": "replace", "path": "/kind", "value": "Secret"}]),
            "converting (v1.Secret) to (core.ConfigMap): unknown conversion",
            r#""kind":"Secret""#,
        ),
    ];
    for (content_type, body, error, patched) in cases {
        let (code, status) = call(&sim, "PATCH", &target, content_type, body.to_string()).await;
        assert_eq!(code, 422, "{body}: {status}");
        let message = status["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(r#" "" is invalid: patch: Invalid value: "{"#), "{message}");
        assert!(message.ends_with(&format!("}}\": {error}")), "{message}");
        let cause = &status["details"]["causes"][0];
        assert_eq!((&cause["field"], &cause["reason"]), (&json!("patch"), &json!("FieldValueInvalid")));
        // The value is the patched object as Go marshals it (keys sorted, the change in place).
        assert!(
            cause["message"].as_str().unwrap_or_default().contains(&patched.replace('"', r#"\""#)),
            "{cause}"
        );
        let (_, stored) = call(&sim, "GET", &target, JSON, "").await;
        assert_eq!((&stored["kind"], &stored["data"]["k"]), (&json!("ConfigMap"), &json!("v")), "{body}");
    }
    let apply =
        json!({"apiVersion": "v1", "kind": "Bogus", "metadata": {"name": "target"}, "data": {"k": "w"}});
    let uri = format!("{target}?fieldManager=t");
    let (code, status) = call(&sim, "PATCH", &uri, "application/apply-patch+yaml", apply.to_string()).await;
    assert_eq!((code, &status["message"]), (400, &json!("invalid object type: /v1, Kind=Bogus")));
    // Removing `kind` is no change: the decoder fills it from the URL's type.
    let (code, _) = call(&sim, "PATCH", &target, JSON_PATCH, r#"[{"op": "remove", "path": "/kind"}]"#).await;
    assert_eq!(code, 200);
    let strategic = json!({"kind": "Bogus", "data": {"k": "s"}});
    let (code, patched) =
        call(&sim, "PATCH", &target, "application/strategic-merge-patch+json", strategic.to_string()).await;
    assert_eq!((code, &patched["kind"], &patched["data"]["k"]), (200, &json!("ConfigMap"), &json!("s")));
}

/// Upstream's limits on what is stored and what is answered: an object over etcd's 1.5 MiB
/// request limit (`etcdserver: request is too large`, a 500 without a reason), and `Warning`
/// headers de-duplicated and capped as apiserver's warning recorder caps them.
#[tokio::test]
async fn object_size_and_warnings_capped_as_upstream() {
    let sim = Harness::start();
    // 1 MiB of data (the most validation allows) and 600 KiB of valid labels: 1.6 MiB stored.
    let labels: serde_json::Map<String, Value> =
        (0..10_000).map(|i| (format!("label-{i:05}"), json!("v".repeat(50)))).collect();
    let big = json!({"metadata": {"name": "big", "labels": labels}, "data": {"k": "x".repeat(1024 * 1024)}});
    let (code, status) = call(&sim, "POST", CONFIGMAPS, JSON, big.to_string()).await;
    assert_eq!(
        (code, &status["message"], &status["reason"]),
        (500, &json!("etcdserver: request is too large"), &Value::Null),
        "{status}"
    );
    let (code, _) = call(&sim, "GET", &format!("{CONFIGMAPS}/big"), JSON, "").await;
    assert_eq!(code, 404);

    // 1,000 distinct unknown fields of 21 characters each: 195 fit in 4,096 characters, the
    // 196th switches the recorder to truncation, which replays the 196 and stops there.
    let mut unknown = json!({"metadata": {"name": "warned"}});
    for i in 0..1000 {
        unknown[format!("f{i:04}")] = json!(1);
    }
    let uri = format!("{CONFIGMAPS}?fieldValidation=Warn");
    let (code, headers, _) = send(&sim, "POST", &uri, JSON, unknown.to_string()).await;
    assert_eq!(code, 201);
    let warnings: Vec<&str> = headers.get_all("warning").iter().map(|v| v.to_str().unwrap()).collect();
    assert_eq!(warnings.len(), 196, "{:?}", warnings.first());
    assert_eq!(warnings[0], "299 - \"unknown field \\\"f0000\\\"\"");
    // 300,000 copies of one duplicate key: one warning.
    let mut body = String::from("{\"metadata\": {\"name\": \"dup\"}");
    for _ in 0..300_000 {
        body.push_str(", \"x\": 1");
    }
    body.push('}');
    let (code, headers, _) = send(&sim, "POST", &uri, JSON, body).await;
    assert_eq!(code, 201);
    let warnings: Vec<&str> = headers.get_all("warning").iter().map(|v| v.to_str().unwrap()).collect();
    assert!(warnings.len() <= 2, "{warnings:?}");
}
