//! The pause tests that need a container engine; the rest are in `pause`.

use crate::common::*;
use crate::pause::*;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn podman_pod_infra_reaps_the_members_orphans() {
    const T: &str = "podman_pod_infra_reaps_the_members_orphans";
    const REQUIRE: &str = "VIGIL_E2E_REQUIRE_PODMAN";
    if let Err(NotReady::Skip(why) | NotReady::Broken(why)) = Engine::Podman.version() {
        return skip_unless(T, Some(REQUIRE), &format!("{why} (Debian's podman)"));
    }
    let Some(image) = TestImage::get(Engine::Podman, T) else {
        return;
    };
    let dir = TempDir::new("pod");
    let pod = Pod {
        name: format!("{LABEL}-{}-pause-pod", run_id()),
    };
    let create = run_cmd(
        Command::new("podman")
            .env("CONTAINERS_CONF", podman_conf(&dir))
            .args([
                "pod",
                "create",
                "--name",
                &pod.name,
                "--label",
                &run_label(),
            ])
            .args(["--share", "pid,ipc,uts,net", "--infra-image", &image.image])
            // podman splits the infra command at spaces.
            .args(["--infra-command", "/vigil -P -vv --log-format json"]),
        ENGINE_TIMEOUT,
    );
    assert!(create.status.success(), "pod create: {create:?}");
    let infra = Engine::Podman
        .ok(&[
            "pod",
            "inspect",
            &pod.name,
            "--format",
            "{{.InfraContainerID}}",
        ])
        .trim()
        .to_string();
    // The member shares the pod's PID namespace, where it is not PID 1:
    // each `sh -c "sleep 0.3 &"` exits at once, and its sleep is reparented
    // to the namespace's PID 1, the infra process.
    let member = Ctr::start(
        Engine::Podman,
        T,
        // Its own command is the member's main process, without the
        // image's vigil, which would reap the orphans itself.
        &["--pod", &pod.name, "--entrypoint", "/bin/sh"],
        &image.image,
        &[
            "-c",
            "for i in 1 2 3; do sh -c 'sleep 0.3 &'; done; exec sleep 1000",
        ],
    );
    let pid1 = member.exec(&["cat", "/proc/1/cmdline"]);
    assert!(
        pid1.starts_with("/vigil\0-P\0"),
        "PID 1 of the pod: {pid1:?}"
    );
    // vigil writes on stderr, which `podman logs` gives on its own.
    let logs = || text(&Engine::Podman.cmd(&["logs", &infra]).stderr);
    assert!(
        wait_until(TIMEOUT, || events(&records(&logs()), "reaped").len() >= 3),
        "the infra process did not reap three orphans:\n{}",
        logs()
    );
    let ps = member.exec(&["ps", "-o", "stat"]);
    assert!(!ps.lines().any(|l| l.trim().starts_with('Z')), "{ps}");
    let started = Instant::now();
    Engine::Podman.ok(&["pod", "stop", "-t", "10", &pod.name]);
    let took = started.elapsed();
    note(T, format!("podman pod stop: {}", secs(took)));
    assert!(took < Duration::from_secs(5), "pod stop took {took:?}");
    let code = Engine::Podman.ok(&["inspect", &infra, "--format", "{{.State.ExitCode}}"]);
    assert_eq!(code.trim(), "0", "infra exit code\n{}", logs());
    let records = records(&logs());
    let ended = events(&records, "pause_ended");
    assert_eq!(ended.len(), 1, "{records:?}");
    assert!(
        ended[0]["orphans_reaped"].as_u64() >= Some(3),
        "{records:?}"
    );
    drop(member);
}

/// A podman pod, removed with its containers when dropped.
pub(crate) struct Pod {
    pub(crate) name: String,
}

impl Drop for Pod {
    fn drop(&mut self) {
        Engine::Podman.quiet(&["pod", "rm", "-f", "-t", "0", &self.name]);
    }
}

/// podman's settings for `pod create`, which takes no `--ulimit`: the
/// infra container gets the same explicit limits as every `run` of the
/// harness (engine.rs says why).
pub(crate) fn podman_conf(dir: &TempDir) -> std::path::PathBuf {
    let conf = dir.join("containers.conf");
    std::fs::write(
        &conf,
        "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n",
    )
    .unwrap();
    conf
}
