//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`), decoded with `k8s-pb` and
//! converted to the JSON the JSON path would have received.
//!
//! kubectl's typed clients (`create namespace|configmap|secret|quota|deployment|job|
//! serviceaccount|service|role|clusterrole|rolebinding|clusterrolebinding|
//! priorityclass`, `autoscale`, `auth can-i`) send
//! protobuf and do not retry in JSON after a 415
//! (client-go's typed clientsets prefer protobuf). The wire format is upstream's
//! (apimachinery/pkg/runtime/serializer/protobuf/protobuf.go): the 4-byte magic `k8s\0`, then a
//! `runtime.Unknown{typeMeta, raw, contentEncoding, contentType}` whose `raw` is the typed
//! message. Each converter destructures its message exhaustively, so every field is either
//! converted or — for fields no kubectl generator sets — refused with a 400 rather than dropped.

use base64::Engine;
use k8s_pb::{
    api::{
        apps::v1 as apps,
        authorization::v1 as authz,
        autoscaling::v2 as autoscaling,
        batch::v1 as batch,
        core::v1::{
            ConfigMap, ConfigMapEnvSource, ConfigMapKeySelector, Container, ContainerPort, EnvFromSource,
            EnvVar, EnvVarSource, LocalObjectReference, Namespace, NamespaceSpec, ObjectFieldSelector,
            ObjectReference, PodSpec, PodTemplateSpec, ResourceQuota, ResourceQuotaSpec,
            ResourceRequirements, ScopeSelector, ScopedResourceSelectorRequirement, Secret, SecretEnvSource,
            SecretKeySelector, Service, ServiceAccount, ServicePort, ServiceSpec, Toleration, VolumeMount,
        },
        policy::v1 as policy,
        rbac::v1 as rbac,
    },
    apimachinery::pkg::{
        api::resource::Quantity,
        apis::meta::v1::{LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference, Time},
        runtime::Unknown,
        util::intstr::IntOrString,
    },
};
use prost::Message;
use serde_json::{Map, Value, json};

/// The media type of protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// The magic prefix of every protobuf-encoded Kubernetes object.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// Why a protobuf body could not be turned into JSON.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The body does not start with `k8s\0`.
    #[error("provided object is not a protobuf-encoded Kubernetes object: missing the \"k8s\\x00\" prefix")]
    Magic,
    /// The `runtime.Unknown` envelope or the typed message inside is not valid protobuf.
    #[error("unable to decode the protobuf {what}: {source}")]
    Decode {
        /// `envelope` or the kind.
        what: String,
        /// The decoder's complaint.
        source: prost::DecodeError,
    },
    /// The envelope names a content encoding (upstream writes none).
    #[error("unsupported protobuf content encoding {0:?}")]
    ContentEncoding(String),
    /// The simulator has no converter for this kind.
    #[error(
        "the simulator reads protobuf bodies only for the kinds kubectl's generators send; {api_version} {kind} must be sent as application/json"
    )]
    UnsupportedKind {
        /// The envelope's apiVersion.
        api_version: String,
        /// The envelope's kind.
        kind: String,
    },
    /// The pod `kubectl debug node/…` creates (`node-debugger-<node>-<suffix>`, pinned to the
    /// node): the simulator runs no processes, so there is no node to debug.
    #[error(
        "pods \"{name}\" is forbidden: the simulator runs no containers, so node {node:?} has no host namespaces or filesystem to debug; read its state with kubectl describe node {node}"
    )]
    NodeDebugPod {
        /// The debug pod's name.
        name: String,
        /// The node it targets.
        node: String,
    },
    /// A field no kubectl generator sets, which the converter refuses rather than drops.
    #[error("{kind}.{field} is not supported in protobuf bodies by the simulator; send application/json")]
    UnsupportedField {
        /// The message type.
        kind: &'static str,
        /// The field (proto field name).
        field: &'static str,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `kubectl debug node/<node>` (kubectl pkg/cmd/debug `generateNodeDebugPod`): a pod named
/// `node-debugger-<node>-<suffix>` with `nodeName` set, host namespaces and the node's root
/// mounted. Recognised so that it is refused (403, as an admission plugin refuses) with a
/// reason rather than as a media type the simulator does not read.
fn node_debug_pod(raw: &[u8]) -> Option<Error> {
    let pod = k8s_pb::api::core::v1::Pod::decode(raw).ok()?;
    let name = pod.metadata?.name?;
    let node = pod.spec?.node_name.filter(|node| !node.is_empty())?;
    name.starts_with(&format!("node-debugger-{node}-")).then_some(Error::NodeDebugPod { name, node })
}

/// Decodes a protobuf body into the JSON object (with `apiVersion` and `kind` from the
/// envelope) that the JSON path would have received.
///
/// ```
/// use lab_runner_sim::server::protobuf;
/// assert!(protobuf::decode(b"{}").is_err());
/// ```
pub fn decode(body: &[u8]) -> Result<Value> {
    let raw = body.strip_prefix(MAGIC.as_slice()).ok_or(Error::Magic)?;
    let envelope =
        Unknown::decode(raw).map_err(|source| Error::Decode { what: "envelope".into(), source })?;
    if let Some(encoding) = envelope.content_encoding.filter(|e| !e.is_empty()) {
        return Err(Error::ContentEncoding(encoding));
    }
    let type_meta = envelope.type_meta.unwrap_or_default();
    let api_version = type_meta.api_version.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    let raw = envelope.raw.unwrap_or_default();
    let decode_error = |source| Error::Decode { what: kind.clone(), source };
    // Per kind, outside `kinds::BUILT_IN` on purpose: these are k8s-pb's wire types (the
    // server's concern, which the kinds below it must not depend on), and some bodies decoded
    // here are no kind of the table (an `Eviction`). docs/simulator.md, "Adding a kind".
    let mut object = match (api_version.as_str(), kind.as_str()) {
        ("v1", "Namespace") => namespace(Namespace::decode(raw.as_slice()).map_err(decode_error)?)?,
        ("v1", "ConfigMap") => config_map(ConfigMap::decode(raw.as_slice()).map_err(decode_error)?)?,
        ("v1", "Secret") => secret(Secret::decode(raw.as_slice()).map_err(decode_error)?)?,
        ("v1", "ResourceQuota") => quota(ResourceQuota::decode(raw.as_slice()).map_err(decode_error)?)?,
        ("v1", "ServiceAccount") => {
            service_account(ServiceAccount::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("apps/v1", "Deployment") => {
            deployment(apps::Deployment::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("autoscaling/v2", "HorizontalPodAutoscaler") => horizontal_pod_autoscaler(
            autoscaling::HorizontalPodAutoscaler::decode(raw.as_slice()).map_err(decode_error)?,
        )?,
        ("autoscaling/v1", "HorizontalPodAutoscaler") => autoscaling_v1::horizontal_pod_autoscaler(
            k8s_pb::api::autoscaling::v1::HorizontalPodAutoscaler::decode(raw.as_slice())
                .map_err(decode_error)?,
        )?,
        ("batch/v1", "Job") => job(batch::Job::decode(raw.as_slice()).map_err(decode_error)?)?,
        ("batch/v1", "CronJob") => cron_job(batch::CronJob::decode(raw.as_slice()).map_err(decode_error)?)?,
        ("policy/v1", "PodDisruptionBudget") => {
            disruption_budget(policy::PodDisruptionBudget::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("policy/v1", "Eviction") => {
            eviction(policy::Eviction::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("v1", "Service") => service(Service::decode(raw.as_slice()).map_err(decode_error)?)?,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
            cluster_role(rbac::ClusterRole::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("rbac.authorization.k8s.io/v1", "Role") => {
            role(rbac::Role::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            cluster_role_binding(rbac::ClusterRoleBinding::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => {
            role_binding(rbac::RoleBinding::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("scheduling.k8s.io/v1", "PriorityClass") => {
            priority_class(PriorityClass::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => {
            access_review(authz::SelfSubjectAccessReview::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => {
            rules_review(authz::SelfSubjectRulesReview::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("authentication.k8s.io/v1", "SelfSubjectReview") => {
            identity_review(SelfSubjectReview::decode(raw.as_slice()).map_err(decode_error)?)?
        }
        ("v1", "Pod") => {
            return Err(
                node_debug_pod(raw.as_slice()).unwrap_or(Error::UnsupportedKind { api_version, kind })
            );
        }
        _ => return Err(Error::UnsupportedKind { api_version, kind }),
    };
    let mut typed = Map::new();
    typed.insert("apiVersion".into(), json!(api_version));
    typed.insert("kind".into(), json!(kind));
    typed.append(object.as_object_mut().expect("converters build objects"));
    Ok(Value::Object(typed))
}

/// A protobuf value as JSON; `Null` means "absent" and is left out of objects.
///
/// Go's protobuf encoder writes every non-pointer scalar, so an optional field holding `""`,
/// `0` or `false` usually means "unset", which upstream's JSON omits (`omitempty`). Fields that
/// are pointers in Go (`replicas`, `immutable`, …), where a zero is meaningful, are wrapped in
/// [`Pointer`].
trait ToJson {
    fn to_json(self) -> Result<Value>;
}

/// Scalars, as values and as optional fields.
macro_rules! scalar {
    ($($ty:ty),*) => {$(
        impl ToJson for $ty {
            fn to_json(self) -> Result<Value> {
                Ok(json!(self))
            }
        }
        impl ToJson for Option<$ty> {
            fn to_json(self) -> Result<Value> {
                match self {
                    Some(value) if value != <$ty>::default() => value.to_json(),
                    _ => Ok(Value::Null),
                }
            }
        }
    )*};
}
scalar!(String, bool, i32, i64);

/// Optional message fields: absent when `None`.
macro_rules! optional {
    ($($ty:ty),*) => {$(
        impl ToJson for Option<$ty> {
            fn to_json(self) -> Result<Value> {
                self.map_or(Ok(Value::Null), ToJson::to_json)
            }
        }
    )*};
}

/// A field that is a pointer in Go: a zero value is kept.
struct Pointer<T>(Option<T>);
impl<T: ToJson> ToJson for Pointer<T> {
    fn to_json(self) -> Result<Value> {
        self.0.map_or(Ok(Value::Null), ToJson::to_json)
    }
}

/// Repeated fields: protobuf cannot tell an empty list from an absent one; upstream's JSON
/// omits both (`omitempty`).
impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(self) -> Result<Value> {
        if self.is_empty() {
            return Ok(Value::Null);
        }
        Ok(Value::Array(self.into_iter().map(ToJson::to_json).collect::<Result<_>>()?))
    }
}
impl<T: ToJson> ToJson for std::collections::BTreeMap<String, T> {
    fn to_json(self) -> Result<Value> {
        if self.is_empty() {
            return Ok(Value::Null);
        }
        let mut map = Map::new();
        for (key, value) in self {
            map.insert(key, value.to_json()?);
        }
        Ok(Value::Object(map))
    }
}

/// `bytes` fields and maps of them are base64 in JSON.
struct Bytes<T>(T);
impl ToJson for Bytes<std::collections::BTreeMap<String, Vec<u8>>> {
    fn to_json(self) -> Result<Value> {
        let map: std::collections::BTreeMap<String, String> = self
            .0
            .into_iter()
            .map(|(key, bytes)| (key, base64::engine::general_purpose::STANDARD.encode(bytes)))
            .collect();
        map.to_json()
    }
}

impl ToJson for Quantity {
    fn to_json(self) -> Result<Value> {
        let Quantity { string } = self;
        Ok(json!(string.unwrap_or_default()))
    }
}
impl ToJson for IntOrString {
    fn to_json(self) -> Result<Value> {
        let IntOrString { r#type, int_val, str_val } = self;
        // intstr.Type: 0 = Int, 1 = String.
        if r#type == Some(1) {
            Ok(json!(str_val.unwrap_or_default()))
        } else {
            Ok(json!(int_val.unwrap_or(0)))
        }
    }
}
impl ToJson for Time {
    fn to_json(self) -> Result<Value> {
        let Time { seconds, nanos } = self;
        // metav1.Time encodes the zero time as an empty message (time_proto.go `Marshal`); JSON
        // writes it as null. Otherwise RFC 3339 at second precision.
        if seconds.unwrap_or(0) == 0 && nanos.unwrap_or(0) == 0 {
            return Ok(Value::Null);
        }
        let text = k8s_openapi::jiff::Timestamp::from_second(seconds.unwrap_or(0))
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_default();
        Ok(Value::String(text))
    }
}
optional!(Quantity, IntOrString, Time);

/// Whether a field the converters refuse holds anything (`Some("")`/`Some(0)` do not).
trait Presence {
    fn present(&self) -> bool;
}
impl<T: Default + PartialEq> Presence for Option<T> {
    fn present(&self) -> bool {
        self.as_ref().is_some_and(|value| *value != T::default())
    }
}
impl<T> Presence for Vec<T> {
    fn present(&self) -> bool {
        !self.is_empty()
    }
}
impl<K, V> Presence for std::collections::BTreeMap<K, V> {
    fn present(&self) -> bool {
        !self.is_empty()
    }
}

/// Status is server-owned: upstream's create strategies drop what a client sends.
fn server_owned<T>(_status: T) -> Option<bool> {
    None
}

/// Key selectors inline their `LocalObjectReference` as `name` in JSON.
fn reference_name(reference: Option<LocalObjectReference>) -> Option<String> {
    reference.and_then(|r| r.name)
}

fn insert(map: &mut Map<String, Value>, key: &str, value: impl ToJson) -> Result<()> {
    let value = value.to_json()?;
    if !value.is_null() {
        map.insert(key.to_string(), value);
    }
    Ok(())
}

/// Destructures a message exhaustively: fields in `reject` must be unset, the rest are
/// converted under their JSON names.
macro_rules! convert {
    ($message:expr => $ty:ident reject [$($rejected:ident),* $(,)?] { $($json:literal : $field:ident $(=> $wrap:expr)?),* $(,)? }) => {{
        let $ty { $($field,)* $($rejected,)* } = $message;
        $(
            if Presence::present(&$rejected) {
                return Err(Error::UnsupportedField { kind: stringify!($ty), field: stringify!($rejected) });
            }
        )*
        let mut map = Map::new();
        $( insert(&mut map, $json, convert!(@wrap $field $(=> $wrap)?))?; )*
        Ok(Value::Object(map))
    }};
    (@wrap $field:ident) => { $field };
    (@wrap $field:ident => $wrap:expr) => { $wrap($field) };
}

/// Implements [`ToJson`] for a message through [`convert!`].
macro_rules! message {
    ($ty:ident reject [$($rejected:ident),* $(,)?] { $($json:literal : $field:ident $(=> $wrap:expr)?),* $(,)? }) => {
        impl ToJson for $ty {
            fn to_json(self) -> Result<Value> {
                convert!(self => $ty reject [$($rejected),*] { $($json : $field $(=> $wrap)?),* })
            }
        }
        optional!($ty);
    };
}

message!(ObjectMeta reject [self_link, uid, resource_version, generation, deletion_timestamp,
        deletion_grace_period_seconds, managed_fields] {
    "name": name, "generateName": generate_name, "namespace": namespace,
    "creationTimestamp": creation_timestamp, "labels": labels, "annotations": annotations,
    "ownerReferences": owner_references, "finalizers": finalizers,
});
message!(OwnerReference reject [] {
    "apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": controller => Pointer,
    "blockOwnerDeletion": block_owner_deletion => Pointer,
});
message!(LabelSelector reject [] { "matchLabels": match_labels, "matchExpressions": match_expressions });
message!(LabelSelectorRequirement reject [] { "key": key, "operator": operator, "values": values });
message!(NamespaceSpec reject [] { "finalizers": finalizers });
message!(ResourceQuotaSpec reject [] { "hard": hard, "scopes": scopes, "scopeSelector": scope_selector });
message!(ScopeSelector reject [] { "matchExpressions": match_expressions });
message!(ScopedResourceSelectorRequirement reject [] {
    "scopeName": scope_name, "operator": operator, "values": values,
});
message!(ObjectReference reject [] {
    "kind": kind, "namespace": namespace, "name": name, "uid": uid, "apiVersion": api_version,
    "resourceVersion": resource_version, "fieldPath": field_path,
});
message!(LocalObjectReference reject [] { "name": name });
message!(PodTemplateSpec reject [] { "metadata": metadata, "spec": spec });
message!(PodSpec reject [volumes, ephemeral_containers, security_context, affinity, host_aliases, dns_config,
        readiness_gates, overhead, topology_spread_constraints, os, scheduling_gates, resource_claims,
        resources, workload_ref] {
    "initContainers": init_containers, "containers": containers, "restartPolicy": restart_policy,
    "terminationGracePeriodSeconds": termination_grace_period_seconds => Pointer,
    "activeDeadlineSeconds": active_deadline_seconds => Pointer, "dnsPolicy": dns_policy, "nodeSelector": node_selector,
    "serviceAccountName": service_account_name, "serviceAccount": service_account,
    "automountServiceAccountToken": automount_service_account_token => Pointer, "nodeName": node_name,
    "hostNetwork": host_network, "hostPID": host_pid, "hostIPC": host_ipc,
    "shareProcessNamespace": share_process_namespace => Pointer, "imagePullSecrets": image_pull_secrets,
    "hostname": hostname, "subdomain": subdomain, "schedulerName": scheduler_name,
    "tolerations": tolerations, "priorityClassName": priority_class_name, "priority": priority => Pointer,
    "runtimeClassName": runtime_class_name, "enableServiceLinks": enable_service_links => Pointer,
    "preemptionPolicy": preemption_policy, "setHostnameAsFQDN": set_hostname_as_fqdn => Pointer,
    "hostUsers": host_users => Pointer, "hostnameOverride": hostname_override,
});
message!(Toleration reject [] {
    "key": key, "operator": operator, "value": value, "effect": effect,
    "tolerationSeconds": toleration_seconds => Pointer,
});
message!(Container reject [resize_policy, restart_policy_rules, volume_devices, liveness_probe,
        readiness_probe, startup_probe, lifecycle, security_context] {
    "name": name, "image": image, "command": command, "args": args, "workingDir": working_dir,
    "ports": ports, "envFrom": env_from, "env": env, "resources": resources, "restartPolicy": restart_policy,
    "volumeMounts": volume_mounts, "terminationMessagePath": termination_message_path,
    "terminationMessagePolicy": termination_message_policy, "imagePullPolicy": image_pull_policy,
    "stdin": stdin, "stdinOnce": stdin_once, "tty": tty,
});
message!(ContainerPort reject [] {
    "name": name, "hostPort": host_port, "containerPort": container_port, "protocol": protocol,
    "hostIP": host_ip,
});
message!(EnvVar reject [] { "name": name, "value": value, "valueFrom": value_from });
message!(EnvVarSource reject [resource_field_ref, file_key_ref] {
    "fieldRef": field_ref, "configMapKeyRef": config_map_key_ref, "secretKeyRef": secret_key_ref,
});
// `kubectl create job --from=cronjob/NAME` sends the CronJob's template, `envFrom` included.
message!(EnvFromSource reject [] { "prefix": prefix, "configMapRef": config_map_ref, "secretRef": secret_ref });
message!(ConfigMapEnvSource reject [] {
    "name": local_object_reference => reference_name, "optional": optional => Pointer,
});
message!(SecretEnvSource reject [] {
    "name": local_object_reference => reference_name, "optional": optional => Pointer,
});
message!(ObjectFieldSelector reject [] { "apiVersion": api_version, "fieldPath": field_path });
message!(ConfigMapKeySelector reject [] {
    "name": local_object_reference => reference_name,
    "key": key, "optional": optional => Pointer,
});
message!(SecretKeySelector reject [] {
    "name": local_object_reference => reference_name,
    "key": key, "optional": optional => Pointer,
});
message!(ResourceRequirements reject [claims] { "limits": limits, "requests": requests });
message!(VolumeMount reject [] {
    "name": name, "readOnly": read_only, "recursiveReadOnly": recursive_read_only,
    "mountPath": mount_path, "subPath": sub_path, "mountPropagation": mount_propagation,
    "subPathExpr": sub_path_expr,
});

fn namespace(message: Namespace) -> Result<Value> {
    convert!(message => Namespace reject [] { "metadata": metadata, "spec": spec, "status": status => server_owned })
}

fn config_map(message: ConfigMap) -> Result<Value> {
    convert!(message => ConfigMap reject [] {
        "metadata": metadata, "immutable": immutable => Pointer, "data": data, "binaryData": binary_data => Bytes,
    })
}

fn secret(message: Secret) -> Result<Value> {
    convert!(message => Secret reject [] {
        "metadata": metadata, "immutable": immutable => Pointer, "data": data => Bytes, "stringData": string_data,
        "type": r#type,
    })
}

fn quota(message: ResourceQuota) -> Result<Value> {
    convert!(message => ResourceQuota reject [] {
        "metadata": metadata, "spec": spec, "status": status => server_owned,
    })
}

fn service_account(message: ServiceAccount) -> Result<Value> {
    convert!(message => ServiceAccount reject [] {
        "metadata": metadata, "secrets": secrets, "imagePullSecrets": image_pull_secrets,
        "automountServiceAccountToken": automount_service_account_token => Pointer,
    })
}

use apps::{Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment};
message!(DeploymentSpec reject [] {
    "replicas": replicas => Pointer, "selector": selector, "template": template, "strategy": strategy,
    "minReadySeconds": min_ready_seconds, "revisionHistoryLimit": revision_history_limit => Pointer,
    "paused": paused, "progressDeadlineSeconds": progress_deadline_seconds => Pointer,
});
message!(DeploymentStrategy reject [] { "type": r#type, "rollingUpdate": rolling_update });
message!(RollingUpdateDeployment reject [] { "maxUnavailable": max_unavailable, "maxSurge": max_surge });

fn deployment(message: Deployment) -> Result<Value> {
    convert!(message => Deployment reject [] {
        "metadata": metadata, "spec": spec, "status": status => server_owned,
    })
}

use autoscaling::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};
message!(CrossVersionObjectReference reject [] { "kind": kind, "name": name, "apiVersion": api_version });
message!(MetricTarget reject [] {
    "type": r#type, "value": value, "averageValue": average_value,
    "averageUtilization": average_utilization => Pointer,
});
message!(ResourceMetricSource reject [] { "name": name, "target": target });
// What `kubectl autoscale` sets: resource metrics only (`--cpu`, `--memory`).
message!(MetricSpec reject [object, pods, container_resource, external] { "type": r#type, "resource": resource });
message!(HorizontalPodAutoscalerSpec reject [behavior] {
    "scaleTargetRef": scale_target_ref, "minReplicas": min_replicas => Pointer,
    "maxReplicas": max_replicas, "metrics": metrics,
});

/// `kubectl autoscale` (kubectl ≥ 1.33 posts autoscaling/v2).
fn horizontal_pod_autoscaler(message: HorizontalPodAutoscaler) -> Result<Value> {
    convert!(message => HorizontalPodAutoscaler reject [] {
        "metadata": metadata, "spec": spec, "status": status => server_owned,
    })
}

/// `kubectl autoscale` of kubectl 1.32, which posts autoscaling/v1 (served beside v2,
/// `kinds::autoscaling::conversion`).
mod autoscaling_v1 {
    use k8s_pb::api::autoscaling::v1::{
        CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec,
    };

    use super::*;

    message!(CrossVersionObjectReference reject [] { "kind": kind, "name": name, "apiVersion": api_version });
    message!(HorizontalPodAutoscalerSpec reject [] {
        "scaleTargetRef": scale_target_ref, "minReplicas": min_replicas => Pointer,
        "maxReplicas": max_replicas, "targetCPUUtilizationPercentage": target_cpu_utilization_percentage => Pointer,
    });

    pub(super) fn horizontal_pod_autoscaler(message: HorizontalPodAutoscaler) -> Result<Value> {
        convert!(message => HorizontalPodAutoscaler reject [] {
            "metadata": metadata, "spec": spec, "status": status => server_owned,
        })
    }
}

use batch::{Job, JobSpec};
message!(JobSpec reject [pod_failure_policy, success_policy] {
    "parallelism": parallelism => Pointer, "completions": completions => Pointer, "activeDeadlineSeconds": active_deadline_seconds => Pointer,
    "backoffLimit": backoff_limit => Pointer, "backoffLimitPerIndex": backoff_limit_per_index => Pointer,
    "maxFailedIndexes": max_failed_indexes => Pointer, "selector": selector, "manualSelector": manual_selector => Pointer,
    "template": template, "ttlSecondsAfterFinished": ttl_seconds_after_finished => Pointer,
    "completionMode": completion_mode, "suspend": suspend => Pointer, "podReplacementPolicy": pod_replacement_policy,
    "managedBy": managed_by,
});

fn job(message: Job) -> Result<Value> {
    convert!(message => Job reject [] { "metadata": metadata, "spec": spec, "status": status => server_owned })
}

use batch::{CronJob, CronJobSpec, JobTemplateSpec};
message!(JobTemplateSpec reject [] { "metadata": metadata, "spec": spec });
message!(CronJobSpec reject [] {
    "schedule": schedule, "timeZone": time_zone => Pointer,
    "startingDeadlineSeconds": starting_deadline_seconds => Pointer, "concurrencyPolicy": concurrency_policy,
    "suspend": suspend => Pointer, "jobTemplate": job_template,
    "successfulJobsHistoryLimit": successful_jobs_history_limit => Pointer,
    "failedJobsHistoryLimit": failed_jobs_history_limit => Pointer,
});

/// `kubectl create cronjob`.
fn cron_job(message: CronJob) -> Result<Value> {
    convert!(message => CronJob reject [] { "metadata": metadata, "spec": spec, "status": status => server_owned })
}

use policy::{Eviction, PodDisruptionBudget, PodDisruptionBudgetSpec};
message!(PodDisruptionBudgetSpec reject [] {
    "minAvailable": min_available, "selector": selector, "maxUnavailable": max_unavailable,
    "unhealthyPodEvictionPolicy": unhealthy_pod_eviction_policy => Pointer,
});

/// `kubectl create poddisruptionbudget`.
fn disruption_budget(message: PodDisruptionBudget) -> Result<Value> {
    convert!(message => PodDisruptionBudget reject [] {
        "metadata": metadata, "spec": spec, "status": status => server_owned,
    })
}

use k8s_pb::apimachinery::pkg::apis::meta::v1::{DeleteOptions, Preconditions};
message!(Preconditions reject [] { "uid": uid => Pointer, "resourceVersion": resource_version => Pointer });
message!(DeleteOptions reject [ignore_store_read_error_with_cluster_breaking_potential] {
    "gracePeriodSeconds": grace_period_seconds => Pointer, "preconditions": preconditions,
    "orphanDependents": orphan_dependents => Pointer, "propagationPolicy": propagation_policy => Pointer,
    "dryRun": dry_run,
});

/// The eviction `kubectl drain` posts (`policy/v1` Eviction).
fn eviction(message: Eviction) -> Result<Value> {
    convert!(message => Eviction reject [] { "metadata": metadata, "deleteOptions": delete_options })
}

// `kubectl create service clusterip|nodeport|loadbalancer|externalname` (create_service.go)
// sets ports, selector, type, clusterIP and externalName; the rest is refused, not dropped.
message!(ServiceSpec reject [external_ips, load_balancer_ip, load_balancer_source_ranges,
        external_traffic_policy, health_check_node_port, publish_not_ready_addresses,
        session_affinity_config, ip_families, ip_family_policy, allocate_load_balancer_node_ports,
        load_balancer_class, internal_traffic_policy, traffic_distribution, cluster_ips] {
    "ports": ports, "selector": selector, "clusterIP": cluster_ip, "type": r#type,
    "externalName": external_name, "sessionAffinity": session_affinity,
});
message!(ServicePort reject [] {
    "name": name, "protocol": protocol, "appProtocol": app_protocol, "port": port,
    "targetPort": target_port, "nodePort": node_port,
});

fn service(message: Service) -> Result<Value> {
    convert!(message => Service reject [] { "metadata": metadata, "spec": spec, "status": status => server_owned })
}

use rbac::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
message!(PolicyRule reject [] {
    "verbs": verbs, "apiGroups": api_groups, "resources": resources, "resourceNames": resource_names,
    "nonResourceURLs": non_resource_ur_ls,
});
message!(AggregationRule reject [] { "clusterRoleSelectors": cluster_role_selectors });
message!(Subject reject [] { "kind": kind, "apiGroup": api_group, "name": name, "namespace": namespace });
message!(RoleRef reject [] { "apiGroup": api_group, "kind": kind, "name": name });

fn cluster_role(message: ClusterRole) -> Result<Value> {
    convert!(message => ClusterRole reject [] {
        "metadata": metadata, "rules": rules, "aggregationRule": aggregation_rule,
    })
}

fn role(message: Role) -> Result<Value> {
    convert!(message => Role reject [] { "metadata": metadata, "rules": rules })
}

fn cluster_role_binding(message: ClusterRoleBinding) -> Result<Value> {
    convert!(message => ClusterRoleBinding reject [] {
        "metadata": metadata, "subjects": subjects, "roleRef": role_ref,
    })
}

fn role_binding(message: RoleBinding) -> Result<Value> {
    convert!(message => RoleBinding reject [] {
        "metadata": metadata, "subjects": subjects, "roleRef": role_ref,
    })
}

use k8s_pb::api::scheduling::v1::PriorityClass;

/// `kubectl create priorityclass`.
fn priority_class(message: PriorityClass) -> Result<Value> {
    // `value` has no omitempty (0 is sent and kept); `preemptionPolicy` is a pointer.
    convert!(message => PriorityClass reject [] {
        "metadata": metadata, "value": value => Pointer, "globalDefault": global_default,
        "description": description, "preemptionPolicy": preemption_policy => Pointer,
    })
}

use authz::{
    FieldSelectorAttributes, LabelSelectorAttributes, NonResourceAttributes, ResourceAttributes,
    SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SelfSubjectRulesReview, SelfSubjectRulesReviewSpec,
};
use k8s_pb::apimachinery::pkg::apis::meta::v1::FieldSelectorRequirement;
message!(SelfSubjectAccessReviewSpec reject [] {
    "resourceAttributes": resource_attributes, "nonResourceAttributes": non_resource_attributes,
});
message!(ResourceAttributes reject [] {
    "namespace": namespace, "verb": verb, "group": group, "version": version, "resource": resource,
    "subresource": subresource, "name": name, "fieldSelector": field_selector,
    "labelSelector": label_selector,
});
message!(NonResourceAttributes reject [] { "path": path, "verb": verb });
message!(FieldSelectorAttributes reject [] { "rawSelector": raw_selector, "requirements": requirements });
message!(LabelSelectorAttributes reject [] { "rawSelector": raw_selector, "requirements": requirements });
message!(FieldSelectorRequirement reject [] { "key": key, "operator": operator, "values": values });
message!(SelfSubjectRulesReviewSpec reject [] { "namespace": namespace });

fn access_review(message: SelfSubjectAccessReview) -> Result<Value> {
    convert!(message => SelfSubjectAccessReview reject [] {
        "metadata": metadata, "spec": spec, "status": status => server_owned,
    })
}

use k8s_pb::api::authentication::v1::SelfSubjectReview;

fn identity_review(message: SelfSubjectReview) -> Result<Value> {
    convert!(message => SelfSubjectReview reject [] {
        "metadata": metadata, "status": status => server_owned,
    })
}

fn rules_review(message: SelfSubjectRulesReview) -> Result<Value> {
    convert!(message => SelfSubjectRulesReview reject [] {
        "metadata": metadata, "spec": spec, "status": status => server_owned,
    })
}

/// Encodes `message` of `api_version`/`kind` the way kubectl does (magic + `runtime.Unknown`);
/// tests build bodies with it.
pub fn encode<M: Message>(api_version: &str, kind: &str, message: &M) -> Vec<u8> {
    let envelope = Unknown {
        type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
            api_version: Some(api_version.to_string()),
            kind: Some(kind.to_string()),
        }),
        raw: Some(message.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut body = MAGIC.to_vec();
    body.extend(envelope.encode_to_vec());
    body
}

impl From<Error> for super::status::ApiError {
    fn from(error: Error) -> Self {
        match error {
            Error::UnsupportedKind { .. } => {
                super::status::ApiError::unsupported_media_type(error.to_string())
            }
            Error::NodeDebugPod { ref name, .. } => super::status::ApiError {
                code: 403,
                reason: "Forbidden",
                details: Some(serde_json::json!({"name": name, "kind": "pods"})),
                message: error.to_string(),
            },
            _ => super::status::ApiError::bad_request(error.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bodies captured from kubectl 1.33 against the simulator (tests/fixtures/protobuf/).
    const CAPTURED: &[&str] = &[
        "namespace",
        "configmap",
        "secret",
        "quota",
        "serviceaccount",
        "deployment",
        "job",
        "selfsubjectaccessreview",
        "selfsubjectrulesreview",
    ];

    fn captured(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/fixtures/protobuf/{name}.kubectl-1.33.bin", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn kubectl_bodies_decode_to_the_json_kubectl_would_send() {
        for name in CAPTURED {
            let decoded = decode(&captured(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            insta::assert_json_snapshot!(format!("captured_{name}"), decoded);
        }
    }

    #[test]
    fn broken_bodies_are_errors_not_panics() {
        let body = captured("deployment");
        for cut in 0..body.len() {
            // Every prefix either decodes (protobuf prefixes can be valid messages) or errs.
            let _ = decode(&body[..cut]);
        }
        assert!(matches!(decode(b"{\"kind\":\"Namespace\"}"), Err(Error::Magic)));
        assert!(matches!(decode(b"k8s\0\xff\xff"), Err(Error::Decode { .. })));
        let mut flipped = body.clone();
        flipped[40] ^= 0xff;
        let _ = decode(&flipped);
    }

    #[test]
    fn a_job_made_from_a_cronjob_keeps_its_env_from() {
        use k8s_pb::api::core::v1::{PodSpec, PodTemplateSpec};
        let container = Container {
            name: Some("grade".into()),
            image: Some("lab-runner".into()),
            env_from: vec![EnvFromSource {
                prefix: None,
                config_map_ref: Some(ConfigMapEnvSource {
                    local_object_reference: Some(LocalObjectReference {
                        name: Some("class-settings".into()),
                    }),
                    optional: None,
                }),
                secret_ref: Some(SecretEnvSource {
                    local_object_reference: Some(LocalObjectReference { name: Some("token".into()) }),
                    optional: Some(true),
                }),
            }],
            ..Default::default()
        };
        let job = batch::Job {
            spec: Some(batch::JobSpec {
                template: Some(PodTemplateSpec {
                    spec: Some(PodSpec { containers: vec![container], ..Default::default() }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let decoded = decode(&encode("batch/v1", "Job", &job)).unwrap();
        assert_eq!(
            decoded["spec"]["template"]["spec"]["containers"][0]["envFrom"],
            json!([{"configMapRef": {"name": "class-settings"}, "secretRef": {"name": "token", "optional": true}}])
        );
    }

    #[test]
    fn unknown_kinds_and_unconverted_fields_are_refused() {
        let pod = k8s_pb::api::core::v1::Pod::default();
        let error = decode(&encode("v1", "Pod", &pod)).unwrap_err();
        assert!(matches!(error, Error::UnsupportedKind { .. }), "{error}");
        let mut deployment = apps::Deployment::decode(
            Unknown::decode(&captured("deployment")[4..]).unwrap().raw.unwrap().as_slice(),
        )
        .unwrap();
        let template = deployment.spec.as_mut().unwrap().template.as_mut().unwrap();
        template.spec.as_mut().unwrap().containers[0].liveness_probe = Some(Default::default());
        assert!(decode(&encode("apps/v1", "Deployment", &deployment)).is_ok(), "an empty probe is unset");
        let template = deployment.spec.as_mut().unwrap().template.as_mut().unwrap();
        template.spec.as_mut().unwrap().containers[0].liveness_probe =
            Some(k8s_pb::api::core::v1::Probe { period_seconds: Some(5), ..Default::default() });
        assert_eq!(
            decode(&encode("apps/v1", "Deployment", &deployment)).unwrap_err().to_string(),
            "Container.liveness_probe is not supported in protobuf bodies by the simulator; send application/json"
        );
    }

    #[test]
    fn pointer_zeros_survive_and_plain_zeros_are_omitted() {
        let mut deployment = apps::Deployment::decode(
            Unknown::decode(&captured("deployment")[4..]).unwrap().raw.unwrap().as_slice(),
        )
        .unwrap();
        deployment.spec.as_mut().unwrap().replicas = Some(0);
        deployment.spec.as_mut().unwrap().min_ready_seconds = Some(0);
        let json = decode(&encode("apps/v1", "Deployment", &deployment)).unwrap();
        assert_eq!(json["spec"]["replicas"], 0);
        assert!(json["spec"].get("minReadySeconds").is_none());
        assert!(json["metadata"].get("creationTimestamp").is_none());
    }
}
