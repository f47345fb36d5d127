//! A kind's second served version (autoscaling/v1 HorizontalPodAutoscalers): requests converted to the stored version and answers back, per object.
//!
//! kube-apiserver keeps one stored object and serves it in every version its group offers
//! (apiserver `pkg/endpoints/handlers`: each handler decodes into the request's version and
//! converts, and encodes its answer in that version). The simulator stores the row's version
//! (`kinds::BUILT_IN`) and converts a request in a version listed in `kinds::ALSO_SERVED`:
//! create and update bodies whole ([`Conversion::request`]), answers whole
//! ([`Conversion::response`]), a patch inside its transaction (the stored object shown in the
//! request's version, patched there, converted back: `rest/patch.go` `patcher.patchResource`
//! applies the patch to `unsafeConvertor.ConvertToVersion(currentObject, p.kind.GroupVersion())`),
//! and a watch per event (`server/watch.rs`; upstream's `watchEncoder` encodes each event's
//! object in the request's version).

use axum::{
    body::Body,
    http::{HeaderMap, HeaderValue, header},
    response::Response,
};
use serde_json::{Value, json};

use super::{
    AppState, request,
    status::{ApiError, Result},
};
use crate::{
    kinds::autoscaling::conversion,
    resources::{self, ResourceType},
};

/// A request in a served version other than the stored one.
#[derive(Debug, Clone)]
pub struct Conversion {
    served: ResourceType,
    stored: ResourceType,
}

impl Conversion {
    /// The conversion of a request for `rt` when `rt` is a second version of a built-in kind
    /// (`kinds::ALSO_SERVED`), else `None`.
    pub fn of(state: &AppState, rt: &ResourceType) -> Option<Conversion> {
        let kind = crate::kinds::find(&rt.group, &rt.plural)?;
        if kind.version == rt.version {
            return None;
        }
        let types = state.types.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        let stored = resources::find(&types, kind.group, kind.version, kind.plural).cloned()?;
        Some(Conversion { served: rt.clone(), stored })
    }

    /// The type the request names.
    pub fn served(&self) -> &ResourceType {
        &self.served
    }

    /// The type the store keeps.
    pub fn stored(&self) -> &ResourceType {
        &self.stored
    }

    /// A stored object as the request's version shows it (`conversion::to_v1`).
    pub fn to_served(&self, stored: &Value) -> Value {
        conversion::to_v1(stored)
    }

    /// An object of the request's version as the store keeps it (`conversion::to_v2`).
    pub fn to_stored(&self, served: &Value) -> Value {
        conversion::to_v2(served)
    }

    /// A create or update body of the served version as the stored version's, re-encoded as
    /// JSON.
    pub async fn request(&self, headers: HeaderMap, body: Body) -> Result<(HeaderMap, Body)> {
        let rt = &self.served;
        let bytes = request::read_body(&headers, body).await?;
        let object = request::decode_object(&headers, &bytes, &rt.kind)?;
        request::check_type(&object, &rt.api_version(), &rt.kind)?;
        let converted = self.to_stored(&object).to_string();
        let mut headers = headers;
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.remove(header::CONTENT_LENGTH);
        Ok((headers, Body::from(converted)))
    }

    /// An answer of the stored version as the served version's: the object, each item of a
    /// list, each row's object of a Table that carries them (`includeObject=Object`); a Status,
    /// or a Table of metadata, is the same in both.
    pub async fn response(&self, response: Response) -> Result<Response> {
        let (mut parts, body) = response.into_parts();
        let bytes =
            axum::body::to_bytes(body, usize::MAX).await.map_err(|e| ApiError::internal(e.to_string()))?;
        let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else {
            return Ok(Response::from_parts(parts, Body::from(bytes)));
        };
        let kind = &self.stored.kind;
        match value["kind"].as_str() {
            Some(found) if found == kind => value = self.to_served(&value),
            Some(found) if found == self.stored.list_kind() => {
                value["apiVersion"] = json!(self.served.api_version());
                for item in value["items"].as_array_mut().into_iter().flatten() {
                    *item = self.to_served(item);
                }
            }
            Some("Table") => {
                for row in value["rows"].as_array_mut().into_iter().flatten() {
                    if row["object"]["kind"] == json!(kind) {
                        row["object"] = self.to_served(&row["object"]);
                    }
                }
            }
            _ => return Ok(Response::from_parts(parts, Body::from(bytes))),
        }
        parts.headers.remove(header::CONTENT_LENGTH);
        Ok(Response::from_parts(parts, Body::from(value.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::StreamExt;
    use serde_json::{Value, json};

    use crate::harness::Harness;

    const V1: &str = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
    const V2: &str = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
    const JSON: Option<&str> = Some("application/json");

    fn utilization(resource: &str, percent: i64) -> Value {
        json!({"type": "Resource", "resource": {"name": resource,
            "target": {"type": "Utilization", "averageUtilization": percent}}})
    }

    /// An HPA created through v2 with a CPU target (v1's own field) and a memory target (which v1
    /// carries in an annotation).
    async fn web(sim: &Harness) -> Value {
        let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 1, "maxReplicas": 5,
                     "metrics": [utilization("cpu", 50), utilization("memory", 70)]}});
        let (code, created) = sim.call("POST", V2, JSON, hpa.to_string()).await;
        assert_eq!(code, 201, "{created}");
        created
    }

    async fn stored(sim: &Harness) -> Value {
        let (code, stored) = sim.call("GET", &format!("{V2}/web"), None, "").await;
        assert_eq!(code, 200, "{stored}");
        stored
    }

    async fn next(events: &mut (impl futures::Stream<Item = Value> + Unpin)) -> Value {
        let event = tokio::time::timeout(Duration::from_secs(10), events.next()).await;
        event.expect("an event arrives").expect("the stream is open")
    }

    #[tokio::test]
    async fn a_v1_watch_streams_each_object_converted_and_bookmarks_in_v1() {
        let sim = Harness::start();
        web(&sim).await;
        let uri = format!(
            "{V1}?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        );
        let mut events = sim.watch_lines(&uri).await;
        let added = next(&mut events).await;
        assert_eq!(added["type"], "ADDED");
        assert_eq!(added["object"]["apiVersion"], "autoscaling/v1");
        assert_eq!(added["object"]["spec"]["targetCPUUtilizationPercentage"], 50);
        assert!(added["object"]["spec"].get("metrics").is_none(), "{added}");
        let metrics = added["object"]["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
            .as_str()
            .expect("the memory target travels in the annotation");
        assert!(metrics.contains("memory"), "{metrics}");
        let bookmark = next(&mut events).await;
        assert_eq!(bookmark["type"], "BOOKMARK");
        assert_eq!(bookmark["object"]["apiVersion"], "autoscaling/v1");
        assert_eq!(bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
        assert!(bookmark["object"].get("spec").is_none(), "a bookmark is not converted: {bookmark}");
        // A live change through v2 reaches the v1 watcher in v1.
        let mut hpa = stored(&sim).await;
        hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = json!(60);
        let (code, _) = sim.call("PUT", &format!("{V2}/web"), JSON, hpa.to_string()).await;
        assert_eq!(code, 200);
        let modified = next(&mut events).await;
        assert_eq!(modified["type"], "MODIFIED");
        assert_eq!(modified["object"]["apiVersion"], "autoscaling/v1");
        assert_eq!(modified["object"]["spec"]["targetCPUUtilizationPercentage"], 60);
        // A watch of v2 beside it still gets the stored objects.
        let mut v2_events = sim.watch_lines(&format!("{V2}?watch=true")).await;
        assert_eq!(next(&mut v2_events).await["object"]["apiVersion"], "autoscaling/v2");
    }

    #[tokio::test]
    async fn every_kind_of_patch_is_applied_to_the_object_as_v1_shows_it() {
        let sim = Harness::start();
        web(&sim).await;
        let url = format!("{V1}/web");
        // A merge patch of v1's own field: v2's CPU metric changes, the memory one stays.
        let merge = json!({"spec": {"targetCPUUtilizationPercentage": 70}});
        let (code, patched) =
            sim.call("PATCH", &url, Some("application/merge-patch+json"), merge.to_string()).await;
        assert_eq!(code, 200, "{patched}");
        assert_eq!(patched["apiVersion"], "autoscaling/v1");
        assert_eq!(patched["spec"]["targetCPUUtilizationPercentage"], 70);
        assert_eq!(
            stored(&sim).await["spec"]["metrics"],
            json!([utilization("cpu", 70), utilization("memory", 70)])
        );
        // A JSON patch's paths are v1's.
        let ops = json!([{"op": "test", "path": "/spec/targetCPUUtilizationPercentage", "value": 70},
                         {"op": "replace", "path": "/spec/targetCPUUtilizationPercentage", "value": 75},
                         {"op": "replace", "path": "/spec/maxReplicas", "value": 7}]);
        let (code, patched) =
            sim.call("PATCH", &url, Some("application/json-patch+json"), ops.to_string()).await;
        assert_eq!(code, 200, "{patched}");
        let spec = stored(&sim).await["spec"].clone();
        assert_eq!(
            (spec["maxReplicas"].clone(), spec["metrics"][0].clone()),
            (json!(7), utilization("cpu", 75))
        );
        // A strategic merge patch, with v1's patch metadata.
        let strategic = json!({"spec": {"targetCPUUtilizationPercentage": 80}});
        let content_type = Some("application/strategic-merge-patch+json");
        let (code, patched) = sim.call("PATCH", &url, content_type, strategic.to_string()).await;
        assert_eq!(code, 200, "{patched}");
        assert_eq!(stored(&sim).await["spec"]["metrics"][0], utilization("cpu", 80));
        // Server-side apply of a v1 configuration: merged as v1, owned in v1.
        let config = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 7, "targetCPUUtilizationPercentage": 90}});
        let apply = format!("{url}?fieldManager=tuner&force=true");
        let (code, applied) =
            sim.call("PATCH", &apply, Some("application/apply-patch+yaml"), config.to_string()).await;
        assert_eq!(code, 200, "{applied}");
        assert_eq!(applied["spec"]["targetCPUUtilizationPercentage"], 90);
        let stored = stored(&sim).await;
        assert_eq!(stored["spec"]["metrics"], json!([utilization("cpu", 90), utilization("memory", 70)]));
        let managers = stored["metadata"]["managedFields"].as_array().unwrap();
        let tuner = managers.iter().find(|entry| entry["manager"] == "tuner").expect("the applier's entry");
        assert_eq!(
            (tuner["operation"].clone(), tuner["apiVersion"].clone()),
            (json!("Apply"), json!("autoscaling/v1"))
        );
        assert!(tuner["fieldsV1"]["f:spec"].get("f:targetCPUUtilizationPercentage").is_some(), "{tuner}");
    }

    #[tokio::test]
    async fn the_status_subresource_reads_and_writes_v1_status() {
        let sim = Harness::start();
        web(&sim).await;
        let mut hpa = stored(&sim).await;
        hpa["status"] = json!({"currentReplicas": 2, "desiredReplicas": 2,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 30}}}],
            "conditions": [{"type": "AbleToScale", "status": "True", "reason": "SucceededGetScale",
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
        let (code, _) = sim.call("PUT", &format!("{V2}/web/status"), JSON, hpa.to_string()).await;
        assert_eq!(code, 200);
        let status_url = format!("{V1}/web/status");
        let (code, shown) = sim.call("GET", &status_url, None, "").await;
        assert_eq!(code, 200, "{shown}");
        assert_eq!(shown["apiVersion"], "autoscaling/v1");
        assert_eq!(shown["status"]["currentCPUUtilizationPercentage"], 30);
        let conditions = "autoscaling.alpha.kubernetes.io/conditions";
        assert!(shown["metadata"]["annotations"][conditions].as_str().unwrap().contains("SucceededGetScale"));
        // PUT of v1 status: the conditions come back from their annotation into v2's status.
        let mut written = shown.clone();
        written["status"]["currentCPUUtilizationPercentage"] = json!(40);
        written["status"]["currentReplicas"] = json!(3);
        let (code, answer) = sim.call("PUT", &status_url, JSON, written.to_string()).await;
        assert_eq!(code, 200, "{answer}");
        assert_eq!(answer["status"]["currentCPUUtilizationPercentage"], 40);
        let status = stored(&sim).await["status"].clone();
        assert_eq!(status["currentMetrics"][0]["resource"]["current"]["averageUtilization"], 40);
        assert_eq!(
            (status["currentReplicas"].clone(), status["conditions"][0]["reason"].clone()),
            (json!(3), json!("SucceededGetScale"))
        );
        // PATCH of v1 status: applied to v1's status, the rest kept.
        let merge = json!({"status": {"desiredReplicas": 4}});
        let (code, answer) =
            sim.call("PATCH", &status_url, Some("application/merge-patch+json"), merge.to_string()).await;
        assert_eq!(code, 200, "{answer}");
        let stored = stored(&sim).await;
        assert_eq!(
            (stored["status"]["desiredReplicas"].clone(), stored["status"]["currentReplicas"].clone()),
            (json!(4), json!(3))
        );
        assert_eq!(stored["status"]["conditions"][0]["reason"], "SucceededGetScale");
        assert_eq!(stored["spec"]["metrics"][0], utilization("cpu", 50), "a status write leaves the spec");
        assert!(stored["metadata"].get("annotations").is_none(), "{stored}");
    }

    #[tokio::test]
    async fn a_v1_table_with_whole_objects_carries_v1_objects() {
        let sim = Harness::start();
        web(&sim).await;
        let request = axum::http::Request::builder()
            .uri(format!("{V1}?includeObject=Object"))
            .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
            .body(axum::body::Body::empty())
            .unwrap();
        let response = sim.request(request).await;
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let table: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(table["kind"], "Table");
        assert_eq!(table["rows"][0]["object"]["apiVersion"], "autoscaling/v1", "{table}");
        assert_eq!(table["rows"][0]["object"]["spec"]["targetCPUUtilizationPercentage"], 50);
    }
}
