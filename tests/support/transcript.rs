//! Transcripts of kubectl sessions: each command and what it printed, recorded for snapshots, with what varies between runs redacted.

use std::process::Output;

use super::{
    binary::{stderr, stdout},
    kubectl::Kubectl,
    sim::Sim,
};

/// What commands printed, in order: `$ kubectl <command>`, stdout, stderr, `[exit N]` when it
/// failed, and a blank line.
#[derive(Debug, Default)]
pub struct Transcript(pub String);

impl Transcript {
    /// Records one command and its output.
    pub fn record(&mut self, command: &str, output: &Output) {
        self.0.push_str(&format!("$ kubectl {command}\n{}{}", stdout(output), stderr(output)));
        if !output.status.success() {
            self.0.push_str(&format!("[exit {}]\n", output.status.code().unwrap_or(-1)));
        }
        self.0.push('\n');
    }
}

/// One client's commands against a simulator, split on spaces and recorded; `prefix` (such as
/// `-n <namespace>`) goes before every command and is not recorded.
pub struct Recorder<'a> {
    /// The simulator.
    pub sim: &'a Sim,
    /// The client.
    pub client: &'a Kubectl,
    /// Arguments before every command.
    pub prefix: Vec<String>,
    /// What was recorded.
    pub transcript: Transcript,
}

impl<'a> Recorder<'a> {
    /// A recorder with nothing recorded yet.
    pub fn new(sim: &'a Sim, client: &'a Kubectl, prefix: &[&str]) -> Recorder<'a> {
        Recorder {
            sim,
            client,
            prefix: prefix.iter().map(|a| a.to_string()).collect(),
            transcript: Transcript::default(),
        }
    }

    /// `kubectl <prefix> <command>` (split on spaces), recorded.
    pub fn run(&mut self, command: &str) -> Output {
        let mut args: Vec<&str> = self.prefix.iter().map(String::as_str).collect();
        args.extend(command.split(' '));
        let output = self.sim.kubectl(self.client, &args);
        self.transcript.record(command, &output);
        output
    }

    /// Like [`Recorder::run`]; the command must succeed, and its stdout is returned.
    pub fn ok(&mut self, command: &str) -> String {
        let output = self.run(command);
        assert!(
            output.status.success(),
            "kubectl {} {command} failed: {}{}",
            self.client.version,
            stdout(&output),
            stderr(&output)
        );
        stdout(&output)
    }

    /// Like [`Recorder::run`]; the command must fail, and its stderr is returned.
    pub fn fails(&mut self, command: &str) -> String {
        let output = self.run(command);
        assert!(!output.status.success(), "kubectl {} {command} succeeded", self.client.version);
        stderr(&output)
    }
}

/// Makes a transcript independent of timing and identity: ages (`5s`, `3m2s`) become `<age>`,
/// uids, resourceVersions and timestamps are hidden, and column padding is collapsed to three
/// spaces (it depends on the width of the hidden values).
pub fn redacted(text: &str) -> String {
    let mut out = text.to_string();
    for (pattern, replacement) in [
        (
            r"(?m)^(\s*-?\s*(creationTimestamp|resourceVersion|uid|lastHeartbeatTime|lastTransitionTime|renewTime)):.*$",
            "$1: [REDACTED]",
        ),
        (r"\b\d+[smhd](\d+[smhd])?\b", "<age>"),
        (r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "[UID]"),
        (r"(\S)  +", "$1   "),
    ] {
        out = regex::Regex::new(pattern).unwrap().replace_all(&out, replacement).into_owned();
    }
    out
}
