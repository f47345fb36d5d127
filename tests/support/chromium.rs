//! Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`).
//!
//! The pipe (fd 3 in, fd 4 out, NUL-separated JSON) needs no WebSocket client: the browser is
//! started through `sh` so that its stdin and stdout pipes become fds 3 and 4.

use std::{
    io::{BufRead, BufReader, Write},
    path::PathBuf,
    process::{Child, ChildStdin, Stdio},
    sync::mpsc,
    time::Duration,
};

use serde_json::{Value, json};

/// The browser binary: `$CHROMIUM`, else `chromium` or `chromium-browser` on the PATH.
fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM").map(PathBuf::from).filter(|p| p.is_file()) {
        return Some(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Why a browser test cannot run here: `Some(reason)` skips it (printing the reason); under
/// `CI=true` (where `.ci/run` installs Debian's `chromium`) the test fails instead.
pub fn unavailable() -> Option<String> {
    if binary().is_some() {
        return None;
    }
    let reason = "no chromium on the PATH (apt-get install chromium, or set $CHROMIUM)".to_string();
    assert!(std::env::var("CI").as_deref() != Ok("true"), "browser tests cannot run under CI: {reason}");
    eprintln!("skipped: {reason}");
    Some(reason)
}

/// A headless browser with one page attached; killed when dropped.
pub struct Browser {
    child: Child,
    commands: ChildStdin,
    replies: mpsc::Receiver<Value>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts the browser and opens `url` in a new page.
    pub fn open(url: &str) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null"#)
            .arg(binary().expect("checked by unavailable()"))
            .args([
                "--headless",
                // As root (CI containers), Chromium refuses to start without this.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--window-size=1100,420",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        let commands = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let (send, replies) = mpsc::channel();
        std::thread::spawn(move || {
            let mut message = Vec::new();
            while output.read_until(0, &mut message).is_ok_and(|n| n > 0) {
                message.pop_if(|b| *b == 0);
                if let Ok(value) = serde_json::from_slice::<Value>(&message)
                    && send.send(value).is_err()
                {
                    return;
                }
                message.clear();
            }
        });
        let mut browser =
            Browser { child, commands, replies, next_id: 0, session: String::new(), _profile: profile };
        let target = browser.call(None, "Target.createTarget", json!({ "url": url }));
        let target_id = target["targetId"].as_str().expect("a target id").to_string();
        let attached =
            browser.call(None, "Target.attachToTarget", json!({ "targetId": target_id, "flatten": true }));
        browser.session = attached["sessionId"].as_str().expect("a session id").to_string();
        browser
    }

    /// Sends one command (to the page's session when `session` is given) and returns its result.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.commands.write_all(&bytes).unwrap();
        self.commands.flush().unwrap();
        loop {
            let reply = self.replies.recv_timeout(Duration::from_secs(30)).expect("chromium answers in 30 s");
            if reply["id"] == json!(id) {
                assert!(reply.get("error").is_none(), "{method}: {}", reply["error"]);
                return reply["result"].clone();
            }
        }
    }

    /// Evaluates `expression` in the page and returns its value.
    pub fn eval(&mut self, expression: &str) -> Value {
        let session = self.session.clone();
        let result = self.call(
            Some(&session),
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
        );
        result["result"]["value"].clone()
    }

    /// A PNG of the page as it is shown.
    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine as _;
        let session = self.session.clone();
        let result = self.call(Some(&session), "Page.captureScreenshot", json!({ "format": "png" }));
        base64::engine::general_purpose::STANDARD
            .decode(result["data"].as_str().expect("image data"))
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
