//! A simulator on a socket, started through the built binary (`lab-runner sim up`) in a temporary state directory and stopped on drop.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use super::{binary::lab_runner, binary::stderr, kubectl::Kubectl};

/// A simulator started through the built binary in a temporary state dir, stopped on drop.
pub struct Sim {
    dir: tempfile::TempDir,
    /// Its kubeconfig.
    pub kubeconfig: PathBuf,
}

impl Sim {
    /// `lab-runner sim up --state-dir <tmp> <args>`.
    pub fn up(args: &[&str]) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let output = lab_runner()
            .args(["sim", "up", "--state-dir"])
            .arg(dir.path().join("sim"))
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "sim up failed: {}", stderr(&output));
        let kubeconfig = dir.path().join("sim").join("kubeconfig");
        Sim { dir, kubeconfig }
    }

    /// `kubectl --kubeconfig <ours>` with a private HOME and discovery cache per client, for
    /// the caller to add arguments (and a working directory) to.
    pub fn kubectl_command(&self, client: &Kubectl) -> Command {
        let home = self.dir.path().join(format!("home-{}", client.version));
        std::fs::create_dir_all(&home).unwrap();
        let mut command = Command::new(&client.path);
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .env_remove("KUBECONFIG")
            .env("HOME", &home)
            .env("KUBECACHEDIR", home.join("cache"));
        command
    }

    /// Runs `kubectl --kubeconfig <ours> <args>` with a private HOME and discovery cache.
    pub fn kubectl(&self, client: &Kubectl, args: &[&str]) -> Output {
        self.kubectl_command(client).args(args).output().unwrap()
    }

    /// The state directory.
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("sim")
    }

    /// A scratch directory beside the state directory, removed with it.
    pub fn scratch_dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = lab_runner().args(["sim", "down", "--state-dir"]).arg(self.state_dir()).output();
    }
}
