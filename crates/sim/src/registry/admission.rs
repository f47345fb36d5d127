//! Admission inside the registry's transaction: the kind's defaults and validation, and the
//! admission plugins kube-apiserver enables by default that the simulator models.
//!
//! Order as upstream's (`k8s.io/apiserver/pkg/registry/rest/create.go` `BeforeCreate`:
//! defaulting at decode, then the mutating plugins, `PrepareForCreate`, `Validate`, then the
//! validating plugins): the Priority and RuntimeClass plugins ([`admit_pod`], mutating, on a pod
//! create), the kind's defaults and validation ([`admit`]), then ResourceQuota
//! ([`charge_quotas`], validating, charged in the same transaction as the create).

use serde_json::{Value, json};

use super::quota;
use crate::{
    kinds::{self, Cause, NameRule, field::required, objectmeta},
    resources::ResourceType,
    store::{Error, Result, Txn},
};

/// Group-resources the pod admission plugins read.
const PRIORITY_CLASSES: &str = "priorityclasses.scheduling.k8s.io";
const RUNTIME_CLASSES: &str = "runtimeclasses.node.k8s.io";

/// The API defaults of `object`, an object of `rt` (its kind's `SetDefaults_<Kind>` and
/// quantities in canonical spelling), on create and update.
pub fn apply_defaults(rt: &ResourceType, object: &mut Value) {
    if object.is_object() {
        kinds::apply_defaults(rt.strategy(), object);
    }
}

/// The 422 causes of `object`, an object of `rt` about to be stored (`old` is the stored one
/// on update): ObjectMeta's, then its kind's `Validate`/`ValidateUpdate`; empty when valid.
pub fn validate(rt: &ResourceType, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let strategy = rt.strategy();
    let mut causes = validate_object_meta(rt, strategy.name_rule(), object);
    causes.extend(strategy.validate(object, old));
    causes
}

/// `ValidateObjectMeta` as every write runs it: a name (or `generateName`), the namespace of a
/// namespaced kind, then the names, labels and annotations (`kinds::objectmeta`).
fn validate_object_meta(rt: &ResourceType, rule: NameRule, object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let generate = object.pointer("/metadata/generateName").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() && generate.is_empty() {
        causes.push(required("metadata.name", "name or generateName is required"));
    }
    if rt.namespaced()
        && object.pointer("/metadata/namespace").is_some_and(|n| n.as_str().is_none_or(str::is_empty))
    {
        causes.push(required("metadata.namespace", ""));
    }
    causes.extend(objectmeta::validate(rule, object));
    causes
}

/// The `Status.message` of a 422 Invalid: `DaemonSet.apps "x" is invalid: <errors>`, with
/// several errors aggregated as `[e1, e2]` (apimachinery/pkg/api/errors `NewInvalid`).
pub fn invalid_message(rt: &ResourceType, name: &str, causes: &[Cause]) -> String {
    kinds::field::invalid_message(&rt.group, &rt.kind, name, causes)
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// The 422 Invalid error of `causes` for an object of `rt` named `name`.
pub(super) fn invalid(rt: &ResourceType, name: &str, causes: Vec<Cause>) -> Error {
    Error::Invalid {
        qualified_kind: if rt.group.is_empty() {
            rt.kind.clone()
        } else {
            format!("{}.{}", rt.kind, rt.group)
        },
        kind: rt.kind.clone(),
        group: rt.group.clone(),
        name: name.to_string(),
        causes,
    }
}

/// Defaults then validates `object` (`old`: the stored object on update); 422 with every
/// cause found.
pub(super) fn admit(rt: &ResourceType, object: &mut Value, old: Option<&Value>) -> Result<()> {
    apply_defaults(rt, object);
    let causes = validate(rt, object, old);
    if causes.is_empty() { Ok(()) } else { Err(invalid(rt, name_of(object), causes)) }
}

/// The mutating plugins on an object about to be created: on a pod, Priority and RuntimeClass
/// ([`admit_pod`], reading the classes from the transaction); their refusal is a 403.
pub(super) fn mutate_on_create(txn: &Txn<'_>, group_resource: &str, pod: &mut Value) -> Result<()> {
    if group_resource != "pods" {
        return Ok(());
    }
    let get =
        |group_resource: &str, name: &str| txn.get(group_resource, "", name).and_then(|s| s.value().ok());
    let list = |group_resource: &str| -> Vec<Value> {
        txn.list_in(group_resource, "").iter().filter_map(|s| s.value().ok()).collect()
    };
    admit_pod(pod, &get, &list).map_err(|message| Error::Forbidden {
        resource: group_resource.to_string(),
        name: name_of(pod).to_string(),
        message,
    })
}

/// The validating plugins that read other objects, on a create (`old` None) or an update of
/// `object`: `Priority`'s `validatePriorityClass` (plugin/pkg/admission/priority/admission.go)
/// refuses a second `globalDefault` PriorityClass, created or marked on another class, with a
/// 403 naming the class that already is the default (the lowest-valued one when a race left
/// several, as `getDefaultPriorityClass` picks).
pub(super) fn validate_on_write(
    txn: &Txn<'_>,
    group_resource: &str,
    object: &Value,
    old: Option<&Value>,
) -> Result<()> {
    if group_resource != PRIORITY_CLASSES || object["globalDefault"] != true {
        return Ok(());
    }
    let name = name_of(object);
    let default = txn
        .list_in(PRIORITY_CLASSES, "")
        .iter()
        .filter_map(|s| s.value().ok())
        .filter(|class| class["globalDefault"] == true)
        .min_by_key(|class| class["value"].as_i64().unwrap_or(0));
    match default {
        Some(default) if old.is_none() || name_of(&default) != name => Err(Error::Forbidden {
            resource: group_resource.to_string(),
            name: name.to_string(),
            message: format!(
                "PriorityClass {} is already marked as default. Only one default can exist",
                name_of(&default)
            ),
        }),
        _ => Ok(()),
    }
}

/// The mutating pod admission plugins that read other objects, run on a pod create before
/// defaulting: `Priority` (plugin/pkg/admission/priority/admission.go: the class's value and
/// preemption policy into the pod, else the lowest global default, else 0) and `RuntimeClass`
/// (plugin/pkg/admission/runtimeclass/admission.go: the class must exist; its overhead,
/// nodeSelector and tolerations join the pod's). `get` reads a cluster-scoped object by
/// group-resource and name, `list` lists one. An `Err` is the Forbidden reason.
pub fn admit_pod(
    pod: &mut Value,
    get: &dyn Fn(&str, &str) -> Option<Value>,
    list: &dyn Fn(&str) -> Vec<Value>,
) -> Result<(), String> {
    admit_priority(pod, get, list)?;
    admit_runtime_class(pod, get)
}

fn admit_priority(
    pod: &mut Value,
    get: &dyn Fn(&str, &str) -> Option<Value>,
    list: &dyn Fn(&str) -> Vec<Value>,
) -> Result<(), String> {
    let spec = &mut pod["spec"];
    let (class_name, priority, preemption) = match spec["priorityClassName"]
        .as_str()
        .filter(|n| !n.is_empty())
    {
        Some(name) => {
            let class = get(PRIORITY_CLASSES, name)
                .ok_or_else(|| format!("no PriorityClass with name {name} was found"))?;
            (Some(name.to_string()), class["value"].as_i64().unwrap_or(0), class["preemptionPolicy"].clone())
        }
        None => {
            // `getDefaultPriority`: the global default with the lowest value.
            let default = list(PRIORITY_CLASSES)
                .into_iter()
                .filter(|class| class["globalDefault"] == true)
                .min_by_key(|class| class["value"].as_i64().unwrap_or(0));
            match default {
                Some(class) => (
                    class["metadata"]["name"].as_str().map(str::to_string),
                    class["value"].as_i64().unwrap_or(0),
                    class["preemptionPolicy"].clone(),
                ),
                None => (None, 0, json!("PreemptLowerPriority")),
            }
        }
    };
    if let Some(given) = spec["priority"].as_i64().filter(|given| *given != priority) {
        return Err(format!(
            "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
        ));
    }
    if let (Some(given), Some(computed)) = (spec["preemptionPolicy"].as_str(), preemption.as_str())
        && given != computed
    {
        return Err(format!(
            "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {computed} from the given PriorityClass name"
        ));
    }
    if let Some(name) = class_name {
        spec["priorityClassName"] = json!(name);
    }
    spec["priority"] = json!(priority);
    if preemption.is_string() {
        spec["preemptionPolicy"] = preemption;
    }
    Ok(())
}

fn admit_runtime_class(pod: &mut Value, get: &dyn Fn(&str, &str) -> Option<Value>) -> Result<(), String> {
    let Some(name) = pod["spec"]["runtimeClassName"].as_str().filter(|n| !n.is_empty()).map(str::to_string)
    else {
        if pod["spec"]["overhead"].as_object().is_some_and(|o| !o.is_empty()) {
            return Err(
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead".into()
            );
        }
        return Ok(());
    };
    let class = get(RUNTIME_CLASSES, &name)
        .ok_or_else(|| format!("pod rejected: RuntimeClass {name:?} not found"))?;
    let spec = &mut pod["spec"];
    // `setOverhead`.
    if let Some(fixed) = class["overhead"]["podFixed"].as_object() {
        if spec["overhead"].as_object().is_some_and(|o| !o.is_empty())
            && spec["overhead"] != class["overhead"]["podFixed"]
        {
            return Err("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead".into());
        }
        spec["overhead"] = json!(fixed);
    }
    // `setScheduling`: a nodeSelector key the pod sets otherwise is a conflict.
    if let Some(selector) = class["scheduling"]["nodeSelector"].as_object() {
        if !spec["nodeSelector"].is_object() {
            spec["nodeSelector"] = json!({});
        }
        for (key, value) in selector {
            match spec["nodeSelector"].get(key) {
                Some(pod_value) if pod_value != value => {
                    return Err(format!(
                        "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                        value.as_str().unwrap_or_default(),
                        pod_value.as_str().unwrap_or_default()
                    ));
                }
                _ => spec["nodeSelector"][key] = value.clone(),
            }
        }
    }
    // `tolerations.MergeTolerations`: the class's tolerations the pod does not have yet.
    if let Some(tolerations) = class["scheduling"]["tolerations"].as_array() {
        if !spec["tolerations"].is_array() {
            spec["tolerations"] = json!([]);
        }
        if let Some(list) = spec["tolerations"].as_array_mut() {
            for toleration in tolerations {
                if !list.contains(toleration) {
                    list.push(toleration.clone());
                }
            }
        }
    }
    Ok(())
}

/// ResourceQuota admission, a validating plugin: after name generation and validation, in the
/// same transaction as the create, so the quotas' `status.used` is charged atomically (upstream
/// CAS-updates the quota before the object is stored). A dry run discards both.
pub(super) fn charge_quotas(
    txn: &mut Txn<'_>,
    group_resource: &str,
    namespace: &str,
    object: &Value,
) -> Result<()> {
    // `QuotaAdmission.Validate`: cluster-scoped objects and namespaces are not quota'd.
    if namespace.is_empty() {
        return Ok(());
    }
    let quotas = txn.list_in("resourcequotas", namespace);
    if quotas.is_empty() {
        return Ok(());
    }
    let quotas = quotas.iter().map(|stored| stored.value()).collect::<Result<Vec<_>>>()?;
    let charged =
        quota::admit(group_resource, object, &quotas, txn.now).map_err(|error| Error::Forbidden {
            resource: group_resource.to_string(),
            name: name_of(object).to_string(),
            message: error.to_string(),
        })?;
    for quota in charged {
        txn.put("resourcequotas", quota)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admit(pod: &mut Value, objects: &[Value]) -> Result<(), String> {
        let get = |group_resource: &str, name: &str| {
            objects
                .iter()
                .find(|o| o["kind"] == kind_of(group_resource) && o["metadata"]["name"] == name)
                .cloned()
        };
        let list = |group_resource: &str| -> Vec<Value> {
            objects.iter().filter(|o| o["kind"] == kind_of(group_resource)).cloned().collect()
        };
        admit_pod(pod, &get, &list)
    }

    fn kind_of(group_resource: &str) -> &'static str {
        if group_resource == PRIORITY_CLASSES { "PriorityClass" } else { "RuntimeClass" }
    }

    fn class(name: &str, value: i64, global_default: bool) -> Value {
        json!({"kind": "PriorityClass", "metadata": {"name": name}, "value": value, "globalDefault": global_default,
               "preemptionPolicy": "PreemptLowerPriority"})
    }

    #[test]
    fn a_pod_takes_its_priority_from_its_class_or_the_lowest_global_default() {
        let classes = [class("high", 1000, false), class("low", 5, true), class("lower", 1, true)];
        let mut pod = json!({"spec": {"priorityClassName": "high"}});
        admit(&mut pod, &classes).unwrap();
        assert_eq!(
            (&pod["spec"]["priority"], &pod["spec"]["preemptionPolicy"]),
            (&json!(1000), &json!("PreemptLowerPriority"))
        );
        let mut plain = json!({"spec": {}});
        admit(&mut plain, &classes).unwrap();
        assert_eq!(
            (&plain["spec"]["priority"], &plain["spec"]["priorityClassName"]),
            (&json!(1), &json!("lower"))
        );
        let mut none = json!({"spec": {}});
        admit(&mut none, &[]).unwrap();
        assert_eq!(none["spec"]["priority"], json!(0));
        assert!(none["spec"].get("priorityClassName").is_none());
        let mut unknown = json!({"spec": {"priorityClassName": "nope"}});
        assert_eq!(admit(&mut unknown, &classes).unwrap_err(), "no PriorityClass with name nope was found");
        let mut preset = json!({"spec": {"priorityClassName": "high", "priority": 7}});
        assert_eq!(
            admit(&mut preset, &classes).unwrap_err(),
            "the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"
        );
    }

    #[test]
    fn a_runtime_class_must_exist_and_brings_its_scheduling_and_overhead() {
        let nvidia = json!({"kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia",
                            "overhead": {"podFixed": {"memory": "100Mi"}},
                            "scheduling": {"nodeSelector": {"nvidia.com/gpu.present": "true"},
                                           "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}});
        let mut missing = json!({"spec": {"runtimeClassName": "nvidia"}});
        assert_eq!(admit(&mut missing, &[]).unwrap_err(), "pod rejected: RuntimeClass \"nvidia\" not found");
        let mut pod = json!({"spec": {"runtimeClassName": "nvidia", "nodeSelector": {"zone": "a"}}});
        admit(&mut pod, std::slice::from_ref(&nvidia)).unwrap();
        assert_eq!(pod["spec"]["nodeSelector"], json!({"zone": "a", "nvidia.com/gpu.present": "true"}));
        assert_eq!(pod["spec"]["tolerations"][0]["key"], json!("nvidia.com/gpu"));
        assert_eq!(pod["spec"]["overhead"], json!({"memory": "100Mi"}));
        let mut conflict = json!({"spec": {"runtimeClassName": "nvidia", "nodeSelector": {"nvidia.com/gpu.present": "false"}}});
        assert_eq!(
            admit(&mut conflict, &[nvidia]).unwrap_err(),
            "conflict: runtimeClass.scheduling.nodeSelector[nvidia.com/gpu.present] = true; pod.spec.nodeSelector[nvidia.com/gpu.present] = false"
        );
    }
}
