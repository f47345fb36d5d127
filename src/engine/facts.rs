//! Facts a stage reads from the cluster once its waits hold (`facts:` of a stage): one value at a path of one object, or computed by a CEL expression, stored keyed in the sealed inventory like `variant` and `affectedNode`.
//!
//! A quiz names the fact (`quiz: {fact: ready-before}`), so its right answer is what this
//! cluster showed, not what the lab author expected it to show.

use serde_json::Value;

use super::{Error, Result, inventory::Inventory, observe::list_scoped};
use crate::{
    grade::{KindKey, Scope, observed::selects, path::FieldPath},
    i18n::Message,
    k8s::cel,
    lab::model::{FactCapture, Stage},
    msg,
};

/// Reads every fact of `stage` and stores it in `inventory` (a fact read again replaces the
/// value a previous start stored). A fact that cannot be read stops `start`: the lab's breakage
/// did not show what its quiz is about.
pub async fn capture(
    cluster: &super::cluster::Cluster,
    stage: &Stage,
    inventory: &mut Inventory,
) -> Result<()> {
    for capture in &stage.facts {
        let from = &capture.from;
        let key = KindKey::new(&from.api_version, &from.kind);
        let listed = list_scoped(&cluster.client, &key, &Scope::of_target(from)).await.map_err(|e| {
            Error::api(
                msg!(
                    "action-list-in",
                    plural = &from.kind,
                    namespace = from.namespace.clone().unwrap_or_default()
                ),
                &e,
            )
        })?;
        let objects: Vec<&Value> = listed.objects.iter().filter(|o| selects(from, o)).collect();
        let value = fact_value(capture, &objects).map_err(|reason| {
            Error::NotReproduced(msg!("start-fact-unreadable", fact = &capture.id.value, reason = reason))
        })?;
        let fact = inventory.fact(&value)?;
        inventory.facts.insert(capture.id.value.clone(), fact);
    }
    Ok(())
}

/// The fact's value over the objects its `from` selects: at its path in the one object, or the
/// result of its expression (over `object`, the one named object, or `objects`, all of them),
/// as text. A list, a map, a null or nothing at all is no answer anyone could type.
pub fn fact_value(capture: &FactCapture, objects: &[&Value]) -> std::result::Result<String, Message> {
    let target = crate::grade::observed::describe_target(&capture.from);
    let value = match (&capture.path, &capture.expression) {
        (Some(path), _) => {
            let path: FieldPath = path
                .value
                .parse()
                .map_err(|e: crate::grade::path::Error| crate::i18n::Localized::message(&e))?;
            let [object] = objects else {
                return Err(msg!("start-fact-not-one", target = target, count = objects.len()));
            };
            match path.get(object) {
                None | Some(Value::Null) => {
                    return Err(msg!("start-fact-absent", target = target, path = path.to_string()));
                }
                Some(found) => found.clone(),
            }
        }
        (None, Some(expression)) => {
            let named = capture.from.name.is_some();
            let compiled = cel::Expression::compile(&expression.value, &[capture.variable()])
                .map_err(|e| msg!("start-fact-cel", reason = e.to_string()))?;
            let bindings = if named {
                let [object] = objects else {
                    return Err(msg!("start-fact-not-one", target = target, count = objects.len()));
                };
                cel::Bindings::new().json("object", object)
            } else {
                let all = Value::Array(objects.iter().map(|o| (*o).clone()).collect());
                cel::Bindings::new().json("objects", &all)
            };
            compiled.evaluate(&bindings).map_err(|e| msg!("start-fact-cel", reason = e.to_string()))?
        }
        (None, None) => return Err(msg!("loader-fact-source", id = format!("{:?}", capture.id.value))),
    };
    match value {
        Value::String(text) if !text.trim().is_empty() => Ok(text),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        other => Err(msg!("start-fact-not-scalar", value = crate::grade::partial::show(&other))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::session::Lang;

    fn capture(yaml: &str) -> FactCapture {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn a_fact_is_read_at_a_path_of_one_object_as_text() {
        let deployment = json!({"kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
            "status": {"readyReplicas": 2, "conditions": [{"type": "Available", "status": "True"}]}});
        let ready = capture(
            "id: ready\nfrom: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\npath: status.readyReplicas\n",
        );
        assert_eq!(fact_value(&ready, &[&deployment]), Ok("2".to_string()));
        let english = |result: std::result::Result<String, Message>| result.unwrap_err().render(Lang::En);
        assert_eq!(
            english(fact_value(&ready, &[])),
            "Deployment shop/web selects 0 objects; a fact's path is read from exactly one"
        );
        let missing = capture(
            "id: x\nfrom: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\npath: status.unavailableReplicas\n",
        );
        assert_eq!(
            english(fact_value(&missing, &[&deployment])),
            "Deployment shop/web has no status.unavailableReplicas"
        );
        let list = capture(
            "id: x\nfrom: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\npath: status.conditions\n",
        );
        assert!(
            english(fact_value(&list, &[&deployment]))
                .starts_with("the value is not a string, a number or a boolean")
        );
    }
}
