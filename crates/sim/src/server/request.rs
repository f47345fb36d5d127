//! Request parsing: resource paths, query parameters, bodies and content negotiation.

use std::collections::HashMap;

use axum::{
    body::{Body, Bytes},
    http::{HeaderMap, Uri, header},
};
use serde_json::Value;

use super::status::{ApiError, MAX_BODY_BYTES, Result};
use crate::{
    gojson::{self, MAX_NESTING_DEPTH},
    k8s::selector::{FieldSelector, LabelSelector},
    store::{DeleteOptions, DryRun, Propagation},
};

/// What a resource URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group (`""` for `/api/v1`).
    pub group: String,
    /// API version.
    pub version: String,
    /// `Some` for `/namespaces/{ns}/…` paths (and for a namespace object itself: `None`).
    pub namespace: Option<String>,
    /// Plural resource name.
    pub plural: String,
    /// Object name, `None` for a collection.
    pub name: Option<String>,
    /// `status`, `log`, … after the name.
    pub subresource: Option<String>,
}

impl ResourcePath {
    /// Parses `/api/v1/…` and `/apis/{group}/{version}/…`; `None` for any other path.
    pub fn parse(path: &str) -> Option<ResourcePath> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, version, rest) = match segments.as_slice() {
            ["api", version, rest @ ..] => ("", *version, rest),
            ["apis", group, version, rest @ ..] => (*group, *version, rest),
            _ => return None,
        };
        let (namespace, rest) = match rest {
            // `/namespaces/{ns}/{plural}…`; `/namespaces/{name}[/status|/finalize]` is the
            // namespace object itself.
            ["namespaces", ns, plural, tail @ ..] if !matches!(*plural, "status" | "finalize") => {
                (Some(ns.to_string()), [&[*plural][..], tail].concat())
            }
            other => (None, other.to_vec()),
        };
        let (plural, name, subresource) = match rest.as_slice() {
            [plural] => (*plural, None, None),
            [plural, name] => (*plural, Some(*name), None),
            [plural, name, sub] => (*plural, Some(*name), Some(*sub)),
            _ => return None,
        };
        if plural.is_empty() || name.is_some_and(str::is_empty) {
            return None;
        }
        Some(ResourcePath {
            group: group.to_string(),
            version: version.to_string(),
            namespace,
            plural: plural.to_string(),
            name: name.map(str::to_string),
            subresource: subresource.map(str::to_string),
        })
    }
}

/// The query string as a map (the last value wins for repeated keys).
#[derive(Debug, Clone, Default)]
pub struct Query(pub HashMap<String, String>);

impl Query {
    /// Parses the request's query string.
    pub fn from_uri(uri: &Uri) -> Result<Query> {
        let pairs: Vec<(String, String)> = serde_urlencoded_pairs(uri.query().unwrap_or(""))?;
        Ok(Query(pairs.into_iter().collect()))
    }

    /// A parameter's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A boolean parameter (`true`/`1`).
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    /// `labelSelector`.
    pub fn label_selector(&self) -> Result<LabelSelector> {
        Ok(LabelSelector::parse(self.get("labelSelector").unwrap_or(""))?)
    }

    /// `fieldSelector`, checked against the fields `group_resource` supports.
    pub fn field_selector(&self, group_resource: &str) -> Result<FieldSelector> {
        let selector = FieldSelector::parse(self.get("fieldSelector").unwrap_or(""))?;
        selector.check_supported(crate::kinds::selectable_field_names(group_resource))?;
        Ok(selector)
    }

    /// `dryRun` (`All` is the only value upstream accepts).
    pub fn dry_run(&self) -> Result<DryRun> {
        match self.get("dryRun") {
            None | Some("") => Ok(DryRun::Off),
            Some("All") => Ok(DryRun::All),
            Some(other) => Err(ApiError::bad_request(format!(
                "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
            ))),
        }
    }

    /// An integer parameter; 400 when it is not one.
    pub fn integer(&self, key: &str) -> Result<Option<i64>> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some(text) => text
                .parse()
                .map(Some)
                .map_err(|_| ApiError::bad_request(format!("invalid value for {key}: {text:?}"))),
        }
    }
}

fn serde_urlencoded_pairs(query: &str) -> Result<Vec<(String, String)>> {
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(
        &format!("/?{query}").parse::<Uri>().map_err(|e| ApiError::bad_request(e.to_string()))?,
    )
    .map(|axum::extract::Query(pairs)| pairs)
    .map_err(|e| ApiError::bad_request(e.body_text()))
}

/// True when the client asked for a meta.k8s.io `Table` (`kubectl get`).
pub fn wants_table(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .next()
        .is_some_and(|first| first.contains("as=Table"))
}

/// Reads the body, answering 413 past [`MAX_BODY_BYTES`].
pub async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES) {
        return Err(ApiError::too_large());
    }
    axum::body::to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| ApiError::too_large())
}

/// The essence of the `Content-Type` header (`application/json`), empty when absent.
pub fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Upstream's 415 text for object bodies (`apiserver/pkg/endpoints/handlers/rest.go`).
const OBJECT_MEDIA_TYPES: &str = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor";

/// Why a YAML body could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// Nested past go-yaml v2's limit (sigs.k8s.io/yaml `goyaml.v2/scannerc.go`
    /// `max_flow_level`, `max_indents`: [`MAX_NESTING_DEPTH`]), in its words, with the line
    /// when it is not the first (`decode.go` `parser.fail`).
    #[error("yaml: {}exceeded max depth of {MAX_NESTING_DEPTH}", if *line > 1 { format!("line {line}: ") } else { String::new() })]
    TooDeep {
        /// The 1-based line of the collection that opens one level too many.
        line: usize,
    },
    /// Anything else, in serde-saphyr's words.
    #[error("{0}")]
    Other(String),
}

impl YamlError {
    /// The error as sigs.k8s.io/yaml `Unmarshal` wraps go-yaml's: `error converting YAML to
    /// JSON: …`.
    pub fn converting(&self) -> String {
        format!("error converting YAML to JSON: {self}")
    }
}

/// The stack segment a YAML body is decoded on. serde-saphyr's frames are large: a document
/// nested [`MAX_NESTING_DEPTH`] levels deep needs up to a quarter of this in a debug build and
/// far less in a release one (test `yaml_at_the_depth_limit_fits_a_quarter_of_its_segment`).
/// The segment is mapped for each decode and only the pages touched are committed.
pub const YAML_STACK_BYTES: usize = 1 << 30;

/// Decodes one YAML document into JSON values as go-yaml v2 bounds it: nesting past
/// [`MAX_NESTING_DEPTH`] is refused in its words (serde-saphyr's own default stops at 64, and
/// its flow limit at 255), and no node count short of the body limit is refused (go-yaml counts
/// none; aliases keep serde-saphyr's expansion budget, as go-yaml keeps its alias ratio).
pub fn decode_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    decode_yaml_on(YAML_STACK_BYTES, text)
}

/// [`decode_yaml`] on a stack segment of `stack` bytes.
fn decode_yaml_on<T: serde::de::DeserializeOwned>(stack: usize, text: &str) -> Result<T, YamlError> {
    stacker::grow(stack, || decode_yaml_here(text))
}

fn decode_yaml_here<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_NESTING_DEPTH;
    // The depth budget then stops flow collections first; granit's flow parser keeps no stack.
    budget.flow_nesting_limit = usize::MAX;
    budget.max_nodes = budget.max_nodes.max(MAX_BODY_BYTES);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    serde_saphyr::from_str_with_options(text, options).map_err(|error| match error.without_snippet() {
        serde_saphyr::Error::Budget { breach: serde_saphyr::budget::BudgetBreach::Depth { .. }, .. } => {
            YamlError::TooDeep {
                line: error.location().map_or(1, |at| usize::try_from(at.line()).unwrap_or(usize::MAX)),
            }
        }
        _ => YamlError::Other(error.to_string()),
    })
}

/// Upstream's summary of a body that could not be decoded, after its error
/// (`endpoints/handlers/rest.go` `summarizeData`, 30 bytes): the text when it starts with `{`,
/// else hex; ` ...` when cut.
pub fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    let shown = &body[..body.len().min(MAX)];
    let cut = if body.len() > MAX { " ..." } else { "" };
    match body.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{cut}", String::from_utf8_lossy(shown)),
        Some(_) => format!("{}{cut}", shown.iter().map(|b| format!("{b:02x}")).collect::<String>()),
    }
}

/// Decodes a create/update body (JSON or YAML) of type `kind`; a body that does not decode is
/// refused as `transformDecodeError` words it (`endpoints/handlers/rest.go`): the decoder's
/// error, then [`summarize`]d body.
pub fn decode_object(headers: &HeaderMap, body: &[u8], kind: &str) -> Result<Value> {
    let unrecognized = |detail: String| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {detail} ({})",
            summarize(body)
        ))
    };
    // The JSON serializer's `Decode` reads apiVersion and kind first (`json/meta.go`
    // `SimpleMetaFactory.Interpret`), so any JSON error comes wrapped in its words.
    let json_error =
        |e: gojson::DecodeError| unrecognized(format!("couldn't get version/kind; json parse error: {e}"));
    let value: Value = match content_type(headers).as_str() {
        "" | "application/json" | "*/*" => gojson::from_slice(body).map_err(json_error)?,
        "application/yaml" | "application/x-yaml" | "text/yaml" => {
            let text = std::str::from_utf8(body)
                .map_err(|e| unrecognized(YamlError::Other(e.to_string()).to_string()))?;
            decode_yaml(text).map_err(|e| unrecognized(e.to_string()))?
        }
        super::protobuf::MEDIA_TYPE => super::protobuf::decode(body).map_err(ApiError::from)?,
        _ => return Err(ApiError::unsupported_media_type(OBJECT_MEDIA_TYPES)),
    };
    if !value.is_object() {
        return Err(unrecognized("couldn't get version/kind; json parse error: not an object".into()));
    }
    Ok(value)
}

/// Checks a body's `apiVersion`/`kind` against the URL's type (both may be absent: the URL
/// supplies them, as upstream's decoder defaults do).
pub fn check_type(object: &Value, api_version: &str, kind: &str) -> Result<()> {
    if let Some(body_version) = object["apiVersion"].as_str().filter(|v| !v.is_empty())
        && body_version != api_version
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({body_version}) does not match the expected API version ({api_version})"
        )));
    }
    if let Some(body_kind) = object["kind"].as_str().filter(|k| !k.is_empty())
        && body_kind != kind
    {
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {body_kind} in version \"{version}\" cannot be handled as a {kind}"
        )));
    }
    Ok(())
}

/// The body of a subresource create that names its object (`pods/{name}/eviction`,
/// `pods/{name}/binding`): read, decoded, of `api_version`/`kind`, and named `name`, else
/// upstream's 400 `name in URL does not match name in <kind> object`.
pub async fn named_body(
    headers: &HeaderMap,
    body: Body,
    api_version: &str,
    kind: &str,
    name: &str,
) -> Result<Value> {
    let bytes = read_body(headers, body).await?;
    let object = decode_object(headers, &bytes, kind)?;
    check_type(&object, api_version, kind)?;
    if object["metadata"]["name"].as_str().unwrap_or_default() != name {
        return Err(ApiError::bad_request(format!("name in URL does not match name in {kind} object")));
    }
    Ok(object)
}

/// `DeleteOptions` from the body (if any) and the query, as kubectl sends them.
pub fn delete_options(query: &Query, headers: &HeaderMap, body: &[u8]) -> Result<DeleteOptions> {
    let body: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match content_type(headers).as_str() {
            "" | "application/json" | "*/*" => gojson::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("couldn't decode DeleteOptions: {e}")))?,
            _ => return Err(ApiError::unsupported_media_type(OBJECT_MEDIA_TYPES)),
        }
    };
    let propagation = body["propagationPolicy"]
        .as_str()
        .map(str::to_string)
        .or_else(|| query.get("propagationPolicy").map(str::to_string));
    let orphan =
        body["orphanDependents"].as_bool().or_else(|| query.get("orphanDependents").map(|v| v == "true"));
    let propagation = match (propagation.as_deref(), orphan) {
        (Some("Background"), _) => Some(Propagation::Background),
        (Some("Foreground"), _) => Some(Propagation::Foreground),
        (Some("Orphan"), _) | (None, Some(true)) => Some(Propagation::Orphan),
        (None, _) | (Some(""), _) => None,
        (Some(other), _) => {
            return Err(ApiError::bad_request(format!(
                "propagationPolicy: Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
            )));
        }
    };
    let grace = match body["gracePeriodSeconds"].as_i64() {
        Some(grace) => Some(grace),
        None => query.integer("gracePeriodSeconds")?,
    };
    let dry_run = match body["dryRun"].as_array() {
        Some(values) if values.iter().any(|v| v == "All") => DryRun::All,
        _ => query.dry_run()?,
    };
    Ok(DeleteOptions {
        grace_period_seconds: grace,
        propagation,
        precondition_uid: body["preconditions"]["uid"].as_str().map(str::to_string),
        precondition_resource_version: body["preconditions"]["resourceVersion"].as_str().map(str::to_string),
        dry_run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_collections_objects_and_subresources() {
        let p = ResourcePath::parse("/api/v1/namespaces/default/pods/web-0/status").unwrap();
        assert_eq!(
            (
                p.group.as_str(),
                p.namespace.as_deref(),
                p.plural.as_str(),
                p.name.as_deref(),
                p.subresource.as_deref()
            ),
            ("", Some("default"), "pods", Some("web-0"), Some("status"))
        );
        let ns = ResourcePath::parse("/api/v1/namespaces/team").unwrap();
        assert_eq!(
            (ns.plural.as_str(), ns.name.as_deref(), ns.namespace),
            ("namespaces", Some("team"), None)
        );
        let ns_status = ResourcePath::parse("/api/v1/namespaces/team/status").unwrap();
        assert_eq!(ns_status.subresource.as_deref(), Some("status"));
        let all = ResourcePath::parse("/apis/apps/v1/daemonsets").unwrap();
        assert_eq!((all.group.as_str(), all.namespace, all.name), ("apps", None, None));
        assert!(ResourcePath::parse("/version").is_none());
        assert!(ResourcePath::parse("/api/v1/namespaces/a/pods/b/c/d").is_none());
    }

    #[test]
    fn yaml_at_the_depth_limit_fits_a_quarter_of_its_segment() {
        let deepest =
            format!("x: {}1{}", "[".repeat(MAX_NESTING_DEPTH - 1), "]".repeat(MAX_NESTING_DEPTH - 1));
        let maps =
            format!("x: {}1{}", "{a: ".repeat(MAX_NESTING_DEPTH - 1), "}".repeat(MAX_NESTING_DEPTH - 1));
        let one_more = format!("x: {}1{}", "[".repeat(MAX_NESTING_DEPTH), "]".repeat(MAX_NESTING_DEPTH));
        // A small thread stack: the segment is all the decoder gets.
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                for text in [&deepest, &maps] {
                    let Ok(value) = decode_yaml_on::<Value>(YAML_STACK_BYTES / 4, text) else {
                        panic!("YAML {} levels deep is refused", MAX_NESTING_DEPTH)
                    };
                    assert_eq!(gojson::depth(&value), MAX_NESTING_DEPTH);
                    gojson::dismantle(value);
                }
                let error = decode_yaml_on::<Value>(YAML_STACK_BYTES / 4, &one_more).unwrap_err();
                assert_eq!(error.to_string(), "yaml: exceeded max depth of 10000");
                let deep_lines = format!("x:\n{}", "- ".repeat(MAX_NESTING_DEPTH + 5));
                let error = decode_yaml_on::<Value>(YAML_STACK_BYTES / 4, &deep_lines).unwrap_err();
                assert_eq!(error.to_string(), "yaml: line 2: exceeded max depth of 10000");
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn table_is_wanted_only_when_first_choice() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
                .parse()
                .unwrap(),
        );
        assert!(wants_table(&headers));
        headers.insert(header::ACCEPT, "application/json".parse().unwrap());
        assert!(!wants_table(&headers));
    }
}
