//! `sim serve`: the simulator in the foreground, from a prepared state directory to HTTPS on the
//! listen address until SIGTERM or Ctrl-C.

use std::{future::Future, path::PathBuf, sync::Arc};

use k8s_openapi::jiff::Timestamp;

use super::{
    ControlPlane, Error, PID_FILE, RUN_FILE, Result, RunRecord, STORE_FILE, ServeOptions, ensure_writable,
    process::{PidState, pid_state, remove_run_files, run_record},
    write_state_file,
};
use crate::sim::{
    audit,
    auth::{self, Tokens},
    clock::Clock,
    kubeconfig::{self, Access, KUBECONFIG_FILE},
    resources,
    server::{self, SimState},
    store::Store,
    tls::TlsMaterial,
    topology::{self, Topology},
};

/// The seeding step of a first start: every topology object not yet stored is created (objects
/// that exist, e.g. system namespaces made by the server, are kept). A store that already holds
/// nodes is left as it is (a restart keeps the cluster as it was).
pub fn seed(
    store: &Store,
    types: &[resources::ResourceType],
    topology: &Topology,
    now: Timestamp,
) -> Result<usize> {
    let store_error = |message: String| Error::Store { path: PathBuf::from(STORE_FILE), message };
    let counts = store.count_by_type().map_err(|e| store_error(e.to_string()))?;
    if counts.iter().any(|(kind, n)| kind == "nodes" && *n > 0) {
        return Ok(0);
    }
    let mut created = 0;
    for seed in topology::seed_objects(topology, now) {
        let rt = resources::find(types, seed.group, "v1", seed.plural)
            .ok_or_else(|| store_error(format!("no served type for {}", seed.plural)))?;
        let namespace = seed.object["metadata"]["namespace"].as_str().unwrap_or("");
        let name = seed.object["metadata"]["name"].as_str().unwrap_or("");
        if store.get(&rt.group_resource(), namespace, name).is_some() {
            continue;
        }
        store.create(rt, seed.object).map_err(|e| store_error(e.to_string()))?;
        created += 1;
    }
    Ok(created)
}

/// Everything `serve` prepared before it accepts connections.
#[derive(Debug)]
pub struct Prepared {
    /// The run record (also written to `sim.json`).
    pub record: RunRecord,
    /// Objects created by seeding (0 on a restart).
    pub seeded: usize,
    /// A stale pid file that was removed, if any.
    pub removed_stale_pid: Option<u32>,
}

/// Runs the simulator in the foreground until `shutdown` resolves (or SIGTERM/Ctrl-C when
/// `shutdown` is `None`); `on_ready` is called once it accepts connections.
pub async fn serve(
    options: &ServeOptions,
    shutdown: Option<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>>,
    on_ready: impl FnOnce(&Prepared),
) -> Result<()> {
    let dir = &options.state_dir;
    ensure_writable(dir)?;
    let removed_stale_pid = match pid_state(dir)? {
        PidState::Running(pid) if pid != std::process::id() => {
            let endpoint = run_record(dir).map(|r| r.endpoint);
            return Err(Error::AlreadyRunning { dir: dir.clone(), pid, endpoint });
        }
        PidState::Stale(pid) => {
            remove_run_files(dir);
            Some(pid)
        }
        _ => None,
    };
    let topology = options.topology.load()?;
    let controller_config = crate::sim::controllers::config::Config::from_topology(&topology)?;
    let tls = TlsMaterial::load_or_create(dir, &options.certificate_names())?;
    let server_config = tls.server_config()?;
    let tokens = Tokens::load_or_create(dir)?;

    let addr = options.listen;
    let listener = crate::sim::server::transport::bind(addr).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AddrInUse {
            Error::PortInUse { addr }
        } else {
            Error::Bind { addr, source }
        }
    })?;
    let bound = listener.local_addr().map_err(Error::Serve)?.port();

    let clock = Clock::Real { speed: options.speed };
    let store_path = dir.join(STORE_FILE);
    let store_error =
        |e: crate::sim::store::Error| Error::Store { path: store_path.clone(), message: e.to_string() };
    let store = Store::open(&store_path).map_err(store_error)?.with_clock(clock.clone());
    let types = resources::built_in();
    let seeded = seed(&store, &types, &topology, clock.now())?;
    let state = Arc::new(SimState::new(store, clock));
    // Custom types are served again after a restart (their CRDs are in the store).
    crate::sim::server::crd::reconcile(&state)
        .map_err(|e| Error::Store { path: store_path.clone(), message: e.to_string() })?;
    crate::sim::server::ensure_system_priority_classes(&state)
        .map_err(|e| Error::Store { path: store_path.clone(), message: e.to_string() })?;
    // The control plane and kubelets run beside the API, on the store.
    let controllers = match options.control_plane {
        ControlPlane::Running => Some(crate::sim::controllers::spawn(state.clone(), controller_config)?),
        ControlPlane::ApiOnly => None,
    };
    let handlers = server::transport::handler_runtime().map_err(Error::Serve)?;
    let app = auth::layer(server::served_router(state.clone(), handlers), Arc::new(tokens.clone()));
    // Outermost but for the request log: refused writes are audited too, as upstream's audit
    // filter runs before authorization (`DefaultBuildHandlerChain`).
    let app = match options.audit {
        super::Audit::Log => {
            let log = audit::AuditLog::start(dir, audit::AuditOptions::default()).map_err(|e| {
                Error::Store { path: dir.join(audit::AUDIT_LOG_FILE), message: e.to_string() }
            })?;
            app.layer(axum::middleware::from_fn_with_state(log, audit::audit))
        }
        super::Audit::Off => app,
    };
    let app = match std::env::var(REQUEST_LOG_ENV) {
        Ok(value) if value == "1" => {
            app.layer(axum::middleware::from_fn_with_state(Arc::new(tokens.clone()), log_request))
        }
        _ => app,
    };

    let endpoint = options.endpoint(bound);
    let kubeconfig_path = dir.join(KUBECONFIG_FILE);
    kubeconfig::write(
        &kubeconfig_path,
        &Access {
            server: &endpoint,
            ca_pem: &tls.ca_pem,
            admin_token: &tokens.admin,
            viewer_token: &tokens.viewer,
        },
    )?;
    let record = RunRecord {
        pid: std::process::id(),
        endpoint,
        started: Timestamp::now().to_string(),
        kubeconfig: kubeconfig_path,
    };
    write_state_file(&dir.join(PID_FILE), format!("{}\n", record.pid).as_bytes())?;
    let json = serde_json::to_vec_pretty(&record).expect("a run record serializes");
    if let Err(error) = write_state_file(&dir.join(RUN_FILE), &json) {
        remove_run_files(dir);
        return Err(error);
    }
    let shutdown = match shutdown {
        Some(shutdown) => shutdown,
        None => match termination_signal() {
            Ok(signals) => signals,
            Err(error) => {
                remove_run_files(dir);
                return Err(Error::Serve(error));
            }
        },
    };
    on_ready(&Prepared { record, seeded, removed_stale_pid });
    // `/readyz` fails its `shutdown` check from the moment the server begins to stop.
    let shutdown = async move {
        shutdown.await;
        state.health.shutting_down.store(true, std::sync::atomic::Ordering::Release);
    };

    let limits = server::transport::Limits::default();
    let served = server::transport::serve_tls(listener, server_config, app, limits, shutdown).await;
    if let Some(controllers) = controllers {
        controllers.abort();
    }
    remove_run_files(dir);
    served.map_err(Error::Serve)
}

/// With this variable set to `1` in the environment of `sim up`/`sim serve`, every request is
/// logged on stderr (`serve.log` under `sim up`) as `request <user> <METHOD> <path?query>
/// <status>`: how `scripts/bench-check.sh` and the binary tests count a check's requests.
pub const REQUEST_LOG_ENV: &str = "LAB_RUNNER_SIM_REQUEST_LOG";

/// The request log middleware (outermost, so rejected requests are logged too).
async fn log_request(
    axum::extract::State(tokens): axum::extract::State<Arc<Tokens>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let user = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(crate::sim::auth::bearer_token)
        .and_then(|token| tokens.identify(token))
        .map_or("anonymous", |identity| identity.user);
    let method = request.method().clone();
    let target =
        request.uri().path_and_query().map_or_else(|| request.uri().path().to_string(), |p| p.to_string());
    let response = next.run(request).await;
    eprintln!("request {user} {method} {target} {}", response.status().as_u16());
    response
}

/// A future resolving on SIGTERM or SIGINT (Ctrl-C). The handlers are installed by this call,
/// not when the future is first polled, so a signal sent right after the server says it is
/// ready is not lost (or fatal).
fn termination_signal() -> std::io::Result<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        Ok(Box::pin(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
        }))
    }
    #[cfg(not(unix))]
    {
        Ok(Box::pin(async {
            let _ = tokio::signal::ctrl_c().await;
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn seeding_happens_once_and_keeps_what_exists() {
        let store = Store::in_memory().unwrap();
        let types = resources::built_in();
        let namespaces = resources::find(&types, "", "v1", "namespaces").unwrap();
        store
            .create(
                namespaces,
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}),
            )
            .unwrap();
        let topology = Topology::generated(2);
        let now = Timestamp::now();
        assert_eq!(seed(&store, &types, &topology, now).unwrap(), 13);
        let counts = store.count_by_type().unwrap();
        assert!(counts.contains(&("nodes".to_string(), 3)), "{counts:?}");
        assert!(counts.contains(&("namespaces".to_string(), 4)), "{counts:?}");
        assert_eq!(seed(&store, &types, &Topology::generated(5), now).unwrap(), 0);
    }
}
