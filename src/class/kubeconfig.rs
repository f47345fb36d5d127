//! `class kubeconfig`: learners' kubeconfigs merged into one, a context per learner, never a viewer.
//!
//! Every simulator names its contexts `lab-runner-sim` and `lab-runner-sim-viewer`, so learners'
//! kubeconfigs cannot simply be concatenated: each learner's context, cluster and user are renamed
//! after the learner (the file's name, or the state directory's), and the read-only viewer
//! contexts are left out so that `check --contexts all` grades learners only.

use std::path::{Path, PathBuf};

use kube::config::{Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext};

use crate::{
    english_display,
    i18n::{Localized, Message},
    msg,
};

/// The file a simulator's state directory keeps its kubeconfig in (`sim up`).
pub const STATE_DIR_KUBECONFIG: &str = "kubeconfig";

/// Errors from merging kubeconfigs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input could not be read as a kubeconfig.
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why, on one line.
        reason: String,
    },
    /// An input holds no context that is not a viewer's.
    NoLearnerContext {
        /// The file.
        path: PathBuf,
    },
    /// A context names a cluster or user the file does not define.
    Dangling {
        /// The file.
        path: PathBuf,
        /// The context.
        context: String,
        /// `cluster` or `user`.
        what: &'static str,
    },
    /// `--name` was given, but not once per input.
    NameCount {
        /// How many names.
        names: usize,
        /// How many inputs.
        inputs: usize,
    },
}

impl Localized for Error {
    fn message(&self) -> Message {
        match self {
            Error::Unreadable { path, reason } => {
                msg!("class-kubeconfig-unreadable", path = path.display().to_string(), reason = reason)
            }
            Error::NoLearnerContext { path } => {
                msg!("class-kubeconfig-no-learner", path = path.display().to_string())
            }
            Error::Dangling { path, context, what: "cluster" } => {
                msg!(
                    "class-kubeconfig-dangling-cluster",
                    path = path.display().to_string(),
                    context = context
                )
            }
            Error::Dangling { path, context, .. } => {
                msg!("class-kubeconfig-dangling-user", path = path.display().to_string(), context = context)
            }
            Error::NameCount { names, inputs } => {
                msg!("class-kubeconfig-name-count", names = *names, inputs = *inputs)
            }
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Whether a context is a read-only viewer's (`lab-runner-sim-viewer`, `*-viewer`), which a class
/// never grades.
pub fn is_viewer_context(name: &str) -> bool {
    name.ends_with("-viewer")
}

/// The kubeconfig file of an input: the file itself, or a state directory's `kubeconfig`.
pub fn kubeconfig_file(input: &Path) -> PathBuf {
    if input.is_dir() { input.join(STATE_DIR_KUBECONFIG) } else { input.to_path_buf() }
}

/// The learner name an input gives: a directory's name, a file's name without its extension
/// (`alice.kubeconfig` → `alice`), or the directory's for a file named `kubeconfig`.
pub fn learner_name(input: &Path) -> String {
    let file_name = |path: &Path| path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = if input.is_dir() {
        file_name(input)
    } else if input.file_name().is_some_and(|n| n == STATE_DIR_KUBECONFIG) {
        input.parent().and_then(file_name)
    } else {
        input.file_stem().map(|n| n.to_string_lossy().into_owned())
    };
    name.filter(|n| !n.is_empty() && n != ".").unwrap_or_else(|| "learner".to_string())
}

/// Names made unique in order: a repeated name gets `-2`, `-3`, ….
fn unique(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let mut candidate = name.clone();
        let mut n = 2;
        while out.contains(&candidate) {
            candidate = format!("{name}-{n}");
            n += 1;
        }
        out.push(candidate);
    }
    out
}

/// Merges the learners' kubeconfigs (`inputs`: files or simulators' state directories) into one
/// with a context per learner, named from `names` (once per input, in order) or from the inputs;
/// the context, its cluster and its user all take the learner's name. The first learner's context
/// is current.
pub fn merge(inputs: &[PathBuf], names: &[String]) -> Result<Kubeconfig> {
    if !names.is_empty() && names.len() != inputs.len() {
        return Err(Error::NameCount { names: names.len(), inputs: inputs.len() });
    }
    let names = unique(if names.is_empty() {
        inputs.iter().map(|i| learner_name(i)).collect()
    } else {
        names.to_vec()
    });
    let mut merged =
        Kubeconfig { api_version: Some("v1".into()), kind: Some("Config".into()), ..Kubeconfig::default() };
    for (input, name) in inputs.iter().zip(names) {
        let path = kubeconfig_file(input);
        let config = Kubeconfig::read_from(&path).map_err(|e| Error::Unreadable {
            path: path.clone(),
            reason: crate::engine::cluster::one_line(&e),
        })?;
        let learner = config
            .current_context
            .as_deref()
            .filter(|c| !is_viewer_context(c))
            .and_then(|c| config.contexts.iter().find(|n| n.name == c))
            .or_else(|| config.contexts.iter().find(|n| !is_viewer_context(&n.name)))
            .ok_or_else(|| Error::NoLearnerContext { path: path.clone() })?;
        let context = learner.context.clone().unwrap_or_default();
        let dangling = |what| Error::Dangling { path: path.clone(), context: learner.name.clone(), what };
        let cluster =
            config.clusters.iter().find(|c| c.name == context.cluster).ok_or_else(|| dangling("cluster"))?;
        let user = config
            .auth_infos
            .iter()
            .find(|u| context.user.as_ref() == Some(&u.name))
            .ok_or_else(|| dangling("user"))?;
        merged.clusters.push(NamedCluster { name: name.clone(), ..cluster.clone() });
        merged.auth_infos.push(NamedAuthInfo { name: name.clone(), ..user.clone() });
        let mut renamed = context.clone();
        renamed.cluster = name.clone();
        renamed.user = Some(name.clone());
        merged.contexts.push(NamedContext { name: name.clone(), context: Some(renamed), ..learner.clone() });
        if merged.current_context.is_none() {
            merged.current_context = Some(name);
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_files_and_repeat_with_a_suffix() {
        assert_eq!(learner_name(Path::new("/class/alice.kubeconfig")), "alice");
        assert_eq!(learner_name(Path::new("/class/bob/kubeconfig")), "bob");
        assert_eq!(unique(vec!["a".into(), "b".into(), "a".into(), "a".into()]), ["a", "b", "a-2", "a-3"]);
        assert!(is_viewer_context("lab-runner-sim-viewer") && !is_viewer_context("lab-runner-sim"));
    }
}
