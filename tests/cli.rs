//! The CLI through the built binary: help, completions, exit codes.

use crate::support::binary::{lab_runner, stderr, stdout};

#[test]
fn help_lists_every_command() {
    let output = lab_runner().arg("--help").env("COLUMNS", "100").output().unwrap();
    assert!(output.status.success());
    insta::assert_snapshot!(stdout(&output));
}

/// Every command's path in the built tree (`[]`, `["check"]`, `["sim", "up"]`), clap's `help`
/// command left out (its page is the command's own).
fn command_paths(command: &clap::Command, path: Vec<String>, into: &mut Vec<Vec<String>>) {
    into.push(path.clone());
    for sub in command.get_subcommands().filter(|sub| sub.get_name() != "help") {
        let mut sub_path = path.clone();
        sub_path.push(sub.get_name().to_string());
        command_paths(sub, sub_path, into);
    }
}

/// Every command's `--help` through the binary, in English and in Japanese: one snapshot per
/// language holding every page, and no English sentence on a Japanese page.
#[test]
fn every_help_page_in_both_languages() {
    let mut paths = Vec::new();
    command_paths(&lab_runner::cli::command(lab_runner::session::Lang::En), Vec::new(), &mut paths);
    assert!(paths.len() > 20, "{paths:?}");
    for lang in ["en", "ja"] {
        let mut pages = String::new();
        for path in &paths {
            let output = lab_runner()
                .args(["--lang", lang])
                .args(path)
                .arg("--help")
                .env("COLUMNS", "100")
                .output()
                .unwrap();
            let shown = format!("lab-runner --lang {lang} {} --help", path.join(" "));
            assert_eq!(output.status.code(), Some(0), "{shown}: {}", stderr(&output));
            let page = stdout(&output);
            if lang == "ja" {
                crate::i18n_flows::assert_japanese(&shown, &page);
            }
            pages += &format!("$ {shown}\n{page}\n");
        }
        insta::assert_snapshot!(format!("help_pages_{lang}"), pages);
    }
}

/// clap's usage errors under `--lang ja`: Japanese sentences around the flags and values, the
/// same exit code 2 as in English.
#[test]
fn usage_errors_in_japanese_exit_2() {
    let mut transcript = String::new();
    for args in [
        &["check", "x", "--bogus-flag"][..],
        &["check", "x", "--hint", "abc"],
        &["check", "x", "--format", "xml"],
        &["chek", "x"],
        &["check"],
        &["reset", "x", "--remove", "--to-stage", "a"],
        &["check", "x", "--detail"],
        &["sim", "up", "--port", "99999"],
        &["class", "board", "--listen", "nowhere"],
        &["check", "x", "--watch", "--timeout", "abc"],
    ] {
        let output = lab_runner().args(["--lang", "ja"]).args(args).output().unwrap();
        let shown = format!("lab-runner --lang ja {}", args.join(" "));
        assert_eq!(output.status.code(), Some(2), "{shown}: {}", stderr(&output));
        let text = stderr(&output);
        assert!(text.starts_with("エラー: "), "{shown}: {text}");
        crate::i18n_flows::assert_japanese(&shown, &text);
        transcript += &format!("$ {shown}\n{text}\n");
    }
    insta::assert_snapshot!(transcript);
}

#[test]
fn completions_print_a_bash_script() {
    let output = lab_runner().args(["completions", "bash"]).output().unwrap();
    assert!(output.status.success());
    let script = stdout(&output);
    assert!(script.contains("complete -F _lab__runner"), "{script}");
    assert!(script.contains("selftest"));
}

#[test]
fn usage_errors_exit_2() {
    let output = lab_runner().arg("no-such-command").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unrecognized subcommand"));
}

#[test]
fn missing_labs_dir_is_bad_input() {
    let output = lab_runner().args(["--labs", "/nonexistent/labs", "labs", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: --labs /nonexistent/labs: not a directory\n");
}

/// The README's first command, end to end through the binary: a fresh simulator, `start`, the
/// reference solution with real kubectl, `check` — on the variant whose column to read differs
/// (DESIRED drops; the restored template differs from the broken one only in its tolerations).
#[test]
fn demo_runs_the_stuck_rollout_lab_to_a_full_score() {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let output = lab_runner().args(["demo", "stuck-rollout", "--variant", "toleration"]).output().unwrap();
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{}", stderr(&output));
    assert!(out.contains("started stuck-rollout (variant toleration)"), "{out}");
    assert!(out.contains("score 14/14"), "{out}");
}

/// A simulator's kubeconfig as `sim up` writes it (both contexts), for the server `port`.
fn simulator_kubeconfig(port: u16, token: &str) -> String {
    lab_runner::sim::kubeconfig::render(&lab_runner::sim::kubeconfig::Access {
        server: &format!("https://127.0.0.1:{port}"),
        ca_pem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        admin_token: token,
        viewer_token: "viewer",
    })
}

#[test]
fn class_kubeconfig_merges_learners_and_grading_checks_their_contexts() {
    let dir = tempfile::tempdir().unwrap();
    // One learner as a file, one as a simulator's state directory, one more with the same name.
    std::fs::write(dir.path().join("alice.kubeconfig"), simulator_kubeconfig(1, "a")).unwrap();
    let bob = dir.path().join("bob");
    std::fs::create_dir(&bob).unwrap();
    std::fs::write(bob.join("kubeconfig"), simulator_kubeconfig(2, "b")).unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("alice.yaml"), simulator_kubeconfig(3, "c")).unwrap();
    let merged = dir.path().join("class.kubeconfig");
    let output = lab_runner()
        .args(["class", "kubeconfig", "alice.kubeconfig", "bob", "other/alice.yaml", "-o"])
        .arg(&merged)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let config = kube::config::Kubeconfig::read_from(&merged).unwrap();
    let contexts: Vec<&str> = config.contexts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(contexts, ["alice", "bob", "alice-2"], "no viewer context, unique names");
    let servers: Vec<String> = config
        .clusters
        .iter()
        .map(|c| c.cluster.as_ref().and_then(|c| c.server.clone()).unwrap_or_default())
        .collect();
    assert_eq!(servers, ["https://127.0.0.1:1", "https://127.0.0.1:2", "https://127.0.0.1:3"]);
    for context in &config.contexts {
        let inner = context.context.as_ref().unwrap();
        assert_eq!(
            (inner.cluster.as_str(), inner.user.as_deref()),
            (context.name.as_str(), Some(context.name.as_str()))
        );
    }
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&merged).unwrap().permissions().mode() & 0o777, 0o600, "it holds tokens");

    // Names given on the command line, once per input.
    let named = lab_runner()
        .args(["class", "kubeconfig", "alice.kubeconfig", "bob", "--name", "a1", "--name", "b1"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(named.status.success(), "{}", stderr(&named));
    let named: kube::config::Kubeconfig = serde_json::from_str(&stdout(&named)).unwrap();
    assert_eq!(named.contexts.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a1", "b1"]);
    let miscounted = lab_runner()
        .args(["class", "kubeconfig", "bob", "--name", "x", "--name", "y"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(miscounted.status.code(), Some(2), "{}", stderr(&miscounted));

    // An unknown context is bad input naming the known ones, for one context and for a class,
    // before any cluster is contacted.
    for flag in [["--context", "nope"], ["--contexts", "alice,nope"]] {
        let output = lab_runner()
            .arg("--kubeconfig")
            .arg(&merged)
            .args(["check", "stuck-rollout"])
            .args(flag)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{flag:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("has no context \"nope\"; its contexts: alice, bob, alice-2"),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn no_kubeconfig_names_the_file_and_suggests_sim_up() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere.kubeconfig");
    let output =
        lab_runner().arg("--kubeconfig").arg(&missing).args(["status", "stuck-rollout"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(
        error.contains(&missing.display().to_string()) && error.contains("`lab-runner sim up`"),
        "{error}"
    );
}
