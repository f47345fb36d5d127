//! Lab bundles: loader and lint diagnostics for every error case (snapshotted), the committed JSON
//! Schema, and `lint` / `labs list|show` through the built binary.

use std::path::{Path, PathBuf};

use lab_runner::{
    engine::lint,
    lab::{
        loader::{self, BundleRoot},
        model,
    },
};
use miette::GraphicalTheme;

use crate::support::binary::{lab_runner, stderr, stdout};

const FIXTURES: &str = "tests/fixtures/labs";
const LAB: &str = "broken-daemonset";

/// A copy of the fixture bundle in a temporary directory, to break on purpose.
struct BrokenCopy {
    dir: tempfile::TempDir,
}

impl BrokenCopy {
    fn new() -> BrokenCopy {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&Path::new(FIXTURES).join(LAB), &dir.path().join(LAB));
        BrokenCopy { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join(LAB)
    }

    /// Replaces `old` (which must occur) by `new` in a file of the bundle.
    fn edit(&self, file: &str, old: &str, new: &str) -> &BrokenCopy {
        let path = self.root().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(old), "{file} does not contain {old:?}");
        std::fs::write(&path, text.replacen(old, new, 1)).unwrap();
        self
    }

    /// Every problem lint finds, rendered as the CLI renders them (without colour), with the
    /// temporary directory replaced by `[tmp]`.
    fn lint(&self) -> String {
        let report = lint::lint_root(BundleRoot::Dir(self.root())).unwrap();
        assert!(!report.problems.is_empty(), "expected problems");
        let rendered: Vec<String> = report
            .problems
            .iter()
            .map(|p| {
                format!("{p}\n{}", p.render(GraphicalTheme::unicode_nocolor(), lab_runner::session::Lang::En))
            })
            .collect();
        self.redact(&rendered.join("\n"))
    }

    /// The loader's verdict alone (what `start` and `labs` see).
    fn load_error(&self) -> String {
        match loader::load(BundleRoot::Dir(self.root())) {
            Ok(_) => panic!("the broken bundle loaded"),
            Err(error) => self.redact(&error.to_string()),
        }
    }

    fn redact(&self, text: &str) -> String {
        text.replace(&self.dir.path().display().to_string(), "[tmp]")
    }
}

/// Copies the directory `from` to `to`, recursively (also for tests/i18n_flows.rs).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

// ---- the fixture itself ------------------------------------------------------------------------

#[test]
fn the_fixture_loads_and_lints_clean() {
    let bundle = loader::load_path(&Path::new(FIXTURES).join(LAB)).unwrap();
    assert_eq!(bundle.lab.id.value, LAB);
    assert_eq!(bundle.lab.tasks.len(), 3);
    assert_eq!(bundle.lab.total_points(), 8);
    assert_eq!(bundle.manifests.len(), 5, "{:?}", bundle.manifests.keys());
    assert_eq!(bundle.manifests["manifests/toolkit.yaml"][0]["kind"], "DaemonSet");
    assert!(bundle.expected.contains_key("expected/toolkit-restored.yaml"));
    let report = lint::lint_root(BundleRoot::Dir(Path::new(FIXTURES).join(LAB))).unwrap();
    let problems: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
    assert!(problems.is_empty(), "{problems:#?}");
    // The seed picks a variant reproducibly.
    let picks: Vec<&str> =
        (0..4).map(|seed| bundle.lab.variant_for_seed(seed).unwrap().id.value.as_str()).collect();
    assert_eq!(
        picks,
        (0..4).map(|seed| bundle.lab.variant_for_seed(seed).unwrap().id.value.as_str()).collect::<Vec<_>>()
    );
    assert!(picks.iter().all(|id| ["image", "resources"].contains(id)));
}

#[test]
fn the_lab_yaml_file_path_is_accepted_too() {
    let bundle = loader::load_path(&Path::new(FIXTURES).join(LAB).join("lab.yaml")).unwrap();
    assert_eq!(bundle.lab_file(), "tests/fixtures/labs/broken-daemonset/lab.yaml");
}

// ---- loader errors -----------------------------------------------------------------------------

#[test]
fn malformed_yaml_points_at_line_and_column() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "  - id: baseline\n    manifests:", "  - id: baseline\n   manifests:");
    insta::assert_snapshot!(copy.lint());
    assert_eq!(copy.load_error(), "lab bundle [tmp]/broken-daemonset has 1 problem");
}

#[test]
fn an_unknown_field_is_rejected_with_its_path() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "    points: 5\n", "    points: 5\n    pointz: 3\n");
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn a_wrong_type_is_rejected_with_its_path() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "          op: \"<=\"\n", "          op: \"=<\"\n");
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn missing_manifest_and_expected_files() {
    let copy = BrokenCopy::new();
    copy.edit(
        "lab.yaml",
        "manifests: [manifests/toolkit-bad-image.yaml]",
        "manifests: [manifests/toolkit-bad-imag.yaml]",
    )
    .edit(
        "lab.yaml",
        "expectedFile: expected/toolkit-restored.yaml",
        "expectedFile: expected/restored.yaml",
    );
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn paths_must_stay_inside_the_bundle() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "      - manifests/namespace.yaml", "      - ../other/namespace.yaml");
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn malformed_yaml_in_a_manifest_points_into_that_file() {
    let copy = BrokenCopy::new();
    copy.edit("manifests/namespace.yaml", "metadata:\n  name: lab-ds", "metadata:\n  name: [lab-ds");
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn unknown_needs_and_duplicate_ids() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "    needs: [find-node]", "    needs: [find-nodes]")
        .edit("lab.yaml", "  - id: break", "  - id: baseline")
        .edit("lab.yaml", "  - id: clean-up", "  - id: restore");
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn needs_cycles() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "    kind: quiz\n", "    kind: quiz\n    needs: [clean-up]\n");
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn stage_variants_and_waits_are_checked() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "      resources:\n        manifests", "      resource:\n        manifests").edit(
        "lab.yaml",
        "            symptom: imagePullBackOff\n",
        "",
    );
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn lists_without_declared_semantics_are_rejected() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "          lists:\n            status.containerStatuses: none\n", "");
    insta::assert_snapshot!(copy.lint());
}

// ---- lint rules --------------------------------------------------------------------------------

#[test]
fn lint_rejects_vacuous_tasks() {
    let copy = BrokenCopy::new();
    // Without the count, "clean-up" passes on an empty cluster: nothing named toolkit-debug exists there.
    copy.edit(
        "lab.yaml",
        "      - count:\n          target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab-ds, name: toolkit}\n          op: \"==\"\n          value: 1\n",
        "",
    );
    insta::assert_snapshot!(copy.lint());
}

/// Every field path is resolved against its kind's schema: an expected file's key, a quantity's
/// path, an inline expected object's key (null on a field that does not exist says why), a
/// target's kind, a CEL expression's field selections; a CEL expression that does not compile
/// is a loader problem at its line and column inside the expression.
#[test]
fn lint_resolves_every_path_against_the_schema_and_compiles_every_expression() {
    let copy = BrokenCopy::new();
    copy.edit("expected/toolkit-restored.yaml", "          image:", "          imag:")
        .edit("lab.yaml", "path: spec.template.spec.containers[0]", "path: spec.template.spec.container[0]")
        .edit(
            "lab.yaml",
            "            status:\n              containerStatuses:",
            "            status:\n              unavailableReplica: null\n              containerStatuses:",
        )
        .edit("lab.yaml", "kind: DaemonSet, namespace: lab-ds, name: toolkit}\n          op: \"==\"", "kind: DaemonSets, namespace: lab-ds, name: toolkit}\n          op: \"==\"")
        .edit(
            "lab.yaml",
            "    hints:\n      - en: A DaemonSet keeps",
            "      - cel:\n          target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab-ds, name: toolkit}\n          \
             expression: object.status.numberReady == object.status.desiredNumberSchedule\n      \
             - cel:\n          targets:\n            pods: {apiVersion: v1, kind: Pod, namespace: lab-ds}\n          \
             expression: \"pods.all(p, p.spec.nodeNam != '')\"\n      \
             - cel:\n          targets:\n            pods: {apiVersion: v1, kind: Pod, namespace: lab-ds}\n          \
             expression: \"size(pod) > 0\"\n      \
             - cel:\n          targets:\n            pods: {apiVersion: v1, kind: Pod, namespace: lab-ds}\n          \
             expression: >-\n            size(pods) > 0 &&\n    hints:\n      - en: A DaemonSet keeps",
        );
    let report = lint::lint_root(BundleRoot::Dir(copy.root())).unwrap();
    let lines: Vec<String> = report.problems.iter().map(|p| copy.redact(&p.to_string())).collect();
    assert_eq!(
        lines,
        [
            "[tmp]/broken-daemonset/expected/toolkit-restored.yaml:7:11: DaemonSet has no field spec.template.spec.containers[0].imag",
            "[tmp]/broken-daemonset/lab.yaml:104:17: DaemonSet has no field spec.template.spec.container",
            "[tmp]/broken-daemonset/lab.yaml:115:15: Pod has no field status.unavailableReplica: `null` there means absent, so it would hold on every object",
            "[tmp]/broken-daemonset/lab.yaml:130:66: DaemonSet has no field status.desiredNumberSchedule",
            "[tmp]/broken-daemonset/lab.yaml:134:43: Pod has no field spec.nodeNam",
            "[tmp]/broken-daemonset/lab.yaml:138:29: task \"restore\", expectation 7 (cel): the CEL expression does not compile: \
             undeclared reference to 'pod' (in container '')",
            "[tmp]/broken-daemonset/lab.yaml:143:30: task \"restore\", expectation 8 (cel): the CEL expression does not compile: \
             Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', \
             NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
            "[tmp]/broken-daemonset/lab.yaml:167:41: apps/v1 has no kind DaemonSets",
        ]
    );
}

#[test]
fn lint_rejects_missing_hints_texts_and_points() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "  ja: 1 台のノードで止まった DaemonSet のロールアウトを直す\n", "")
        .edit("lab.yaml", "      en: Delete the leftover debug pod\n", "")
        .edit("lab.yaml", "    points: 1\n", "    points: 0\n")
        .edit(
            "lab.yaml",
            "    hints:\n      - en: Look for pods in lab-ds that no controller owns.\n        ja: lab-ds の中で、どのコントローラーにも属さない Pod を探してください。\n      - en: \"`kubectl delete pod` removes one pod.\"\n        ja: \"`kubectl delete pod` で Pod を 1 つ削除できます。\"\n      - en: kubectl -n lab-ds delete pod toolkit-debug\n        ja: kubectl -n lab-ds delete pod toolkit-debug\n",
            "",
        );
    insta::assert_snapshot!(copy.lint());
}

#[test]
fn lint_reports_every_problem_not_just_the_first() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "    needs: [find-node]", "    needs: [nope]")
        .edit("lab.yaml", "    points: 2\n", "    points: -2\n")
        .edit("manifests/debug-pod.yaml", "  name: toolkit-debug\n", "");
    let report = lint::lint_root(BundleRoot::Dir(copy.root())).unwrap();
    let lines: Vec<String> = report.problems.iter().map(|p| copy.redact(&p.to_string())).collect();
    insta::assert_snapshot!(lines.join("\n"));
}

// ---- the schema --------------------------------------------------------------------------------

#[test]
fn the_committed_schema_is_generated_from_the_model() {
    let path = Path::new("docs/lab.schema.json");
    let generated = model::json_schema();
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/lab.schema.json differs from the schema generated from src/lab/model.rs; \
         regenerate it with `UPDATE_SCHEMA=1 cargo test --test integration lab::the_committed_schema` and commit it"
    );
}

// ---- through the binary ------------------------------------------------------------------------

#[test]
fn cli_lint_passes_on_the_fixture() {
    let output = lab_runner().args(["--labs", FIXTURES, "lint"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "lint: 1 lab clean (broken-daemonset)\n");
    // Graded tasks without shortcuts are a warning, not a problem: the exit code stays 0.
    assert_eq!(
        stderr(&output),
        "warning: tests/fixtures/labs/broken-daemonset/lab.yaml:87:9: task \"restore\" declares no shortcuts\n\
         warning: tests/fixtures/labs/broken-daemonset/lab.yaml:137:9: task \"clean-up\" declares no shortcuts\n"
    );
    let output = lab_runner().args(["lint", "tests/fixtures/labs/broken-daemonset"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn cli_lint_fails_with_file_line_col_and_exit_2_on_a_broken_copy() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "    needs: [find-node]", "    needs: [find-nodes]").edit(
        "lab.yaml",
        "    points: 1\n",
        "    points: 0\n",
    );
    let output = lab_runner().arg("lint").arg(copy.root()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = copy.redact(&stderr(&output));
    assert!(text.contains("[tmp]/broken-daemonset/lab.yaml:95:13"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn cli_commands_that_load_a_broken_lab_exit_2_with_the_problems() {
    let copy = BrokenCopy::new();
    copy.edit("lab.yaml", "    points: 5\n", "    points: 5\n    pointz: 3\n");
    let output = lab_runner().arg("--labs").arg(copy.dir.path()).args(["labs", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = copy.redact(&stderr(&output));
    assert!(text.starts_with("error: lab bundle [tmp]/broken-daemonset has 1 problem\n"), "{text}");
    assert!(text.contains("tasks[1].pointz: unknown field `pointz`"), "{text}");
    assert!(text.contains("[tmp]/broken-daemonset/lab.yaml:95:5"), "{text}");
}

#[test]
fn cli_labs_list_in_english_and_japanese() {
    let en = lab_runner().args(["--labs", FIXTURES, "labs", "list"]).output().unwrap();
    assert_eq!(en.status.code(), Some(0), "{}", stderr(&en));
    insta::assert_snapshot!("labs_list_en", stdout(&en));
    let ja =
        lab_runner().args(["--labs", FIXTURES, "labs", "list"]).env("LANG", "ja_JP.UTF-8").output().unwrap();
    assert_eq!(ja.status.code(), Some(0), "{}", stderr(&ja));
    insta::assert_snapshot!("labs_list_ja", stdout(&ja));
}

#[test]
fn cli_labs_show() {
    let en = lab_runner().args(["--labs", FIXTURES, "labs", "show", LAB]).output().unwrap();
    assert_eq!(en.status.code(), Some(0), "{}", stderr(&en));
    insta::assert_snapshot!("labs_show_en", stdout(&en));
    let ja = lab_runner().args(["--labs", FIXTURES, "--lang", "ja", "labs", "show", LAB]).output().unwrap();
    insta::assert_snapshot!("labs_show_ja", stdout(&ja));
}

#[test]
fn cli_labs_show_reveal_shows_a_variantless_labs_answers_and_shortcuts() {
    let output = lab_runner()
        .args(["--labs", "tests/fixtures/selftest", "labs", "show", "config-drift"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stdout(&output).contains("almost-fixed"), "shortcuts only for instructors");
    let revealed = lab_runner()
        .args(["--labs", "tests/fixtures/selftest", "labs", "show", "config-drift", "--reveal"])
        .output()
        .unwrap();
    assert_eq!(revealed.status.code(), Some(0), "{}", stderr(&revealed));
    let text = stdout(&revealed);
    assert!(text.starts_with(&stdout(&output)), "{text}");
    assert!(
        text.ends_with(
            "\nQuiz answers (instructors):\n\nShortcuts (selftest proves none passes):\n\
             \x20 fix-mode/almost-fixed: A typo in the value.\n\
             \x20 fix-mode/delete-settings: Delete the ConfigMap instead of fixing it.\n\
             \x20 marker/marker-not-done: A marker that says no.\n"
        ),
        "{text}"
    );
    // A lab with variants: every variant's answers, then the shortcuts once.
    let variants = lab_runner().args(["--labs", FIXTURES, "labs", "show", LAB, "--reveal"]).output().unwrap();
    let text = stdout(&variants);
    assert_eq!(text.matches("Quiz answers in this variant:").count(), 2, "{text}");
    assert_eq!(text.matches("Shortcuts (selftest proves none passes):").count(), 1, "{text}");
}

#[test]
fn cli_a_lab_that_is_not_built_in_points_at_labs_dir() {
    let output =
        lab_runner().args(["answer", "quota-rollout", "stuck-replicaset", "web-1"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: no lab named \"quota-rollout\" is built in (built-in labs: gpu-sharing, stuck-rollout); \
         a lab bundle in a directory is read with `--labs DIR` or `LAB_RUNNER_LABS=DIR`\n"
    );
}

#[test]
fn cli_unknown_lab_exits_2_with_the_known_ids() {
    let output = lab_runner().args(["--labs", FIXTURES, "labs", "show", "stuck-rollout"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: no lab named \"stuck-rollout\"; known labs: broken-daemonset\n");
}

#[test]
fn cli_built_in_labs_are_listed_honestly() {
    let output = lab_runner().args(["labs", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let ids: Vec<String> = loader::roots(&lab_runner::session::LabSource::BuiltIn)
        .unwrap()
        .iter()
        .map(BundleRoot::dir_name)
        .collect();
    if ids.is_empty() {
        assert!(stdout(&output).starts_with("No labs are built into this binary yet"), "{}", stdout(&output));
    } else {
        for id in ids {
            assert!(stdout(&output).contains(&id), "{id} missing from {}", stdout(&output));
        }
    }
}

// ---- the format documentation ------------------------------------------------------------------

#[test]
fn the_format_docs_examples_parse_and_the_complete_example_is_the_fixture() {
    let doc = std::fs::read_to_string("docs/lab-format.md").unwrap();
    let mut checked = Vec::new();
    for marked in crate::support::docs::marked_blocks(&doc) {
        let block = &marked.block;
        match (marked.directive.as_str(), marked.argument.as_str()) {
            ("parse", "expectations") => {
                let parsed: Vec<model::Expectation> =
                    serde_saphyr::from_str(block).unwrap_or_else(|e| panic!("{e}\n{block}"));
                assert!(!parsed.is_empty());
            }
            ("parse", "stages") => {
                let parsed: Vec<model::Stage> =
                    serde_saphyr::from_str(block).unwrap_or_else(|e| panic!("{e}\n{block}"));
                assert!(!parsed.is_empty());
            }
            ("parse", "lab") => {
                let lab: model::Lab =
                    serde_saphyr::from_str(block).unwrap_or_else(|e| panic!("{e}\n{block}"));
                assert_eq!(lab.variants.len(), 3, "stuck-rollout has three variants");
            }
            ("same-as", path) => {
                assert_eq!(
                    *block,
                    std::fs::read_to_string(path).unwrap(),
                    "docs/lab-format.md's copy of {path}"
                );
            }
            // The walk-through's files: built into a lab, linted and selftested by
            // `selftest::the_lab_format_guide_builds_a_lab_that_lints_clean_and_selftests_green`.
            ("guide", _) => {}
            (directive, argument) => panic!("unknown directive {directive:?} {argument:?}"),
        }
        checked.push(format!("{}: {}", marked.directive, marked.argument));
    }
    assert!(checked.len() >= 12, "{checked:?}");
}

#[test]
fn cli_lint_without_labs_says_there_is_nothing_to_check() {
    let empty = tempfile::tempdir().unwrap();
    let output = lab_runner().arg("--labs").arg(empty.path()).arg("lint").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "lint: no lab bundles to check\n");
    let output = lab_runner().arg("lint").arg(empty.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).ends_with(": not a lab bundle (no lab.yaml)\n"), "{}", stderr(&output));
}

#[test]
fn cli_lint_of_a_directory_of_bundles_lints_each_and_the_course() {
    let output = lab_runner().args(["lint", "labs"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "lint: 2 labs clean (gpu-sharing, stuck-rollout)\n");

    // A copy of labs/ with a course entry naming no bundle, an unknown field in one lab.yaml (it
    // cannot be read any further) and broken YAML in two of that bundle's manifests: every one
    // of them is listed, with its file.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(Path::new("labs"), dir.path());
    let edit = |file: &str, old: &str, new: &str| {
        let path = dir.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(old), "{file} does not contain {old:?}");
        std::fs::write(&path, text.replacen(old, new, 1)).unwrap();
    };
    edit("course.yaml", "  - stuck-rollout\n", "  - stuck-rollout\n  - no-such-lab\n");
    edit("stuck-rollout/lab.yaml", "  - id: cause\n", "  - id: cause\n    bogusField: 1\n");
    for manifest in ["image", "resources"] {
        let path =
            dir.path().join(format!("stuck-rollout/manifests/container-toolkit/broken/{manifest}.yaml"));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text + "  broken: [unclosed\n").unwrap();
    }
    let output = lab_runner().arg("lint").arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    let errors = stderr(&output);
    for file in [
        "course.yaml",
        "stuck-rollout/lab.yaml",
        "stuck-rollout/manifests/container-toolkit/broken/image.yaml",
        "stuck-rollout/manifests/container-toolkit/broken/resources.yaml",
    ] {
        assert!(
            errors.contains(&dir.path().join(file).display().to_string()),
            "{file} not listed:\n{errors}"
        );
    }
    assert!(errors.ends_with("lint: 4 problems in the course file and 1 lab of 2\n"), "{errors}");
}
