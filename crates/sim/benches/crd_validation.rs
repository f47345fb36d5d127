//! Cost of validating one custom resource (`cargo bench -p lab-runner-sim --bench crd_validation`): its structural
//! schema alone, then with five `x-kubernetes-validations` rules, on create and on update (where
//! transition rules run), and compiling the rules once per CRD version.

use criterion::{Criterion, criterion_group, criterion_main};
use lab_runner_sim::crdvalidation::Validator;
use serde_json::{Value, json};
use std::hint::black_box;

fn schema(with_rules: bool) -> Value {
    let rules = |list: Value| if with_rules { list } else { json!([]) };
    json!({"type": "object", "properties": {"spec": {
    "type": "object", "required": ["replicas"],
    "x-kubernetes-validations": rules(json!([
        {"rule": "self.replicas <= self.maxReplicas", "message": "replicas above maxReplicas"},
        {"rule": "self.ports.all(p, p.port > 0 && p.port < 65536)"},
        {"rule": "!has(self.owner) || self.owner != 'root'", "fieldPath": ".owner", "reason": "FieldValueForbidden"}])),
    "properties": {
        "replicas": {"type": "integer", "minimum": 0, "maximum": 100},
        "maxReplicas": {"type": "integer", "minimum": 0},
        "name": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$", "maxLength": 63,
                 "x-kubernetes-validations": rules(json!([{"rule": "self == oldSelf", "message": "is immutable"}]))},
        "mode": {"type": "string", "enum": ["Fast", "Slow"]},
        "owner": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 16, "x-kubernetes-list-type": "set"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
        "gpus": {"type": "integer", "x-kubernetes-validations": rules(json!([
            {"rule": "self <= 8", "messageExpression": "'at most 8 GPUs, got ' + string(self)"}]))}
    }}}})
}

fn object(replicas: i64) -> Value {
    json!({"apiVersion": "lab.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "labels": {"app": "w"}},
        "spec": {"replicas": replicas, "maxReplicas": 10, "name": "trainer", "mode": "Fast", "owner": "alice",
                 "tags": ["a", "b", "c", "d"], "gpus": 4,
                 "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}, {"name": "metrics", "port": 9090}]}})
}

fn bench(c: &mut Criterion) {
    let plain = Validator::new(schema(false));
    let ruled = Validator::new(schema(true));
    let (old, new) = (object(2), object(3));
    assert!(plain.validate(&new, None).is_empty() && ruled.validate(&new, Some(&old)).is_empty());
    c.bench_function("schema only, create", |b| b.iter(|| black_box(plain.validate(black_box(&new), None))));
    c.bench_function("schema + 5 rules, create", |b| {
        b.iter(|| black_box(ruled.validate(black_box(&new), None)))
    });
    c.bench_function("schema + 5 rules, update", |b| {
        b.iter(|| black_box(ruled.validate(black_box(&new), Some(black_box(&old)))))
    });
    let with_rules = schema(true);
    c.bench_function("compile 5 rules (once per CRD version)", |b| {
        b.iter(|| black_box(Validator::new(black_box(with_rules.clone()))))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
