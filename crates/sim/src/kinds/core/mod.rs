//! The core group (`v1`): one file per kind, and `podspec`, the PodSpec every pod and pod
//! template shares.

pub mod componentstatus;
pub mod configmap;
pub mod event;
pub mod limitrange;
pub mod namespace;
pub mod node;
pub mod persistentvolumeclaim;
pub mod pod;
pub mod podspec;
pub mod resourcequota;
pub mod secret;
pub mod service;
pub mod serviceaccount;
pub mod taint;
