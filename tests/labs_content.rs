//! The shipped course content: every built-in lab lints clean through the built binary, the
//! course file lists them, bundle manifests match the reusable ones, and `labs list|show` text.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use lab_runner::lab::loader::{self, BundleRoot};
use serde_json::Value;

use crate::support::binary::{lab_runner, stderr, stdout};

const LABS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/labs");
const MANIFESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests");

/// The ids of the labs built into the binary.
fn built_in_ids() -> Vec<String> {
    loader::roots(&lab_runner::session::LabSource::BuiltIn)
        .unwrap()
        .iter()
        .map(BundleRoot::dir_name)
        .collect()
}

/// Every file under `dir`, as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_course_labs_are_built_in() {
    let ids = built_in_ids();
    for id in ["gpu-sharing", "stuck-rollout"] {
        assert!(ids.iter().any(|built| built == id), "{id} is not built in: {ids:?}");
    }
}

#[test]
fn every_built_in_lab_lints_clean() {
    let output = lab_runner().arg("lint").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "lint found problems:\n{}", stderr(&output));
    let ids = built_in_ids();
    assert!(
        stdout(&output).contains(&format!("{} labs clean", ids.len())),
        "unexpected summary: {}",
        stdout(&output)
    );
}

#[test]
fn the_course_file_lists_every_built_in_lab_once() {
    let read = loader::read_course(&lab_runner::session::LabSource::BuiltIn).unwrap();
    let problems: Vec<String> = read.problems.iter().map(ToString::to_string).collect();
    assert!(problems.is_empty(), "{problems:#?}");
    let course = read.course.expect("labs/course.yaml is built in");
    assert!(course.title.missing().is_empty(), "the course title needs en and ja");
    let mut listed: Vec<String> = course.labs.iter().map(|entry| entry.value.clone()).collect();
    listed.sort();
    assert_eq!(listed, built_in_ids(), "course.yaml and the built-in labs differ");
}

/// A `--labs` directory holding the built-in labs, the course file and the test fixture's bundle,
/// with the course file edited.
fn course_copy(edit: impl FnOnce(String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for id in built_in_ids() {
        copy_dir(&Path::new(LABS).join(&id), &dir.path().join(&id));
    }
    copy_dir(Path::new("tests/fixtures/labs"), dir.path());
    let course = std::fs::read_to_string(Path::new(LABS).join("course.yaml")).unwrap();
    std::fs::write(dir.path().join("course.yaml"), edit(course)).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    for relative in files_under(from) {
        let target = to.join(&relative);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&relative), target).unwrap();
    }
}

#[test]
fn a_bundle_outside_the_course_is_listed_after_it_marked() {
    let dir = course_copy(|course| course);
    let redact = |text: String| text.replace(&dir.path().display().to_string(), "[tmp]");
    for (lang, snapshot) in
        [("en", "labs_list_outside_the_course_en"), ("ja", "labs_list_outside_the_course_ja")]
    {
        let output = lab_runner()
            .arg("--labs")
            .arg(dir.path())
            .args(["--lang", lang, "labs", "list"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        insta::assert_snapshot!(snapshot, redact(stdout(&output)));
    }
    // Lint does not object: a bundle may exist outside the course (a draft, an extra).
    let output = lab_runner().arg("--labs").arg(dir.path()).arg("lint").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_course_entry_without_a_bundle_is_a_lint_problem_at_its_line_and_column() {
    let dir = course_copy(|course| {
        course.replace("  - stuck-rollout\n", "  - stuck-rollout\n  - gpu-sharring\n  - gpu-sharing\n")
    });
    let redact = |text: String| text.replace(&dir.path().display().to_string(), "[tmp]");
    let output = lab_runner().arg("--labs").arg(dir.path()).arg("lint").output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    let text = redact(stderr(&output));
    assert!(text.contains("[tmp]/course.yaml:11:5]"), "{text}");
    insta::assert_snapshot!("course_lint_problems", text);
    // `labs list` still lists what exists, and names the entry it cannot show.
    let output = lab_runner().arg("--labs").arg(dir.path()).args(["labs", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    insta::assert_snapshot!("labs_list_with_a_missing_course_entry", redact(stdout(&output)));
}

#[test]
fn a_malformed_course_file_stops_labs_list_with_its_line_and_column() {
    let dir = course_copy(|course| course.replace("labs:\n", "lab:\n"));
    let output = lab_runner().arg("--labs").arg(dir.path()).args(["labs", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    let text = stderr(&output).replace(&dir.path().display().to_string(), "[tmp]");
    assert!(text.starts_with("error: the course file [tmp]/course.yaml has 1 problem"), "{text}");
    assert!(text.contains("[tmp]/course.yaml:"), "{text}");
}

#[test]
fn bundle_manifests_are_copies_of_the_reusable_manifests() {
    let mut compared = 0;
    for id in built_in_ids() {
        let bundle_manifests = Path::new(LABS).join(&id).join("manifests");
        for relative in files_under(&bundle_manifests) {
            let reusable = Path::new(MANIFESTS).join(&relative);
            // A bundle may hold a lab-specific manifest (a starting state); only shared paths are copies.
            if !reusable.exists() {
                continue;
            }
            let copy = std::fs::read_to_string(bundle_manifests.join(&relative)).unwrap();
            let original = std::fs::read_to_string(&reusable).unwrap();
            assert_eq!(copy, original, "labs/{id}/manifests/{} drifted from manifests/", relative.display());
            compared += 1;
        }
    }
    assert!(compared >= 10, "only {compared} bundle manifests had a reusable original");
}

#[test]
fn every_reusable_manifest_names_its_objects() {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for relative in files_under(Path::new(MANIFESTS)) {
        if relative.extension().and_then(|e| e.to_str()) != Some("yaml") || relative.starts_with("clusters") {
            continue;
        }
        let text = std::fs::read_to_string(Path::new(MANIFESTS).join(&relative)).unwrap();
        let documents: Vec<Value> = serde_saphyr::from_multiple(&text)
            .unwrap_or_else(|e| panic!("manifests/{}: {e}", relative.display()));
        for document in documents {
            for field in ["/apiVersion", "/kind", "/metadata/name"] {
                assert!(
                    document.pointer(field).and_then(Value::as_str).is_some(),
                    "manifests/{}: a document has no {field}",
                    relative.display()
                );
            }
            *kinds.entry(document["kind"].as_str().unwrap().to_string()).or_default() += 1;
        }
    }
    insta::assert_yaml_snapshot!(kinds);
}

#[test]
fn labs_list_in_both_languages() {
    let en = lab_runner().args(["labs", "list"]).output().unwrap();
    assert_eq!(en.status.code(), Some(0), "{}", stderr(&en));
    insta::assert_snapshot!("labs_list_en", stdout(&en));
    let ja = lab_runner().args(["labs", "list"]).env("LANG", "ja_JP.UTF-8").output().unwrap();
    assert_eq!(ja.status.code(), Some(0), "{}", stderr(&ja));
    insta::assert_snapshot!("labs_list_ja", stdout(&ja));
}

#[test]
fn labs_show_in_both_languages() {
    for id in ["gpu-sharing", "stuck-rollout"] {
        let en = lab_runner().args(["labs", "show", id]).output().unwrap();
        assert_eq!(en.status.code(), Some(0), "{}", stderr(&en));
        insta::assert_snapshot!(format!("labs_show_{id}_en"), stdout(&en));
        let ja = lab_runner().args(["labs", "show", id]).env("LANG", "ja_JP.UTF-8").output().unwrap();
        assert_eq!(ja.status.code(), Some(0), "{}", stderr(&ja));
        insta::assert_snapshot!(format!("labs_show_{id}_ja"), stdout(&ja));
    }
}

#[test]
fn the_reference_alert_rule_fires_on_a_stalled_rollout_and_not_on_a_restored_one() {
    use lab_runner::grade::alert::{DaemonSetState, Evaluated, evaluate};
    let text =
        std::fs::read_to_string(Path::new(MANIFESTS).join("monitoring/daemonset-rollout-rule.yaml")).unwrap();
    let rule: Value = serde_saphyr::from_str(&text).unwrap();
    let expr = rule.pointer("/spec/groups/0/rules/0/expr").and_then(Value::as_str).unwrap();
    let (namespace, name) = ("gpu-operator", "nvidia-container-toolkit-daemonset");
    let samples = |state: DaemonSetState| match evaluate(expr, &state.series(namespace, name)).unwrap() {
        Evaluated::Vector(samples) => samples.len(),
        Evaluated::Scalar(_) => panic!("an alert expression yields a vector"),
    };
    assert!(samples(DaemonSetState::stalled(3)) > 0, "silent on the stalled rollout");
    assert_eq!(samples(DaemonSetState::restored(3)), 0, "fires on the restored DaemonSet");
    // The toleration variant: DESIRED dropped to 2 and every counter agrees with it.
    assert!(samples(DaemonSetState::restored(2)) > 0, "silent when DESIRED dropped below the GPU node count");
}
