//! What every command runs with, in the domain's own terms: the language, the cluster target, the lab source.
//!
//! The CLI resolves the global flags into a [`Session`] (and each command's flags into that
//! command's options in `commands/`), so the commands, the lab model, the engine and the reports
//! never import `cli` or clap.

use std::path::PathBuf;

/// A language lab texts exist in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Japanese.
    Ja,
}

impl Lang {
    /// The language a `LANG`/`LC_ALL` value asks for: `ja_JP.UTF-8` → Japanese, else English.
    pub fn from_locale(locale: Option<&str>) -> Lang {
        match locale {
            Some(value) if value.to_ascii_lowercase().starts_with("ja") => Lang::Ja,
            _ => Lang::En,
        }
    }
}

/// Which cluster a command talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterTarget {
    /// Explicit kubeconfig path, or `None` for kube's default search.
    pub kubeconfig: Option<PathBuf>,
    /// Explicit context, or `None` for the kubeconfig's current one.
    pub context: Option<String>,
}

/// Where lab bundles come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabSource {
    /// The bundles compiled into the binary.
    BuiltIn,
    /// Bundles in a directory, for authoring.
    Dir(PathBuf),
}

/// The resolved global options: everything every command runs with, validated before any work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Language of everything printed.
    pub lang: Lang,
    /// Verbosity (0 = normal; `-v` 1, `-vv` 2).
    pub verbosity: u8,
    /// The cluster to talk to.
    pub cluster: ClusterTarget,
    /// Where labs come from.
    pub labs: LabSource,
}
