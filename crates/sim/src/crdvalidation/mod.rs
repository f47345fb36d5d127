//! Custom resources validated as kube-apiserver 1.33 validates them: schema values, list types, metadata, CEL rules.
//!
//! Upstream's order (apiextensions-apiserver `pkg/registry/customresource/strategy.go`
//! `Validate`/`ValidateUpdate` and `validator.go`): ObjectMeta ([`metadata`]), the OpenAPI v3
//! value validation of the structural schema ([`openapi`], kube-openapi `pkg/validation/validate`
//! as `pkg/apiserver/validation/validation.go` `ValidateCustomResource` reports it), embedded
//! resources, `x-kubernetes-list-type` `set`/`map` uniqueness
//! (`pkg/apiserver/schema/listtype/validation.go`), then the `x-kubernetes-validations` rules
//! ([`rules`], `pkg/apiserver/schema/cel/validation.go`) unless an earlier error blocks them.
//! A CRD whose rules do not compile is refused ([`rules::validate_definition`]).

pub mod gofmt;
pub mod metadata;
pub mod openapi;
pub mod rules;

use std::{
    collections::HashMap,
    fmt,
    sync::{Arc, LazyLock, Mutex},
};

use serde_json::Value;

/// apimachinery `field.ErrorType`: what kind of problem a [`FieldError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `FieldValueRequired`, "Required value".
    Required,
    /// `FieldValueInvalid`, "Invalid value".
    Invalid,
    /// `FieldValueTypeInvalid`, "Invalid value".
    TypeInvalid,
    /// `FieldValueNotSupported`, "Unsupported value".
    NotSupported,
    /// `FieldValueDuplicate`, "Duplicate value".
    Duplicate,
    /// `FieldValueForbidden`, "Forbidden".
    Forbidden,
    /// `FieldValueTooLong`, "Too long".
    TooLong,
    /// `FieldValueTooMany`, "Too many".
    TooMany,
}

impl Reason {
    /// The Status cause's `reason`.
    pub fn cause(self) -> &'static str {
        match self {
            Reason::Required => "FieldValueRequired",
            Reason::Invalid => "FieldValueInvalid",
            Reason::TypeInvalid => "FieldValueTypeInvalid",
            Reason::NotSupported => "FieldValueNotSupported",
            Reason::Duplicate => "FieldValueDuplicate",
            Reason::Forbidden => "FieldValueForbidden",
            Reason::TooLong => "FieldValueTooLong",
            Reason::TooMany => "FieldValueTooMany",
        }
    }

    /// `ErrorType.String()`.
    fn words(self) -> &'static str {
        match self {
            Reason::Required => "Required value",
            Reason::Invalid | Reason::TypeInvalid => "Invalid value",
            Reason::NotSupported => "Unsupported value",
            Reason::Duplicate => "Duplicate value",
            Reason::Forbidden => "Forbidden",
            Reason::TooLong => "Too long",
            Reason::TooMany => "Too many",
        }
    }

    /// Errors that keep upstream from running the CEL rules (`strategy.go` `hasBlockingErr`).
    fn blocks_rules(self) -> bool {
        matches!(
            self,
            Reason::NotSupported | Reason::Required | Reason::TooLong | Reason::TooMany | Reason::TypeInvalid
        )
    }
}

/// One `field.Error`: a path, a reason, the bad value as Go prints it (if shown) and a detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// What kind of problem.
    pub reason: Reason,
    /// The field path, e.g. `spec.replicas` (`<nil>` for an error about no field).
    pub field: String,
    /// The bad value as `field.Error.ErrorBody` prints it, or `None` where it prints none.
    pub value: Option<String>,
    /// The detail after the value.
    pub detail: String,
}

impl FieldError {
    /// A new error of `reason` at `field`.
    pub fn new(
        reason: Reason,
        field: impl Into<String>,
        value: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        Self { reason, field: field.into(), value, detail: detail.into() }
    }

    /// `field.Error.ErrorBody`: the message without the field.
    pub fn body(&self) -> String {
        let mut body = self.reason.words().to_string();
        if let Some(value) = &self.value {
            body.push_str(": ");
            body.push_str(value);
        }
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// How many compiled validators [`Validator::cached`] keeps (CRD revisions × versions).
pub const CACHED_VALIDATORS: usize = 256;

/// What to validate a custom resource against: its version's structural schema, with its
/// CEL rules compiled once.
#[derive(Debug)]
pub struct Validator {
    schema: Value,
    rules: rules::Compiled,
}

impl Validator {
    /// A validator for `schema` (a CRD version's `openAPIV3Schema`). Rules that do not compile
    /// were refused when the CRD was written; any that slip through are skipped here.
    pub fn new(schema: Value) -> Self {
        let rules = rules::Compiled::of(&schema);
        Self { schema, rules }
    }

    /// The validator of the schema known by `key` (a CRD's uid, resourceVersion and version),
    /// compiled on first use and kept for later writes; at most [`CACHED_VALIDATORS`] are kept.
    pub fn cached(key: &str, schema: &Value) -> Arc<Validator> {
        static CACHE: LazyLock<Mutex<HashMap<String, Arc<Validator>>>> = LazyLock::new(Mutex::default);
        let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(validator) = cache.get(key) {
            return Arc::clone(validator);
        }
        if cache.len() >= CACHED_VALIDATORS {
            cache.clear();
        }
        let validator = Arc::new(Validator::new(schema.clone()));
        cache.insert(key.to_string(), Arc::clone(&validator));
        validator
    }

    /// Every error upstream finds in `object` (`old`: the stored object on update), in
    /// upstream's order; empty when the object is valid.
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errors = metadata::validate(object);
        errors.extend(openapi::validate(&self.schema, object));
        if self.rules.is_empty() {
            return errors;
        }
        if errors.iter().any(|e| e.reason.blocks_rules()) {
            errors.push(FieldError::new(
                Reason::Invalid,
                "<nil>",
                Some("\"null\"".into()),
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ));
            return errors;
        }
        errors.extend(self.rules.validate(&self.schema, object, old));
        errors
    }
}
