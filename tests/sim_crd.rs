//! Custom resources refused as kube-apiserver 1.33 refuses them (issue #29): one CRD exercising
//! the structural schema's value validations, list types, metadata and `x-kubernetes-validations`
//! rules; each case is taken from an upstream test, refused with upstream's code and text, and
//! not stored (read back after the write), and its valid twin is accepted.

use axum::body::Body;
use lab_runner::sim::harness::Harness;
use serde_json::{Value, json};

async fn call(sim: &Harness, method: &str, uri: &str, content_type: &str, body: Value) -> (u16, Value) {
    let body = if body.is_null() { Body::empty() } else { Body::from(body.to_string()) };
    let request = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(body)
        .unwrap();
    let response = sim.request(request).await;
    let code = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (code, serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes))))
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/lab.example.com/v1/namespaces/default/widgets";

/// The schema under test: one property per validation, and rules at three levels.
fn widget_crd(rules_extra: Value) -> Value {
    let spec = json!({
        "type": "object",
        "required": ["replicas"],
        "x-kubernetes-validations": [
            {"rule": "!has(self.owner) || self.owner != 'root'", "fieldPath": ".owner", "reason": "FieldValueForbidden",
             "message": "root may not own a widget"}
        ],
        "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 10},
            "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1, "exclusiveMaximum": true},
            "step": {"type": "integer", "multipleOf": 5},
            "name": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 8},
            "mode": {"type": "string", "enum": ["Fast", "Slow"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2,
                     "x-kubernetes-list-type": "set"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"],
                                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1, "maxProperties": 2},
            "at": {"type": "string", "format": "date-time"},
            "owner": {"type": "string", "nullable": true},
            "size": {"x-kubernetes-int-or-string": true},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "x-kubernetes-preserve-unknown-fields": true},
            "limits": {"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
                       "x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min must not exceed max"}]},
            "immutable": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "is immutable"}]},
            "gpus": {"type": "integer", "x-kubernetes-validations": [
                {"rule": "self <= 8", "messageExpression": "'at most 8 GPUs, got ' + string(self)"}]},
            "extra": {"type": "integer", "x-kubernetes-validations": rules_extra},
        }
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.lab.example.com"},
        "spec": {"group": "lab.example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}
    })
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "lab.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

/// One case: an invalid spec (or whole object), upstream's answer, and a valid twin.
struct Case {
    /// The upstream test the case comes from.
    upstream: &'static str,
    invalid: Value,
    code: u16,
    message: &'static str,
    valid: Value,
}

fn cases() -> Vec<Case> {
    let spec = |extra: Value| {
        let mut base = json!({"replicas": 1});
        base.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        base
    };
    let case = |upstream, invalid: Value, message, valid: Value| Case {
        upstream,
        invalid: widget("w", spec(invalid)),
        code: 422,
        message,
        valid: widget("w", spec(valid)),
    };
    let meta = |upstream, metadata: Value, code, message| Case {
        upstream,
        invalid: json!({"apiVersion": "lab.example.com/v1", "kind": "Widget", "metadata": metadata, "spec": {"replicas": 1}}),
        code,
        message,
        valid: widget("w", json!({"replicas": 1})),
    };
    vec![
        Case {
            upstream: "validation_test.go TestValidateCustomResource (required)",
            invalid: widget("w", json!({})),
            code: 422,
            message: r#"Widget.lab.example.com "w" is invalid: spec.replicas: Required value [blocks]"#,
            valid: widget("w", json!({"replicas": 0})),
        },
        case(
            "validation_test.go TestValidateCustomResource (minimum)",
            json!({"replicas": -1}),
            r#"Widget.lab.example.com "w" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"#,
            json!({"replicas": 0}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (maximum)",
            json!({"replicas": 11}),
            r#"Widget.lab.example.com "w" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"#,
            json!({"replicas": 10}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (exclusiveMinimum)",
            json!({"ratio": 0}),
            r#"Widget.lab.example.com "w" is invalid: spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"#,
            json!({"ratio": 0.5}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (exclusiveMaximum)",
            json!({"ratio": 1.0}),
            r#"Widget.lab.example.com "w" is invalid: spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"#,
            json!({"ratio": 0.99}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (multipleOf)",
            json!({"step": 7}),
            r#"Widget.lab.example.com "w" is invalid: spec.step: Invalid value: 7: spec.step in body should be a multiple of 5"#,
            json!({"step": 15}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (pattern)",
            json!({"name": "ab1"}),
            r#"Widget.lab.example.com "w" is invalid: spec.name: Invalid value: "ab1": spec.name in body should match '^[a-z]+$'"#,
            json!({"name": "abc"}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (minLength)",
            json!({"name": "a"}),
            r#"Widget.lab.example.com "w" is invalid: spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long"#,
            json!({"name": "ab"}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (maxLength)",
            json!({"name": "abcdefghi"}),
            r#"Widget.lab.example.com "w" is invalid: spec.name: Too long: may not be more than 8 bytes [blocks]"#,
            json!({"name": "abcdefgh"}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (enum)",
            json!({"mode": "Bogus"}),
            r#"Widget.lab.example.com "w" is invalid: spec.mode: Unsupported value: "Bogus": supported values: "Fast", "Slow" [blocks]"#,
            json!({"mode": "Slow"}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (type)",
            json!({"replicas": "3"}),
            r#"Widget.lab.example.com "w" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string" [blocks]"#,
            json!({"replicas": 3}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (maxItems)",
            json!({"tags": ["a", "b", "c"]}),
            r#"Widget.lab.example.com "w" is invalid: spec.tags: Too many: 3: must have at most 2 items [blocks]"#,
            json!({"tags": ["a", "b"]}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (minItems)",
            json!({"tags": []}),
            r#"Widget.lab.example.com "w" is invalid: spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"#,
            json!({"tags": ["a"]}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (maxProperties)",
            json!({"labels": {"a": "1", "b": "2", "c": "3"}}),
            r#"Widget.lab.example.com "w" is invalid: spec.labels: Too many: 3: must have at most 2 items [blocks]"#,
            json!({"labels": {"a": "1", "b": "2"}}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (minProperties)",
            json!({"labels": {}}),
            r#"Widget.lab.example.com "w" is invalid: spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties"#,
            json!({"labels": {"a": "1"}}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (format date-time)",
            json!({"at": "yesterday"}),
            r#"Widget.lab.example.com "w" is invalid: spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday" [blocks]"#,
            json!({"at": "2025-01-02T03:04:05Z"}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (nullable)",
            json!({"name": null}),
            r#"Widget.lab.example.com "w" is invalid: spec.name: Invalid value: "null": spec.name in body must be of type string: "null" [blocks]"#,
            json!({"owner": null}),
        ),
        case(
            "validation_test.go TestValidateCustomResource (x-kubernetes-int-or-string)",
            json!({"size": true}),
            r#"Widget.lab.example.com "w" is invalid: spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean" [blocks]"#,
            json!({"size": "50%"}),
        ),
        case(
            "listtype/validation_test.go TestValidateListSetsAndMaps (set)",
            json!({"tags": ["a", "a"]}),
            r#"Widget.lab.example.com "w" is invalid: spec.tags[1]: Duplicate value: "a""#,
            json!({"tags": ["a", "b"]}),
        ),
        case(
            "listtype/validation_test.go TestValidateListSetsAndMaps (map keys)",
            json!({"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 8080}]}),
            r#"Widget.lab.example.com "w" is invalid: spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}"#,
            json!({"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}),
        ),
        case(
            "objectmeta/validation_test.go TestValidateEmbeddedResource",
            json!({"template": {"metadata": {"name": "x"}}}),
            r#"Widget.lab.example.com "w" is invalid: [spec.template.apiVersion: Required value: must not be empty, spec.template.kind: Required value: must not be empty, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"#,
            json!({"template": {"apiVersion": "v1", "kind": "ConfigMap"}}),
        ),
        case(
            "cel/validation_test.go TestValidationExpressions (message)",
            json!({"limits": {"min": 3, "max": 1}}),
            r#"Widget.lab.example.com "w" is invalid: spec.limits: Invalid value: "object": min must not exceed max"#,
            json!({"limits": {"min": 1, "max": 3}}),
        ),
        case(
            "cel/validation_test.go TestValidationExpressions (messageExpression)",
            json!({"gpus": 9}),
            r#"Widget.lab.example.com "w" is invalid: spec.gpus: Invalid value: "integer": at most 8 GPUs, got 9"#,
            json!({"gpus": 8}),
        ),
        case(
            "cel/validation_test.go TestValidationExpressions (reason and fieldPath)",
            json!({"owner": "root"}),
            r#"Widget.lab.example.com "w" is invalid: spec.owner: Forbidden: root may not own a widget"#,
            json!({"owner": "alice"}),
        ),
        case(
            "strategy.go hasBlockingErr: a type error keeps the rules from running",
            json!({"replicas": "x", "limits": {"min": 3, "max": 1}}),
            r#"Widget.lab.example.com "w" is invalid: [spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"#,
            json!({"replicas": 2, "limits": {"min": 1, "max": 1}}),
        ),
        meta(
            "objectmeta coerce.go GetObjectMetaWithOptions (labels as a number)",
            json!({"name": "w", "labels": 5}),
            400,
            r#"Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number into Go struct field ObjectMeta.labels of type map[string]string"#,
        ),
        meta(
            "objectmeta coerce.go GetObjectMetaWithOptions (annotation as an object)",
            json!({"name": "w", "annotations": {"a": {"b": 1}}}),
            400,
            r#"Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal object into Go struct field ObjectMeta.annotations of type string"#,
        ),
        meta(
            "objectmeta coerce.go GetObjectMetaWithOptions (finalizers as a string)",
            json!({"name": "w", "finalizers": "x"}),
            400,
            r#"Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string"#,
        ),
        meta(
            "objectmeta_test.go TestValidateObjectMetaOwnerReferences",
            json!({"name": "w", "ownerReferences": [{"garbage": true}]}),
            422,
            r#"Widget.lab.example.com "w" is invalid: [metadata.ownerReferences[0].apiVersion: Invalid value: "": version must not be empty, metadata.ownerReferences[0].kind: Invalid value: "": kind must not be empty, metadata.ownerReferences[0].name: Invalid value: "": name must not be empty, metadata.ownerReferences[0].uid: Invalid value: "": uid must not be empty]"#,
        ),
        meta(
            "customresource validator.go NameIsDNSSubdomain",
            json!({"name": "Bad_Name"}),
            422,
            r#"Widget.lab.example.com "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
        ),
    ]
}

async fn with_widgets() -> Harness {
    let sim = Harness::start();
    let (code, body) = call(&sim, "POST", CRDS, "application/json", widget_crd(json!([]))).await;
    assert_eq!(code, 201, "{body}");
    sim
}

#[tokio::test]
async fn invalid_custom_resources_are_refused_as_upstream_refuses_them_and_not_stored() {
    let sim = with_widgets().await;
    let mut wrong = Vec::new();
    for case in cases() {
        let name = case.invalid["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let (code, status) = call(&sim, "POST", WIDGETS, "application/json", case.invalid.clone()).await;
        let expected = blocked(case.message);
        if (code, status["message"].as_str().unwrap_or_default()) != (case.code, expected.as_str()) {
            wrong.push(format!(
                "{}:\n  got  {code} {}\n  want {} {expected}",
                case.upstream, status["message"], case.code
            ));
            continue;
        }
        let reason = if case.code == 422 { "Invalid" } else { "BadRequest" };
        assert_eq!(status["reason"], reason, "{}", case.upstream);
        let (read, _) =
            call(&sim, "GET", &format!("{WIDGETS}/{name}"), "application/json", Value::Null).await;
        assert_eq!(read, 404, "{}: the invalid object is not stored", case.upstream);

        let (code, body) = call(&sim, "POST", WIDGETS, "application/json", case.valid.clone()).await;
        assert_eq!(code, 201, "{}: the valid twin is accepted: {body}", case.upstream);
        let (read, stored) =
            call(&sim, "GET", &format!("{WIDGETS}/w"), "application/json", Value::Null).await;
        assert_eq!((read, &stored["spec"]), (200, &case.valid["spec"]), "{}", case.upstream);
        call(&sim, "DELETE", &format!("{WIDGETS}/w"), "application/json", Value::Null).await;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What upstream appends when an error of a blocking type (required, enum, too long, too many,
/// wrong type) keeps the CRD's rules from running (`strategy.go` `hasBlockingErr`); a case
/// whose message ends in `[blocks]` expects it.
fn blocked(message: &str) -> String {
    const NOT_CHECKED: &str = "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";
    match message.strip_suffix(" [blocks]") {
        Some(single) => {
            let (head, error) = single.split_once(" is invalid: ").unwrap();
            format!("{head} is invalid: [{error}, {NOT_CHECKED}]")
        }
        None => message.to_string(),
    }
}

#[tokio::test]
async fn causes_carry_upstream_reasons_and_fields() {
    let sim = with_widgets().await;
    let body = widget("w", json!({"replicas": 11, "mode": "Bogus", "owner": "root", "tags": ["a", "a"]}));
    let (code, status) = call(&sim, "POST", WIDGETS, "application/json", body).await;
    assert_eq!(code, 422);
    let causes: Vec<(String, String)> = status["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["reason"].as_str().unwrap().to_string(), c["field"].as_str().unwrap().to_string()))
        .collect();
    let expected = [
        ("FieldValueInvalid", "spec.replicas"),
        ("FieldValueNotSupported", "spec.mode"),
        ("FieldValueDuplicate", "spec.tags[1]"),
        ("FieldValueInvalid", "<nil>"),
    ];
    let expected: Vec<(String, String)> =
        expected.iter().map(|(r, f)| (r.to_string(), f.to_string())).collect();
    assert_eq!(causes, expected, "the enum error blocks the rules: {status}");
    assert_eq!(status["details"]["group"], "lab.example.com");
    assert_eq!(status["details"]["kind"], "Widget");
}

#[tokio::test]
async fn transition_rules_see_the_stored_object_on_update_only() {
    let sim = with_widgets().await;
    let created = widget("w", json!({"replicas": 1, "immutable": "a"}));
    assert_eq!(
        call(&sim, "POST", WIDGETS, "application/json", created.clone()).await.0,
        201,
        "no oldSelf on create"
    );
    let uri = format!("{WIDGETS}/w");
    for (content_type, body) in [
        ("application/merge-patch+json", json!({"spec": {"immutable": "b"}})),
        ("application/json-patch+json", json!([{"op": "replace", "path": "/spec/immutable", "value": "b"}])),
    ] {
        let (code, status) = call(&sim, "PATCH", &uri, content_type, body).await;
        assert_eq!(
            (code, status["message"].as_str().unwrap_or_default()),
            (
                422,
                r#"Widget.lab.example.com "w" is invalid: spec.immutable: Invalid value: "string": is immutable"#
            ),
            "cel/validation_test.go TestValidationExpressions (transition rule), {content_type}"
        );
    }
    let mut replaced = created.clone();
    replaced["spec"]["immutable"] = json!("c");
    let (code, _) = call(&sim, "PUT", &uri, "application/json", replaced).await;
    assert_eq!(code, 422, "PUT is checked against the stored object too");
    let (_, stored) = call(&sim, "GET", &uri, "application/json", Value::Null).await;
    assert_eq!(stored["spec"]["immutable"], "a", "nothing was stored");
    let (code, body) =
        call(&sim, "PATCH", &uri, "application/merge-patch+json", json!({"spec": {"replicas": 2}})).await;
    assert_eq!(code, 200, "an update that keeps the immutable field: {body}");
}

#[tokio::test]
async fn a_crd_whose_rule_does_not_compile_is_refused() {
    let sim = Harness::start();
    let crd = widget_crd(json!([{"rule": "self >"}]));
    let (code, status) = call(&sim, "POST", CRDS, "application/json", crd).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"].as_str().unwrap(),
        "CustomResourceDefinition.apiextensions.k8s.io \"widgets.lab.example.com\" is invalid: \
         spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[extra].x-kubernetes-validations[0].rule: \
         Invalid value: apiextensions.ValidationRule{Rule:\"self >\", Message:\"\", MessageExpression:\"\", \
         Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: \
         compilation failed: ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self >\n | ......^"
    );
    let (read, _) =
        call(&sim, "GET", &format!("{CRDS}/widgets.lab.example.com"), "application/json", Value::Null).await;
    assert_eq!(read, 404, "the CRD is not stored");
    let (code, body) =
        call(&sim, "POST", CRDS, "application/json", widget_crd(json!([{"rule": "self > 0"}]))).await;
    assert_eq!(code, 201, "the valid twin: {body}");
}

/// Real kubectl 1.33 applies an invalid custom resource and prints upstream's text.
#[test]
fn kubectl_prints_upstreams_error_for_an_invalid_custom_resource() {
    use crate::support::{kubectl::clients, sim::Sim};
    let Some(client) = clients().into_iter().find(|c| c.version == "1.33") else { return };
    let sim = Sim::up(&["--nodes", "1", "--api-only"]);
    let crd = sim.scratch_dir().join("crd.json");
    std::fs::write(&crd, widget_crd(json!([])).to_string()).unwrap();
    let applied = sim.kubectl(&client, &["apply", "-f", crd.to_str().unwrap()]);
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
    let established = sim.kubectl(
        &client,
        &["wait", "--for=condition=Established", "crd/widgets.lab.example.com", "--timeout=10s"],
    );
    assert!(established.status.success(), "{}", String::from_utf8_lossy(&established.stderr));
    let invalid = sim.scratch_dir().join("widget.yaml");
    std::fs::write(
        &invalid,
        "apiVersion: lab.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nspec:\n  replicas: -1\n",
    )
    .unwrap();
    let refused = sim.kubectl(&client, &["apply", "-f", invalid.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains(
            "The Widget \"w\" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
        ),
        "{stderr}"
    );
    let read = sim.kubectl(&client, &["get", "widget", "w", "-n", "default"]);
    assert!(!read.status.success(), "not stored");
    assert!(
        String::from_utf8_lossy(&read.stderr).contains("NotFound"),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
}

/// A merge or JSON patch that changes a custom resource's `kind` or `apiVersion` reaches
/// validation with the changed value, and apiextensions' `ValidateTypeMeta` refuses it first
/// (`customresource/validator.go`); server-side apply is refused by the field manager's
/// version check (`versioncheck.go`).
#[tokio::test]
async fn a_patch_that_changes_a_custom_resources_kind_is_refused() {
    let sim = with_widgets().await;
    let created = widget("w", json!({"replicas": 1}));
    assert_eq!(call(&sim, "POST", WIDGETS, "application/json", created).await.0, 201);
    let uri = format!("{WIDGETS}/w");
    for (content_type, body, message) in [
        (
            "application/merge-patch+json",
            json!({"kind": "Bogus", "spec": {"replicas": 2}}),
            r#"Widget.lab.example.com "w" is invalid: kind: Invalid value: "Bogus": must be Widget"#,
        ),
        (
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/apiVersion", "value": "lab.example.com/v9"},
                   {"op": "replace", "path": "/spec/replicas", "value": 2}]),
            r#"Widget.lab.example.com "w" is invalid: apiVersion: Invalid value: "lab.example.com/v9": must be lab.example.com/v1"#,
        ),
    ] {
        let (code, status) = call(&sim, "PATCH", &uri, content_type, body).await;
        assert_eq!((code, status["message"].as_str().unwrap_or_default()), (422, message), "{content_type}");
    }
    let apply = json!({"apiVersion": "lab.example.com/v1", "kind": "Gadget", "metadata": {"name": "w"},
                       "spec": {"replicas": 2}});
    let (code, status) =
        call(&sim, "PATCH", &format!("{uri}?fieldManager=t"), "application/apply-patch+yaml", apply).await;
    assert_eq!(
        (code, status["message"].as_str().unwrap_or_default()),
        (400, "invalid object type: lab.example.com/v1, Kind=Gadget")
    );
    let (_, stored) = call(&sim, "GET", &uri, "application/json", Value::Null).await;
    assert_eq!(
        (&stored["kind"], &stored["spec"]["replicas"]),
        (&json!("Widget"), &json!(1)),
        "nothing stored"
    );
}
