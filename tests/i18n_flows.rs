//! The learner's and the instructor's flows through the built binary under `--lang ja`, against
//! `lab-runner sim up`: every line printed is Japanese, a command, an identifier or a quotation.
//!
//! The flows need no kubectl (the learner's moves are `lab-runner` commands only); one simulator
//! at 10× speed serves them. What needs kubectl is checked with the same detector elsewhere or
//! skipped with a reason: the reports of both labs at the start and once solved, every variant,
//! with every kind of evidence (`tests/lab_reports.rs` calls [`assert_japanese`]), and the
//! `selftest` transcript of a fixture lab here.
//!
//! Grading's evidence (the `·` lines under a task in `check`) is held to more than the rest: each
//! such line carries Japanese, since every evidence message of the catalog does.

use std::{
    path::{Path, PathBuf},
    process::Output,
};

use crate::support::binary::{lab_runner, stderr, stdout};

/// Whether `text` carries Japanese (kana or kanji).
fn has_japanese(text: &str) -> bool {
    text.chars().any(|c| matches!(c, '\u{3040}'..='\u{30ff}' | '\u{4e00}'..='\u{9fff}'))
}

/// `text` without its quotations: backticks and double quotes on each line, and 「」, which may
/// span lines (a parser's message quoted in a diagnostic that wraps).
fn unquoted(text: &str) -> String {
    let mut out = String::new();
    let mut closing: Option<char> = None;
    for c in text.chars() {
        match closing {
            Some('」') if c == '」' => closing = None,
            Some('」') if c == '\n' => out.push(c),
            Some(_) if c == '\n' => {
                // Backticks and double quotes close on their own line.
                closing = None;
                out.push(c);
            }
            Some(end) if c == end => closing = None,
            Some(_) => {}
            None => match c {
                '`' => closing = Some('`'),
                '"' => closing = Some('"'),
                '「' => closing = Some('」'),
                _ => out.push(c),
            },
        }
    }
    out
}

/// A word of an English sentence: letters only (a comma, period, colon or semicolon may follow),
/// at least two, not all capitals (column names and verdict codes are). Identifiers carry `-`,
/// `/`, `.`, `=` or digits and are not words.
fn is_english_word(token: &str) -> bool {
    let word = token.trim_end_matches([',', '.', ':', ';', ')']).trim_start_matches('(');
    word.len() >= 2
        && word.chars().all(|c| c.is_ascii_alphabetic() || c == '\'')
        && word.chars().any(|c| c.is_ascii_lowercase())
}

/// A line of a diagnostic's code snippet (`  28 │   points: two`, or `28 |` without colour): the
/// bundle's own YAML, quoted.
fn is_code_quotation(line: &str) -> bool {
    let trimmed = line.trim_start();
    let digits = trimmed.len() - trimmed.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && trimmed[digits..].trim_start().starts_with(['│', '|'])
}

/// Whether `line` is a command (or starts with one after a prompt or a bullet).
fn is_command(line: &str) -> bool {
    let trimmed = line.trim().trim_start_matches(['·', '$', '=', '-', '>', ' ']).trim_start();
    ["lab-runner ", "kubectl ", "export ", "echo "].iter().any(|c| trimmed.starts_with(c))
}

/// The English sentence in the line `line` of a text whose quotations are already removed
/// (`unquoted`): two words in a row (`5 objects applied` has no more), on a line that carries no
/// Japanese and is not a command. `original` is the line as printed.
fn english_run(original: &str, unquoted: &str) -> Option<String> {
    if has_japanese(original) || is_command(original) || is_code_quotation(original) {
        return None;
    }
    let mut run: Vec<&str> = Vec::new();
    for token in unquoted.split_whitespace() {
        if is_english_word(token) {
            run.push(token);
            if run.len() >= 2 {
                return Some(run.join(" "));
            }
        } else {
            run.clear();
        }
    }
    None
}

/// The English sentence in one line, if any.
fn english_sentence(line: &str) -> Option<String> {
    english_run(line, &unquoted(line))
}

/// What is wrong with `text` (one command's stream) under `--lang ja`: each English sentence and,
/// when `check_evidence`, each `·` evidence line without Japanese, with the line.
fn problems_in(text: &str, check_evidence: bool) -> Vec<String> {
    let stripped = unquoted(text);
    let mut found = Vec::new();
    // The column a multi-line command (`$ script…`, then its lines indented under it) goes on at.
    let mut command_column: Option<usize> = None;
    for (line, bare) in text.lines().zip(stripped.lines()) {
        let indent = line.len() - line.trim_start().len();
        if line.trim_start().starts_with("$ ") {
            command_column = Some(indent + 2);
            continue;
        }
        match command_column {
            Some(column) if indent >= column && !line.trim().is_empty() => continue,
            _ => command_column = None,
        }
        if let Some(sentence) = english_run(line, bare) {
            found.push(format!("English {sentence:?} in {line:?}"));
        } else if check_evidence && line.trim_start().starts_with('·') && !has_japanese(line) {
            found.push(format!("evidence without Japanese: {line:?}"));
        }
    }
    found
}

/// Asserts that `text`, what `command` printed under `--lang ja`, has no English sentence (and,
/// for a `check` report, no evidence line without Japanese). Used by other modules too.
pub(crate) fn assert_japanese(command: &str, text: &str) {
    let found = problems_in(text, command.contains("check"));
    assert!(found.is_empty(), "{command} under --lang ja:\n{}\n\n{text}", found.join("\n"));
}

#[test]
fn the_detector_tells_sentences_from_commands_identifiers_and_quotations() {
    for english in [
        "started stuck-rollout (variant image): 5 objects applied",
        "answer for affected-node recorded; lab-runner check stuck-rollout grades it",
        "  · no ResourceQuota exists in namespace team-a",
        "reset cancelled",
        "Press Ctrl-C to stop.",
        "  │ description, points, needs, kind",
    ] {
        assert!(english_sentence(english).is_some(), "{english}");
    }
    for fine in [
        "stuck-rollout を開始しました: 5 個のオブジェクトを適用",
        "  FAIL    affected-node   0/2",
        "NODE   POD   REVISION   IMAGE   STATE",
        "export KUBECONFIG=/tmp/x/kubeconfig",
        "kubeconfig: /tmp/x/kubeconfig",
        "  · `Back-off pulling image \"nvcr.io/nvidia/k8s/container-toolkit:v9\"`",
        "gpu-1  ts-4  time-slicing × 4  nvidia.com/gpu=4",
        "lab-runner check stuck-rollout --hint 1",
        " 95 │     needs: [find-nodes]",
    ] {
        assert_eq!(english_sentence(fine), None, "{fine}");
    }
    // A quotation in 「」 may wrap onto the next line; backticks and double quotes may not.
    let wrapped = "  × tasks[1].pointz: YAML を読めません: 「unknown field `pointz`, expected one of\n  │ id, title, description, points」\n";
    assert_eq!(problems_in(wrapped, false), Vec::<String>::new());
    assert_eq!(problems_in("`open quote\nthen plain English words\n", false).len(), 1);
    // A reference solution's script is a command, line by line.
    assert!(
        problems_in(
            "            $ for node in a b; do
              echo the node
              done
",
            false
        )
        .is_empty()
    );
    assert_eq!(
        problems_in(
            "            $ true
then plain English words
",
            false
        )
        .len(),
        1
    );
    // Evidence lines of a report must carry Japanese.
    assert_eq!(problems_in("            · node gpu-1: nvidia.com/gpu=4\n", true).len(), 1);
    assert!(problems_in("            · node gpu-1: 期待どおり\n", true).is_empty());
}

/// A simulator from `sim up`, stopped on drop.
struct Sim {
    dir: tempfile::TempDir,
}

impl Sim {
    fn up() -> (Sim, Output) {
        let dir = tempfile::tempdir().unwrap();
        let output = lab_runner()
            .args(["--lang", "ja", "sim", "up", "--speed", "10", "--state-dir"])
            .arg(dir.path().join("sim"))
            .output()
            .unwrap();
        assert!(output.status.success(), "sim up failed: {}", stderr(&output));
        (Sim { dir }, output)
    }

    fn state_dir(&self) -> PathBuf {
        self.dir.path().join("sim")
    }

    /// `lab-runner --lang ja --kubeconfig <ours> <args>`, run to the end.
    fn run(&self, args: &[&str]) -> Output {
        self.run_in(Japanese::Flag, args)
    }

    /// `lab-runner --kubeconfig <ours> <args>` in Japanese chosen the way `how` says, run to the end.
    fn run_in(&self, how: Japanese, args: &[&str]) -> Output {
        how.command()
            .arg("--kubeconfig")
            .arg(self.state_dir().join("kubeconfig"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    }
}

/// How a learner asks for Japanese: `--lang ja`, or a Japanese locale (`LANG=ja_JP.UTF-8`).
#[derive(Debug, Clone, Copy)]
enum Japanese {
    Flag,
    Locale,
}

impl Japanese {
    /// `lab-runner` in Japanese, the arguments still to add.
    fn command(self) -> assert_cmd::Command {
        let mut command = lab_runner();
        match self {
            Japanese::Flag => command.args(["--lang", "ja"]),
            Japanese::Locale => command.env("LANG", "ja_JP.UTF-8").env_remove("LAB_RUNNER_LANG"),
        };
        command
    }

    /// How it shows in a failure.
    fn shown(self) -> &'static str {
        match self {
            Japanese::Flag => "lab-runner --lang ja",
            Japanese::Locale => "LANG=ja_JP.UTF-8 lab-runner",
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = lab_runner().args(["sim", "down", "--state-dir"]).arg(self.state_dir()).output();
    }
}

/// What is wrong with a command's output under `--lang ja`, each with the command and the stream.
fn sentences(command: &str, output: &Output) -> Vec<String> {
    let check = command.contains(" check ");
    let mut found = Vec::new();
    for (stream, text) in [("stdout", stdout(output)), ("stderr", stderr(output))] {
        let evidence = check && stream == "stdout";
        found.extend(problems_in(&text, evidence).into_iter().map(|p| format!("{command} ({stream}): {p}")));
    }
    found
}

/// What a learner and an instructor run in a class, in Japanese asked for with `--lang ja` and
/// with `LANG=ja_JP.UTF-8`: both labs' commands, the help pages, typical usage errors, the
/// errors of a simulator already running or gone; every line of every output is checked. Exit
/// codes are asserted so a flow that breaks cannot pass by printing nothing.
#[test]
fn learner_and_instructor_flows_print_no_english_sentence_under_lang_ja() {
    let (sim, up) = Sim::up();
    let mut found = sentences("sim up", &up);
    // A second `sim up` on the same directory is refused in Japanese.
    let again = lab_runner()
        .args(["--lang", "ja", "sim", "up", "--state-dir"])
        .arg(sim.state_dir())
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    found.extend(sentences("lab-runner --lang ja sim up (again)", &again));
    let steps: &[(&[&str], i32)] = &[
        // Before anything is started: "not started", never a Kubernetes object's absence.
        (&["status", "stuck-rollout"], 1),
        (&["status", "gpu-sharing"], 1),
        // The learner.
        (&["labs", "list"], 0),
        (&["labs", "show", "stuck-rollout"], 0),
        (&["labs", "show", "stuck-rollout", "--variant", "nope"], 2),
        (&["start", "stuck-rollout", "--variant", "nope"], 2),
        (&["start", "stuck-rollout", "--seed", "7"], 0),
        (&["status", "stuck-rollout"], 0),
        (&["check", "stuck-rollout"], 1),
        (&["check", "stuck-rollout", "--hint", "1"], 1),
        (&["check", "stuck-rollout", "--details"], 1),
        (&["answer", "stuck-rollout", "affected-node", "gpu-9"], 2),
        (&["answer", "stuck-rollout", "affected-node", "gpu-1"], 0),
        (&["answer", "stuck-rollout", "no-such-task", "x"], 2),
        (&["answer", "stuck-rollout", "one-generation", "x"], 2),
        (&["answer", "stuck-rollout", "cause", "no-such-cause"], 2),
        (&["check", "stuck-rollout"], 1),
        (&["check", "stuck-rollout", "--format", "json"], 1),
        (&["status", "--daemonset", "nonsense"], 2),
        // The instructor.
        (&["status", "stuck-rollout", "--instructor"], 0),
        (&["check", "stuck-rollout", "--reveal"], 1),
        (&["reset", "stuck-rollout", "--dry-run"], 0),
        (&["reset", "stuck-rollout"], 2),
        (&["reset", "stuck-rollout", "--to-stage", "nope"], 2),
        (&["selftest", "stuck-rollout", "--variant", "nope"], 2),
        (&["reset", "stuck-rollout", "--yes"], 0),
        (&["reset", "stuck-rollout", "--remove", "--dry-run"], 0),
        (&["start", "gpu-sharing"], 0),
        (&["status", "gpu-sharing"], 0),
        (&["check", "gpu-sharing"], 1),
        (&["check", "gpu-sharing", "--hint", "2"], 1),
        (&["check", "gpu-sharing", "--details"], 1),
        (&["answer", "gpu-sharing", "old-manifest", "nvidia.com/mig-1g.5gb"], 0),
        (&["status", "gpu-sharing", "--instructor"], 0),
        (&["labs", "show", "gpu-sharing"], 0),
        (&["lint", "labs"], 0),
        (&["check", "stuck-rollout", "--context", "nope"], 2),
        (&["check", "stuck-rollout", "--watch", "--timeout", "1s"], 4),
        // Typical slips on the command line: clap's usage errors.
        (&["chek", "stuck-rollout"], 2),
        (&["check"], 2),
        (&["check", "stuck-rollout", "--hint", "abc"], 2),
        (&["check", "stuck-rollout", "--bogus-flag"], 2),
        (&["check", "stuck-rollout", "--format", "xml"], 2),
        (&["answer", "stuck-rollout"], 2),
        (&["reset", "stuck-rollout", "--remove", "--to-stage", "a"], 2),
    ];
    for how in [Japanese::Flag, Japanese::Locale] {
        for (args, code) in steps {
            let output = sim.run_in(how, args);
            let command = format!("{} {}", how.shown(), args.join(" "));
            assert_eq!(
                output.status.code(),
                Some(*code),
                "{command}\n{}{}",
                stdout(&output),
                stderr(&output)
            );
            found.extend(sentences(&command, &output));
        }
        // The help page of every command a learner or an instructor runs here, and of the tool.
        for command in [
            &[][..],
            &["labs"],
            &["labs", "show"],
            &["start"],
            &["status"],
            &["check"],
            &["answer"],
            &["reset"],
            &["selftest"],
            &["lint"],
            &["sim"],
            &["sim", "up"],
            &["sim", "status"],
            &["class", "up"],
        ] {
            let output = how.command().args(command).arg("--help").env("COLUMNS", "100").output().unwrap();
            let shown = format!("{} {} --help", how.shown(), command.join(" "));
            assert_eq!(output.status.code(), Some(0), "{shown}: {}", stderr(&output));
            assert!(stdout(&output).contains("使い方: "), "{shown}: {}", stdout(&output));
            found.extend(sentences(&shown, &output));
        }
        // Both labs removed, so that the next pass starts from the same cluster; the last pass
        // leaves them as the transcript below expects.
        for lab in ["stuck-rollout", "gpu-sharing"].into_iter().filter(|_| matches!(how, Japanese::Flag)) {
            let output = sim.run(&["reset", lab, "--remove", "--yes"]);
            assert_eq!(output.status.code(), Some(0), "reset {lab} --remove: {}", stderr(&output));
        }
    }
    // No kubeconfig at all: the error names the file and the next command, in Japanese.
    let missing = lab_runner()
        .args(["--lang", "ja", "--kubeconfig", "/nonexistent/kubeconfig", "check", "stuck-rollout"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    found.extend(sentences("lab-runner --lang ja --kubeconfig /nonexistent/kubeconfig check", &missing));
    // What start, answer and reset print, in both languages, reviewed as snapshots.
    for lang in ["ja", "en"] {
        let mut transcript = String::new();
        for args in [
            &["start", "stuck-rollout", "--seed", "7"][..],
            &["answer", "stuck-rollout", "affected-node", "gpu-1"],
            &["reset", "stuck-rollout", "--dry-run"],
            &["reset", "stuck-rollout", "--yes"],
            &["reset", "stuck-rollout", "--remove", "--yes"],
        ] {
            let output = lab_runner()
                .args(["--lang", lang, "--kubeconfig"])
                .arg(sim.state_dir().join("kubeconfig"))
                .args(args)
                .output()
                .unwrap();
            assert!(output.status.success(), "{args:?}: {}", stderr(&output));
            transcript += &format!("$ lab-runner --lang {lang} {}\n{}", args.join(" "), stdout(&output));
        }
        insta::assert_snapshot!(format!("start_answer_reset_{lang}"), transcript);
    }
    let status =
        lab_runner().args(["--lang", "ja", "sim", "status", "--state-dir"]).arg(sim.state_dir()).output();
    found.extend(sentences("sim status", &status.unwrap()));
    let down =
        lab_runner().args(["--lang", "ja", "sim", "down", "--state-dir"]).arg(sim.state_dir()).output();
    found.extend(sentences("sim down", &down.unwrap()));
    // The simulator is gone: what the operating system says (connection refused) is named in
    // Japanese, its own words quoted; `sim status` and `sim down` say there is none.
    for args in [&["check", "stuck-rollout"][..], &["status", "stuck-rollout"]] {
        let output = sim.run(args);
        assert_eq!(output.status.code(), Some(3), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains("接続が拒否されました"), "{args:?}: {}", stderr(&output));
        found.extend(sentences(&format!("lab-runner --lang ja {} (no simulator)", args.join(" ")), &output));
    }
    for args in [&["sim", "status"][..], &["sim", "down"]] {
        let output =
            lab_runner().args(["--lang", "ja"]).args(args).arg("--state-dir").arg(sim.state_dir()).output();
        let output = output.unwrap();
        assert_ne!(output.status.code(), Some(0), "{args:?}: {}", stdout(&output));
        found.extend(sentences(&format!("lab-runner --lang ja {} (none running)", args.join(" ")), &output));
    }
    assert!(found.is_empty(), "English under --lang ja:\n{}", found.join("\n"));
}

/// The course's fixture bundle (`tests/fixtures/labs/broken-daemonset`) copied into `dir` and
/// broken six ways: a manifest that is not YAML, an unknown `needs`, points at 0, a title without
/// its Japanese, a task title without its English, and a task left vacuous.
fn broken_bundle(dir: &Path) -> PathBuf {
    let bundle = dir.join("broken-daemonset");
    crate::lab::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/labs/broken-daemonset"),
        &bundle,
    );
    let edit = |file: &str, old: &str, new: &str| {
        let path = bundle.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(old), "{file} does not contain {old:?}");
        std::fs::write(&path, text.replacen(old, new, 1)).unwrap();
    };
    edit("manifests/namespace.yaml", "metadata:\n  name: lab-ds", "metadata:\n  name: [lab-ds");
    edit("lab.yaml", "    needs: [find-node]", "    needs: [find-nodes]");
    edit("lab.yaml", "    points: 1\n", "    points: 0\n");
    edit("lab.yaml", "  ja: 1 台のノードで止まった DaemonSet のロールアウトを直す\n", "");
    edit("lab.yaml", "      en: Delete the leftover debug pod\n", "");
    // Without the count, "clean-up" passes on an empty cluster: nothing named toolkit-debug exists there.
    edit(
        "lab.yaml",
        "      - count:\n          target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab-ds, name: toolkit}\n          op: \"==\"\n          value: 1\n",
        "",
    );
    bundle
}

/// `lint` of a bundle with several problems, in both languages: in Japanese every problem, label
/// and help line is Japanese, with the file:line:col, the YAML paths and the parser's words as
/// they are (quoted); both transcripts are snapshots.
#[test]
fn lint_of_a_broken_bundle_speaks_the_learners_language() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = broken_bundle(dir.path());
    for lang in ["ja", "en"] {
        let output =
            lab_runner().args(["--lang", lang, "lint"]).arg(&bundle).env("NO_COLOR", "1").output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let text = stderr(&output).replace(&dir.path().display().to_string(), "[tmp]");
        if lang == "ja" {
            assert_japanese("lab-runner --lang ja lint", &text);
        }
        insta::assert_snapshot!(format!("lint_broken_bundle_{lang}"), text);
    }
}

/// `selftest` of the quickest lab (a fixture that needs no GPU node) under `--lang ja`: the
/// progress lines, the transcript and the evidence it quotes, and an offence (a shortcut that
/// passes) named in Japanese.
#[test]
fn selftest_transcripts_read_in_japanese() {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/selftest");
    for (lab, code) in [("config-drift", 0), ("passing-shortcut", 1)] {
        let output = lab_runner()
            .args(["--lang", "ja", "--labs"])
            .arg(&fixtures)
            .args(["selftest", lab])
            .output()
            .unwrap();
        let command = format!("lab-runner --lang ja selftest {lab}");
        assert_eq!(output.status.code(), Some(code), "{command}\n{}{}", stdout(&output), stderr(&output));
        let found = sentences(&command, &output);
        assert!(found.is_empty(), "English under --lang ja:\n{}", found.join("\n"));
        insta::assert_snapshot!(format!("selftest_{lab}_ja"), stdout(&output));
    }
}
