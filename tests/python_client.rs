//! The official Python client against the simulator: the behaviours of a 1.33 server a client library reads (tests/fixtures/python_client.py names each).

use std::process::Command;

use crate::support::{
    binary::{stderr, stdout},
    python::python_client,
    sim::Sim,
};

/// `/version`'s emulation fields, DELETE's `Status`, autoscaling/v1 read back as v2 (and patched,
/// watched, its status patched as v1), CronJob time zones, one global default PriorityClass, a
/// Job's podFailurePolicy, selfsubjectreviews and componentstatuses, each as kube-apiserver 1.33
/// answers the Python client 33.x.
#[test]
fn the_python_client_reads_a_1_33_server() {
    if !python_client() {
        return;
    }
    let sim = Sim::up(&[]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/python_client.py");
    let output = Command::new("python3").arg(script).arg(&sim.kubeconfig).output().unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    assert_eq!(
        stdout(&output),
        "version: 1.33, emulation 1.33\n\
         delete configmap: Status Success\n\
         hpa: autoscaling/v1 70% reads as v2 cpu Utilization 70\n\
         hpa: autoscaling/v1 patched, watched and its status patched as v1\n\
         cronjob: timeZone Etc/UTC accepted, CRON_TZ refused\n\
         job: podFailurePolicy kept; refused without restartPolicy Never\n\
         priorityclass: a second globalDefault refused\n\
         selfsubjectreview: lab-runner-admin\n\
         componentstatuses: 3\n"
    );
}
