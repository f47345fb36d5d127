//! `x-kubernetes-validations` rules: compiled when a CRD is written, evaluated on every custom resource write.
//!
//! apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go` (`Validator.Validate`,
//! `validateExpressions`, `fieldErrorForReason`, `ruleMessageOrDefault`) and
//! `pkg/apis/apiextensions/validation/validation.go` (a rule that does not compile refuses the
//! CRD: `compilation failed: …`). `self` is the value at the rule's node, typed by its schema;
//! `oldSelf` the correlated stored value on update (object properties by name, `map` list items
//! by their keys). A rule using `oldSelf` runs only when an old value exists, unless it sets
//! `optionalOldSelf`, when `oldSelf` is an optional. As with upstream's validation ratcheting, a
//! node whose value is unchanged on update is not re-validated. Evaluation is bounded per call by
//! [`cel::PER_CALL_COST_LIMIT`] and per object by [`RUNTIME_COST_BUDGET`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::{FieldError, Reason, gofmt};
use crate::k8s::cel::{self, Bindings, Expression};

/// kube-apiserver's `RuntimeCELCostBudget` (`k8s.io/apiserver/pkg/apis/cel/config.go`): all the
/// rules of one object together.
pub const RUNTIME_COST_BUDGET: u64 = 10_000_000;

/// One compiled rule and what its author declared around it.
#[derive(Debug)]
struct Rule {
    rule: String,
    expression: Expression,
    message: String,
    message_expression: Option<Expression>,
    reason: Option<String>,
    field_path: String,
    optional_old_self: bool,
}

impl Rule {
    /// `ruleErrorString`: the message if any, else the rule.
    fn error_string(&self) -> &str {
        if self.message.trim().is_empty() { self.rule.trim() } else { self.message.trim() }
    }

    /// `ruleMessageOrDefault`.
    fn message_or_default(&self) -> String {
        if self.message.trim().is_empty() {
            format!("failed rule: {}", self.error_string())
        } else {
            self.message.trim().to_string()
        }
    }
}

/// The compiled rules of a schema, as a tree that follows the schema where rules are.
#[derive(Debug, Default)]
pub struct Compiled {
    rules: Vec<Rule>,
    properties: BTreeMap<String, Compiled>,
    items: Option<Box<Compiled>>,
    additional: Option<Box<Compiled>>,
}

impl Compiled {
    /// Compiles every rule of `schema`; rules that do not compile are left out (the CRD that
    /// carried them was refused by [`validate_definition`]).
    pub fn of(schema: &Value) -> Self {
        let mut compiled = Compiled::default();
        if !schema.is_object() {
            return compiled;
        }
        for declared in schema["x-kubernetes-validations"].as_array().into_iter().flatten() {
            if let Ok(rule) = compile(declared) {
                compiled.rules.push(rule);
            }
        }
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            let child = Compiled::of(property);
            if !child.is_empty() {
                compiled.properties.insert(name.clone(), child);
            }
        }
        let nested = |schema: &Value| Some(Box::new(Compiled::of(schema))).filter(|c| !c.is_empty());
        compiled.items = nested(&schema["items"]);
        compiled.additional = nested(&schema["additionalProperties"]);
        compiled
    }

    /// True when the schema has no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.properties.is_empty()
            && self.items.is_none()
            && self.additional.is_none()
    }

    /// The rules' errors for `object` (`old`: the stored object on update).
    pub fn validate(&self, schema: &Value, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut run = Run { errors: Vec::new(), spent: 0, out_of_budget: false };
        run.node(self, schema, object, old, "<nil>");
        run.errors
    }
}

fn compile(declared: &Value) -> Result<Rule, String> {
    let text = |key: &str| declared[key].as_str().unwrap_or_default().to_string();
    let rule = text("rule");
    let expression =
        Expression::compile(&rule, &["self", "oldSelf"]).map_err(|e| format!("compilation failed: {e}"))?;
    let message_expression = match declared["messageExpression"].as_str().filter(|m| !m.is_empty()) {
        Some(source) => Some(
            Expression::compile(source, &["self", "oldSelf"])
                .map_err(|e| format!("messageExpression compilation failed: {e}"))?,
        ),
        None => None,
    };
    Ok(Rule {
        rule,
        expression,
        message: text("message"),
        message_expression,
        reason: declared["reason"].as_str().map(str::to_string),
        field_path: text("fieldPath").trim_start_matches('.').to_string(),
        optional_old_self: declared["optionalOldSelf"] == true,
    })
}

struct Run {
    errors: Vec<FieldError>,
    spent: u64,
    out_of_budget: bool,
}

fn child_path(path: &str, key: &str) -> String {
    if path == "<nil>" { key.to_string() } else { format!("{path}.{key}") }
}

/// The schema's `type` as upstream reports it as the bad value (`sts.Type`).
fn type_of(schema: &Value) -> String {
    gofmt::quote(schema["type"].as_str().unwrap_or_default())
}

impl Run {
    fn node(&mut self, compiled: &Compiled, schema: &Value, value: &Value, old: Option<&Value>, path: &str) {
        if self.out_of_budget || value.is_null() {
            return;
        }
        // Ratcheting: an unchanged value is not validated again.
        if old.is_some_and(|old| old == value) {
            return;
        }
        for rule in &compiled.rules {
            if self.out_of_budget {
                return;
            }
            self.rule(rule, schema, value, old, path);
        }
        match value {
            Value::Object(fields) => {
                for (key, field) in fields {
                    let old_field = old.and_then(|o| o.get(key));
                    if let Some(property) = compiled.properties.get(key) {
                        self.node(
                            property,
                            &schema["properties"][key],
                            field,
                            old_field,
                            &child_path(path, key),
                        );
                    } else if let Some(additional) = &compiled.additional {
                        let field_path = format!("{path}[{key}]");
                        self.node(additional, &schema["additionalProperties"], field, old_field, &field_path);
                    }
                }
            }
            Value::Array(items) => {
                let Some(item_rules) = &compiled.items else { return };
                for (index, item) in items.iter().enumerate() {
                    let old_item = old.and_then(|o| correlated_item(schema, item, o));
                    self.node(item_rules, &schema["items"], item, old_item, &format!("{path}[{index}]"));
                }
            }
            _ => {}
        }
    }

    fn rule(&mut self, rule: &Rule, schema: &Value, value: &Value, old: Option<&Value>, path: &str) {
        let transition = rule.expression.uses("oldSelf");
        if transition && old.is_none() && !rule.optional_old_self {
            return;
        }
        let mut bindings = Bindings::new().typed("self", value, schema);
        if rule.optional_old_self {
            bindings = bindings.optional_typed("oldSelf", old, schema);
        } else if let Some(old) = old {
            bindings = bindings.typed("oldSelf", old, schema);
        }
        // A call is cancelled at the per-call limit, so it charges the budget at most that much.
        let cost = rule.expression.estimated_cost(&bindings).min(cel::PER_CALL_COST_LIMIT);
        self.spent = self.spent.saturating_add(cost);
        if self.spent > RUNTIME_COST_BUDGET {
            self.out_of_budget = true;
            let detail = "validation failed due to running out of cost budget, no further validation rules will be run";
            self.errors.push(FieldError::new(Reason::Invalid, path, Some(type_of(schema)), detail));
            return;
        }
        let field =
            if rule.field_path.is_empty() { path.to_string() } else { child_path(path, &rule.field_path) };
        match rule.expression.evaluate_bool(&bindings) {
            Ok(true) => {}
            Ok(false) => {
                let detail = self.message(rule, &bindings);
                self.errors.push(error_for_reason(rule.reason.as_deref(), &field, type_of(schema), detail));
            }
            Err(cel::Error::CostLimit { .. }) => {
                let detail = format!("call cost exceeds limit for rule: {}", rule.error_string());
                self.errors.push(FieldError::new(Reason::Invalid, path, Some(type_of(schema)), detail));
            }
            Err(error) => {
                let detail = format!("{}: {error}", rule.error_string());
                self.errors.push(FieldError::new(Reason::Invalid, path, Some(type_of(schema)), detail));
            }
        }
    }

    /// The failed rule's message: `messageExpression`'s string when it evaluates to a non-empty
    /// single line, else `message`, else `failed rule: <rule>`.
    fn message(&mut self, rule: &Rule, bindings: &Bindings) -> String {
        if let Some(expression) = &rule.message_expression {
            self.spent = self.spent.saturating_add(expression.estimated_cost(bindings));
            if let Ok(text) = expression.evaluate_string(bindings)
                && !text.trim().is_empty()
                && !text.contains('\n')
            {
                return text.trim().to_string();
            }
        }
        rule.message_or_default()
    }
}

/// `fieldErrorForReason`: the declared `reason` picks the error type.
fn error_for_reason(reason: Option<&str>, field: &str, value: String, detail: String) -> FieldError {
    match reason {
        Some("FieldValueForbidden") => FieldError::new(Reason::Forbidden, field, None, detail),
        Some("FieldValueRequired") => FieldError::new(Reason::Required, field, None, detail),
        Some("FieldValueDuplicate") => FieldError::new(Reason::Duplicate, field, Some(value), ""),
        _ => FieldError::new(Reason::Invalid, field, Some(value), detail),
    }
}

/// The stored item an item of a `map` list corresponds to: the one with the same keys.
fn correlated_item<'a>(schema: &Value, item: &Value, old: &'a Value) -> Option<&'a Value> {
    if schema["x-kubernetes-list-type"] != "map" {
        return None;
    }
    let keys = super::openapi::list_map_keys(schema);
    old.as_array()?.iter().find(|candidate| keys.iter().all(|k| candidate.get(*k) == item.get(*k)))
}

/// The errors of a CRD whose rules do not compile, at upstream's paths:
/// `spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`.
pub fn validate_definition(crd: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (index, version) in crd["spec"]["versions"].as_array().into_iter().flatten().enumerate() {
        let path = format!("spec.versions[{index}].schema.openAPIV3Schema");
        definition_node(&version["schema"]["openAPIV3Schema"], &path, &mut errors);
    }
    errors
}

fn definition_node(schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    for (index, declared) in schema["x-kubernetes-validations"].as_array().into_iter().flatten().enumerate() {
        if let Err(detail) = compile(declared) {
            let field = if detail.starts_with("messageExpression") { "messageExpression" } else { "rule" };
            let path = format!("{path}.x-kubernetes-validations[{index}].{field}");
            errors.push(FieldError::new(Reason::Invalid, path, Some(go_validation_rule(declared)), detail));
        }
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        definition_node(property, &format!("{path}.properties[{name}]"), errors);
    }
    if schema["items"].is_object() {
        definition_node(&schema["items"], &format!("{path}.items"), errors);
    }
    if schema["additionalProperties"].is_object() {
        definition_node(&schema["additionalProperties"], &format!("{path}.additionalProperties"), errors);
    }
}

/// `%#v` of the internal `apiextensions.ValidationRule` upstream reports as the bad value.
fn go_validation_rule(declared: &Value) -> String {
    let text = |key: &str| gofmt::quote(declared[key].as_str().unwrap_or_default());
    let reason = match declared["reason"].as_str() {
        Some(reason) => format!("(*apiextensions.FieldValueErrorReason)({reason:?})"),
        None => "(*apiextensions.FieldValueErrorReason)(nil)".into(),
    };
    let optional = match declared["optionalOldSelf"].as_bool() {
        Some(flag) => format!("(*bool)({flag})"),
        None => "(*bool)(nil)".into(),
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{optional}}}",
        text("rule"),
        text("message"),
        text("messageExpression"),
        text("fieldPath"),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors(schema: &Value, object: &Value, old: Option<&Value>) -> Vec<String> {
        Compiled::of(schema).validate(schema, object, old).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn root_rules_report_no_field_and_transition_rules_need_an_old_value() {
        // cel/validation_test.go TestValidationExpressions: a rule at the root, a transition rule
        let schema = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "self.a < 5"}, {"rule": "self.a >= oldSelf.a", "message": "a may not decrease"}],
            "properties": {"a": {"type": "integer"}}});
        assert_eq!(
            errors(&schema, &json!({"a": 7}), None),
            [r#"<nil>: Invalid value: "object": failed rule: self.a < 5"#]
        );
        assert_eq!(
            errors(&schema, &json!({"a": 1}), Some(&json!({"a": 2}))),
            [r#"<nil>: Invalid value: "object": a may not decrease"#]
        );
        assert!(errors(&schema, &json!({"a": 2}), Some(&json!({"a": 2}))).is_empty(), "unchanged: ratcheted");
    }

    #[test]
    fn optional_old_self_runs_on_create_too() {
        let schema = json!({"type": "integer", "x-kubernetes-validations": [
            {"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "optionalOldSelf": true, "message": "create"},
            {"rule": "oldSelf.hasValue()", "optionalOldSelf": true, "message": "needs an old value"}]});
        assert_eq!(
            errors(&schema, &json!(1), None),
            [r#"<nil>: Invalid value: "integer": needs an old value"#]
        );
        assert_eq!(
            errors(&schema, &json!(1), Some(&json!(2))),
            [r#"<nil>: Invalid value: "integer": create"#]
        );
    }

    #[test]
    fn map_list_items_correlate_by_key() {
        let schema = json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                      "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port", "message": "port is immutable"}]}});
        let old = json!([{"name": "a", "port": 1}, {"name": "b", "port": 2}]);
        let new = json!([{"name": "b", "port": 3}, {"name": "a", "port": 1}, {"name": "c", "port": 9}]);
        assert_eq!(
            errors(&schema, &new, Some(&old)),
            [r#"<nil>[0]: Invalid value: "object": port is immutable"#]
        );
    }

    #[test]
    fn the_object_budget_stops_further_rules() {
        let many: Vec<i64> = (0..900).collect();
        let rule = json!({"rule": "self.all(x, self.all(y, x + y >= 0))"});
        let schema =
            json!({"type": "array", "items": {"type": "integer"}, "x-kubernetes-validations": [rule]});
        assert_eq!(
            errors(&schema, &json!(many), None),
            [
                r#"<nil>: Invalid value: "array": call cost exceeds limit for rule: self.all(x, self.all(y, x + y >= 0))"#
            ]
        );
        let nested = json!({"rule": "self.all(x, self.all(y, y >= 0))"});
        let repeated: Vec<Value> = (0..20).map(|_| nested.clone()).collect();
        let big: Vec<i64> = (0..300).collect();
        let schema =
            json!({"type": "array", "items": {"type": "integer"}, "x-kubernetes-validations": repeated});
        let found = errors(&schema, &json!(big), None);
        assert_eq!(
            found,
            [
                r#"<nil>: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run"#
            ]
        );
    }
}
