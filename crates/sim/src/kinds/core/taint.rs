//! Taints (a Node's) and tolerations (a pod spec's), as core validation checks them.
//!
//! Upstream: pkg/apis/core/validation/validation.go `validateNodeTaints`, `ValidateTolerations`,
//! `validateTaintEffect`; keys by apimachinery `ValidateLabelName` (`IsQualifiedName`), values
//! by `IsValidLabelValue`.

use serde_json::Value;

use crate::kinds::{
    field::{Cause, go_value, invalid, not_supported, required},
    objectmeta::{label_value_errors, qualified_name_errors},
};

/// The effects a taint may have (`TaintEffectNoScheduleNoAdmit` is not offered upstream).
const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// `validateTaintEffect`: one of [`EFFECTS`]; empty is `Required` unless `allow_empty`.
fn validate_effect(effect: &Value, allow_empty: bool, path: &str, causes: &mut Vec<Cause>) {
    if text(effect).is_empty() {
        if !allow_empty {
            causes.push(required(path, ""));
        }
        return;
    }
    if !EFFECTS.contains(&text(effect)) {
        causes.push(not_supported(path, effect, EFFECTS));
    }
}

fn validate_key(key: &str, path: &str, causes: &mut Vec<Cause>) {
    for error in qualified_name_errors(key) {
        causes.push(invalid(path, &format!("{key:?}"), &error));
    }
}

/// `validateNodeTaints` on `spec.taints`: key, value and effect of each, unique by key and
/// effect (`field.Duplicate` on the taint, with upstream's detail).
pub(crate) fn validate_taints(taints: &Value, causes: &mut Vec<Cause>) {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, taint) in taints.as_array().into_iter().flatten().enumerate() {
        let path = format!("spec.taints[{i}]");
        let (key, effect) = (text(&taint["key"]), text(&taint["effect"]));
        validate_key(key, &format!("{path}.key"), causes);
        let errors = label_value_errors(text(&taint["value"]));
        if !errors.is_empty() {
            causes.push(invalid(format!("{path}.value"), &go_value(&taint["value"]), &errors.join(";")));
        }
        validate_effect(&taint["effect"], false, &format!("{path}.effect"), causes);
        if seen.contains(&(key, effect)) {
            causes.push(Cause {
                reason: "FieldValueDuplicate".into(),
                message: format!(
                    "Duplicate value: core.Taint{{Key:{key:?}, Value:{:?}, Effect:{effect:?}, TimeAdded:(*v1.Time)(nil)}}: taints must be unique by key and effect pair",
                    text(&taint["value"])
                ),
                field: path,
            });
            continue;
        }
        seen.push((key, effect));
    }
}

/// `ValidateTolerations` on the pod spec at `path`: key, operator and value, and effect (empty
/// matches every effect).
pub(crate) fn validate_tolerations(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    for (i, toleration) in spec["tolerations"].as_array().into_iter().flatten().enumerate() {
        let path = format!("{path}.tolerations[{i}]");
        let key = text(&toleration["key"]);
        let operator = text(&toleration["operator"]);
        if !key.is_empty() {
            validate_key(key, &format!("{path}.key"), causes);
        }
        if key.is_empty() && operator != "Exists" {
            causes.push(invalid(
                format!("{path}.operator"),
                &format!("{operator:?}"),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if !toleration["tolerationSeconds"].is_null() && text(&toleration["effect"]) != "NoExecute" {
            causes.push(invalid(
                format!("{path}.effect"),
                &go_value(&toleration["effect"]),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "" | "Equal" => {
                let errors = label_value_errors(text(&toleration["value"]));
                if !errors.is_empty() {
                    let value = format!("{:?}", text(&toleration["value"]));
                    causes.push(invalid(format!("{path}.operator"), &value, &errors.join(";")));
                }
            }
            "Exists" => {
                if !text(&toleration["value"]).is_empty() {
                    causes.push(invalid(
                        format!("{path}.operator"),
                        &go_toleration(toleration),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            _ => causes.push(not_supported(
                format!("{path}.operator"),
                &toleration["operator"],
                &["Equal", "Exists"],
            )),
        }
        validate_effect(&toleration["effect"], true, &format!("{path}.effect"), causes);
    }
}

/// `%#v` of a `core.Toleration`.
fn go_toleration(toleration: &Value) -> String {
    let seconds = match toleration["tolerationSeconds"].as_i64() {
        Some(_) => "(*int64)(0xc000000000)".to_string(),
        None => "(*int64)(nil)".to_string(),
    };
    format!(
        "core.Toleration{{Key:{:?}, Operator:{:?}, Value:{:?}, Effect:{:?}, TolerationSeconds:{seconds}}}",
        text(&toleration["key"]),
        text(&toleration["operator"]),
        text(&toleration["value"]),
        text(&toleration["effect"])
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(check: impl FnOnce(&mut Vec<Cause>)) -> Vec<String> {
        let mut causes = Vec::new();
        check(&mut causes);
        causes.iter().map(Cause::to_string).collect()
    }

    /// validation_test.go `TestValidateNode` ("invalid-taint-effect", "missing-taint-key",
    /// "duplicated-taints-with-same-key-effect") and `TestValidateTolerations`
    /// ("invalid toleration effect").
    #[test]
    fn taints_and_tolerations_follow_upstream() {
        let taints = json!([{"key": "dedicated", "value": "gpu", "effect": "Bogus"}, {"key": "", "effect": "NoSchedule"},
                            {"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "b", "effect": "NoSchedule"}]);
        let found = messages(|c| validate_taints(&taints, c));
        assert_eq!(
            found[0],
            "spec.taints[0].effect: Unsupported value: \"Bogus\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
        );
        assert_eq!(found[1], "spec.taints[1].key: Invalid value: \"\": name part must be non-empty");
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found[3].starts_with("spec.taints[3]: Duplicate value: core.Taint{Key:\"a\""), "{found:?}");
        let spec = json!({"tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "Bogus"},
                                          {"operator": "Equal"}]});
        assert_eq!(
            messages(|c| validate_tolerations(&spec, "spec", c)),
            [
                "spec.tolerations[0].effect: Unsupported value: \"Bogus\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                "spec.tolerations[1].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ]
        );
    }
}
