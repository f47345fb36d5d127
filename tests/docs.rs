//! The documentation is tested: its `console` examples run, its command lines parse, its tables match the binary and the tree.
//!
//! - Every ```` ```console ```` block of README.md and docs/ runs through trycmd (`$ command`, then
//!   its stdout and stderr; `[..]` stands for what differs within a line, a `...` line for lines
//!   left out, `? N` for an exit code other than 0), each document on its own state: a HOME and
//!   an `XDG_STATE_HOME`, so the simulator and the class live in their default directories
//!   (`KUBECONFIG` names the simulator's kubeconfig, or for docs/classroom.md the class's); the
//!   document starts its own simulator (or class) as a reader would, and whatever it leaves
//!   running is stopped afterwards.
//! - Every `lab-runner …` line of any fenced block parses with the binary's command line, so a
//!   command or flag the binary no longer has cannot stay in a document (the commands that run
//!   until stopped, `sim serve` and `class board`, are shown this way; their own tests run them).
//! - The README's command table names every command and long flag, its exit-code table is
//!   `src/exit.rs`'s, the architecture's module map names every module of `src/` and `crates/`, and the
//!   simulator's topology example loads.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    time::Duration,
};

use crate::support::{binary::lab_runner, kubectl, tree::files};

/// README.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("README.md")];
    found.extend(files(Path::new("docs"), &[".md"]));
    found
}

/// One fenced block of a Markdown file.
struct Fence {
    /// The info string's language (`console`, `sh`, `yaml`, `` for none).
    lang: String,
    /// The line of the opening fence (1-based).
    line: usize,
    /// The lines inside.
    body: Vec<String>,
}

fn fences(text: &str) -> Vec<Fence> {
    let mut found = Vec::new();
    let mut open: Option<Fence> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            Some(_) if trimmed.starts_with("```") => found.extend(open.take()),
            Some(fence) => fence.body.push(line.to_string()),
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let lang = info.split([',', ' ']).next().unwrap_or("").to_string();
                    open = Some(Fence { lang, line: index + 1, body: Vec::new() });
                }
            }
        }
    }
    found
}

/// The documents whose `console` blocks run, each by its own test below.
const RUN: [&str; 6] = [
    "README.md",
    "docs/checking.md",
    "docs/classroom.md",
    "docs/lab-format.md",
    "docs/reset.md",
    "docs/simulator.md",
];

#[test]
fn every_console_block_is_run_by_a_test() {
    let with_console: Vec<String> = documents()
        .into_iter()
        .filter(|doc| fences(&std::fs::read_to_string(doc).unwrap()).iter().any(|f| f.lang == "console"))
        .map(|doc| doc.display().to_string())
        .collect();
    assert_eq!(with_console, RUN, "a document with console examples needs its test in tests/docs.rs");
}

#[test]
fn every_block_is_marked_with_its_language() {
    // trycmd takes a block without an info string for a console block: every block says what it is.
    for doc in documents() {
        for fence in fences(&std::fs::read_to_string(&doc).unwrap()) {
            assert!(
                !fence.lang.is_empty(),
                "{}:{}: a fenced block without a language",
                doc.display(),
                fence.line
            );
        }
    }
}

/// Runs the `console` blocks of `doc` on a fresh state of their own, with `KUBECONFIG` naming
/// `kubeconfig` of that state ([`SIM_KUBECONFIG`] or [`CLASS_KUBECONFIG`]).
fn run_console_examples(doc: &str, kubeconfig: &str) {
    let Some(kubectl) = kubectl::clients().into_iter().find(|k| k.version == "1.33") else {
        eprintln!("skip: the docs' examples use kubectl 1.33");
        return;
    };
    assert!(
        std::env::var_os("LAB_RUNNER_LABS").is_none(),
        "the docs' examples use the built-in labs: unset LAB_RUNNER_LABS"
    );
    let state = State::new(&kubectl.path);
    let path = std::env::join_paths(
        std::iter::once(state.dir.path().join("bin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("lab-runner", PathBuf::from(env!("CARGO_BIN_EXE_lab-runner")))
        .register_bin("kubectl", kubectl.path.clone())
        .env("PATH", path.to_string_lossy())
        .env("HOME", state.path("home"))
        .env("KUBECACHEDIR", state.path("home/cache"))
        .env("XDG_STATE_HOME", state.path("state"))
        .env("KUBECONFIG", state.path(kubeconfig))
        .env("LAB_RUNNER_SIM_DIR", state.path(SIM_DIR))
        .env("LAB_RUNNER_CLASS_DIR", state.path(CLASS_DIR))
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env("LAB_RUNNER_LANG", "en")
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(300))
        .case(doc);
    cases.run();
}

/// The simulator's and the class's default directories under `$XDG_STATE_HOME`, as a reader's
/// would be (the variables that would override them are set to the same).
const SIM_DIR: &str = "state/lab-runner/sim";
const SIM_KUBECONFIG: &str = "state/lab-runner/sim/kubeconfig";
const CLASS_DIR: &str = "state/lab-runner/class";
/// The class's kubeconfig (one context per learner), as the instructor on the class's host uses it.
const CLASS_KUBECONFIG: &str = "state/lab-runner/class/kubeconfig";

/// A document's state: its directories, and a `bin/kubectl` for the solutions `demo` runs;
/// what the document left running is stopped when it is dropped.
struct State {
    dir: tempfile::TempDir,
}

impl State {
    fn new(kubectl: &Path) -> State {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["bin", "home/cache"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        std::os::unix::fs::symlink(kubectl, dir.path().join("bin/kubectl")).unwrap();
        State { dir }
    }

    fn path(&self, sub: &str) -> String {
        self.dir.path().join(sub).display().to_string()
    }
}

impl Drop for State {
    fn drop(&mut self) {
        let _ = lab_runner().args(["class", "down", "--state-dir"]).arg(self.path(CLASS_DIR)).output();
        let _ = lab_runner().args(["sim", "down", "--state-dir"]).arg(self.path(SIM_DIR)).output();
    }
}

#[test]
fn readme_examples_run() {
    run_console_examples("README.md", SIM_KUBECONFIG);
}

#[test]
fn simulator_examples_run() {
    run_console_examples("docs/simulator.md", SIM_KUBECONFIG);
}

#[test]
fn checking_examples_run() {
    run_console_examples("docs/checking.md", SIM_KUBECONFIG);
}

#[test]
fn classroom_examples_run() {
    run_console_examples("docs/classroom.md", CLASS_KUBECONFIG);
}

#[test]
fn reset_examples_run() {
    run_console_examples("docs/reset.md", SIM_KUBECONFIG);
}

#[test]
fn lab_format_examples_run() {
    run_console_examples("docs/lab-format.md", SIM_KUBECONFIG);
}

/// The `lab-runner …` lines of every shell, console or text block (a `$ ` prompt removed), with
/// the place of each.
fn documented_command_lines() -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        // Shell and console blocks (a YAML block's strings are a lab's, checked by lint).
        for fence in
            fences(&text).into_iter().filter(|f| matches!(f.lang.as_str(), "console" | "sh" | "text"))
        {
            for (offset, line) in fence.body.iter().enumerate() {
                let line = line.trim_start();
                let line = line.strip_prefix("$ ").unwrap_or(line);
                if !line.starts_with("lab-runner ") {
                    continue;
                }
                let words = shlex::split(line).unwrap_or_else(|| panic!("{}: {line}", doc.display()));
                // A shell comment, redirection or pipe ends the command.
                let words: Vec<String> = words
                    .into_iter()
                    .take_while(|w| !w.starts_with('#') && !matches!(w.as_str(), ">" | "|" | "&&"))
                    .collect();
                let place = format!("{}:{}", doc.display(), fence.line + 1 + offset);
                found.push((place, words));
            }
        }
    }
    found
}

#[test]
fn every_documented_command_line_parses() {
    let lines = documented_command_lines();
    assert!(lines.len() >= 20, "{}", lines.len());
    for (place, words) in lines {
        if let Err(error) = lab_runner::cli::try_parse_from(&words) {
            panic!("{place}: `{}` does not parse:\n{error}", words.join(" "));
        }
    }
}

/// Every subcommand path of `command` (`["sim", "up"]`), with its long flags, hidden ones left out.
fn subcommands(command: &clap::Command, prefix: &[String], found: &mut Vec<(Vec<String>, Vec<String>)>) {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let mut path = prefix.to_vec();
        path.push(sub.get_name().to_string());
        if sub.has_subcommands() {
            subcommands(sub, &path, found);
        } else {
            let flags = sub
                .get_arguments()
                .filter(|a| !a.is_hide_set() && !a.is_global_set())
                .filter_map(|a| a.get_long())
                .filter(|long| !matches!(*long, "help" | "version"))
                .map(|long| format!("--{long}"))
                .collect();
            found.push((path, flags));
        }
    }
}

/// The README's command table: each row's command cell (`lab-runner sim up\|serve [...]`) and the
/// whole row.
fn readme_command_rows() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string("README.md").unwrap();
    readme
        .lines()
        .filter_map(|line| line.strip_prefix("| `lab-runner "))
        .map(|rest| {
            let cell = rest.split_once('`').map(|(cell, _)| cell).unwrap_or(rest);
            (cell.replace("\\|", "|"), rest.to_string())
        })
        .collect()
}

#[test]
fn the_readme_names_every_command_and_flag() {
    let mut found = Vec::new();
    subcommands(&lab_runner::cli::command(lab_runner::session::Lang::En), &[], &mut found);
    let rows = readme_command_rows();
    for (path, flags) in found {
        // The row whose cell starts with the command's words, the last one possibly among
        // alternatives (`sim up|serve`).
        let row = rows.iter().find(|(cell, _)| {
            let words: Vec<&str> = cell.split_whitespace().collect();
            words.len() >= path.len()
                && words[..path.len() - 1] == path[..path.len() - 1]
                && words[path.len() - 1].split('|').any(|w| w == path[path.len() - 1])
        });
        let Some((_, row)) = row else {
            panic!("README.md's command table has no row for `lab-runner {}`", path.join(" "))
        };
        for flag in flags {
            assert!(
                row.contains(&flag),
                "README.md's row for `lab-runner {}` does not name {flag}",
                path.join(" ")
            );
        }
    }
    let readme = std::fs::read_to_string("README.md").unwrap();
    let global = readme.lines().skip_while(|l| !l.starts_with("Global options")).take(6).collect::<String>();
    for arg in
        lab_runner::cli::command(lab_runner::session::Lang::En).get_arguments().filter(|a| a.is_global_set())
    {
        let long = format!("--{}", arg.get_long().unwrap());
        assert!(global.contains(&long), "README.md's global options do not name {long}");
    }
}

#[test]
fn the_readme_lists_the_exit_codes_of_src_exit_rs() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let rows: Vec<(u8, String)> = readme
        .lines()
        .skip_while(|l| *l != "## Exit codes")
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let code = cells.get(1)?.parse::<u8>().ok()?;
            Some((code, cells.get(2)?.to_string()))
        })
        .collect();
    let meaning = |code: u8| lab_runner::exit::meaning(code).render(lab_runner::session::Lang::En);
    let table: Vec<(u8, String)> = lab_runner::exit::ALL.iter().map(|code| (*code, meaning(*code))).collect();
    assert_eq!(rows, table);
}

#[test]
fn the_architecture_module_map_names_every_module() {
    let doc = std::fs::read_to_string("docs/architecture.md").unwrap();
    let map: Vec<(String, String)> = doc
        .lines()
        .skip_while(|l| *l != "## Module map")
        .take_while(|l| !l.starts_with("## The"))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` | "))
        .map(|(module, what)| (module.to_string(), what.to_string()))
        .collect();
    let named: BTreeSet<&str> = map.iter().map(|(module, _)| module.as_str()).collect();
    // The main crate's `src/`, and each crate of `crates/` as the module the main crate
    // re-exports it as (`crates/sim/src/` is `sim/`).
    let mut tree = BTreeSet::new();
    for entry in std::fs::read_dir("src").unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            tree.insert(format!("{name}/"));
        } else if name.ends_with(".rs") {
            tree.insert(name);
        }
    }
    for entry in std::fs::read_dir("crates").unwrap() {
        tree.insert(format!("{}/", entry.unwrap().file_name().to_string_lossy()));
    }
    assert_eq!(named, tree.iter().map(String::as_str).collect(), "docs/architecture.md's module map");
    // Inside each directory, every module is named in its row.
    for (module, what) in &map {
        let Some(dir) = module.strip_suffix('/') else { continue };
        let dirs = [Path::new("src").join(dir), Path::new("crates").join(dir).join("src")];
        for entry in dirs.iter().filter(|d| d.is_dir()).flat_map(|d| std::fs::read_dir(d).unwrap()) {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().to_string();
            let is_module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
            if !is_module || matches!(stem.as_str(), "mod" | "lib" | "tests" | "snapshots") {
                continue;
            }
            assert!(
                what.contains(&format!("`{stem}`")) || what.contains(&format!("`{stem}/`")),
                "docs/architecture.md's row for `{module}` does not name `{stem}`"
            );
        }
    }
}

#[test]
fn the_simulators_topology_example_loads() {
    let doc = std::fs::read_to_string("docs/simulator.md").unwrap();
    let after = doc.split_once("## Topology files").unwrap().1;
    let fence = fences(after).into_iter().next().unwrap();
    assert_eq!(fence.lang, "yaml");
    let yaml = fence.body.join("\n");
    let topology = lab_runner::sim::topology::Topology::parse(&yaml, "docs/simulator.md")
        .unwrap_or_else(|e| panic!("docs/simulator.md's topology example: {e}"));
    assert_eq!(topology.nodes.len(), 2);
}

/// Names of the design notes the project was written from, which live outside the repository:
/// code, tests and docs cite upstream or `docs/` instead, so a reader with only the repository
/// can follow every reference. Spelled in pieces so this file does not cite them itself.
fn outside_notes() -> Vec<String> {
    let pieces = [
        ("k8s-", "fidelity"),
        ("kubectl-", "api.md"),
        ("gpu-", "domain.md"),
        ("rust-", "stack"),
        ("anchors", ".md"),
        ("DESI", "GN §"),
        ("DESI", "GN.md"),
        ("../", "shared"),
    ];
    pieces.iter().map(|(head, tail)| format!("{head}{tail}")).collect()
}

#[test]
fn the_repository_cites_no_notes_from_outside_it() {
    let roots = ["src", "crates", "tests", "docs", "scripts", "deploy", ".ci", "README.md", "Cargo.toml"];
    let files: Vec<PathBuf> =
        roots.iter().map(Path::new).filter(|root| root.exists()).flat_map(|root| files(root, &[])).collect();
    assert!(files.iter().any(|f| f.ends_with("crates/k8s/src/daemon.rs")), "walked {} files", files.len());
    let names = outside_notes();
    let mut citations = Vec::new();
    for file in &files {
        let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        for (index, line) in text.lines().enumerate() {
            if let Some(name) = names.iter().find(|name| line.contains(name.as_str())) {
                citations.push(format!("{}:{}: cites {name}", file.display(), index + 1));
            }
        }
    }
    assert!(
        citations.is_empty(),
        "cite upstream (file and function) or the repository's docs/ instead:\n{}",
        citations.join("\n")
    );
}
