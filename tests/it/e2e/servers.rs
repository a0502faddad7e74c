//! Real servers under vigil in Docker, end to end: postgres, nginx, redis,
//! gunicorn and a bash wrapper, each run the way docs/recipes.md says (vigil
//! as the ENTRYPOINT, `VIGIL_USER` where the server wants a user of its
//! own), stopped with `docker stop`, and judged by what the server itself
//! logs and by the exit status. Where it shows what vigil changes, the same
//! server runs beside it under tini + gosu, as images run it without vigil.
//!
//! The image is Debian's (tests/servers/image.sh: a minbase root filesystem
//! from this machine's apt sources, cached in /var/cache/vigil-servers, and
//! the image built from it cached in the engine), with this run's vigil
//! added on top (tests/it/common/servers.rs).
//!
//!     cargo test --test it e2e::servers -- --nocapture
//!
//! Every test prints what it measured as `e2e: TEST: ...` lines. When no
//! engine answers (or `VIGIL_E2E_DOCKER=0`, or no mmdebstrap to make the
//! image) every test prints `e2e: TEST: SKIPPED: ...` and passes; with
//! `VIGIL_E2E_REQUIRE=1` a skip is a failure instead.

use crate::common::*;
use std::fs;
use std::path::Path;
use std::time::Duration;

/// How long a server may take to say it is ready (a fresh container on a
/// busy machine; postgres replays nothing, but the engine's overlay is slow).
const READY: Duration = Duration::from_secs(60);

/// The servers' image, or None after printing why the test is skipped.
fn harness(test: &str) -> Option<&'static ServerImage> {
    ServerImage::get(test)
}

// ---------------------------------------------------------------------------
// The recipes (docs/recipes.md)

/// A recipe of docs/recipes.md: the Dockerfile lines that come after an
/// image's own, which the tests pass as the `docker run` options that stand
/// for them (`--stop-signal` for STOPSIGNAL, `-e` for ENV, the command for
/// CMD; the test image's ENTRYPOINT is `["/vigil", "--"]`).
struct Recipe {
    /// The heading of its section in docs/recipes.md.
    section: &'static str,
    stop_signal: Option<&'static str>,
    env: &'static [(&'static str, &'static str)],
    /// CMD in exec form (a JSON array), or, with `shell_form`, the one
    /// word of a shell-form CMD, which Docker runs as `/bin/sh -c WORD`.
    cmd: &'static [&'static str],
    shell_form: bool,
}

impl Recipe {
    /// Its Dockerfile lines, as docs/recipes.md must show them.
    fn dockerfile(&self) -> Vec<String> {
        let quote = |s: &str| serde_json::to_string(s).unwrap();
        let mut lines = vec![r#"ENTRYPOINT ["/vigil", "--"]"#.to_string()];
        if let Some(signal) = self.stop_signal {
            lines.push(format!("STOPSIGNAL {signal}"));
        }
        for (key, value) in self.env {
            let plain = !value.is_empty()
                && !value.contains(|c: char| c.is_whitespace() || "\"'\\$".contains(c));
            // Quoted, a `$` is escaped: Docker would expand it in ENV.
            let value = if plain {
                value.to_string()
            } else {
                quote(value).replace('$', "\\$")
            };
            lines.push(format!("ENV {key}={value}"));
        }
        if self.shell_form {
            lines.push(format!("CMD {}", self.cmd.join(" ")));
        } else {
            let cmd: Vec<String> = self.cmd.iter().map(|w| quote(w)).collect();
            lines.push(format!("CMD [{}]", cmd.join(", ")));
        }
        lines
    }

    /// `docker run -d` of the recipe in the servers' image, with Docker's
    /// stop timeout and the test's own options.
    fn start(&self, h: &ServerImage, test: &'static str, stop_timeout: u64, extra: &[&str]) -> Ctr {
        let timeout = stop_timeout.to_string();
        let mut opts = vec!["--stop-timeout", &timeout];
        if let Some(signal) = self.stop_signal {
            opts.extend(["--stop-signal", signal]);
        }
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for e in &env {
            opts.extend(["-e", e]);
        }
        opts.extend_from_slice(extra);
        if self.shell_form {
            h.start(test, &opts, &["/bin/sh", "-c", &self.cmd.join(" ")])
        } else {
            h.start(test, &opts, self.cmd)
        }
    }
}

const PG_DATA: &str = "/var/lib/postgresql/data";

/// postgres as its own user, with what `docker stop` sends (SIGTERM: a
/// smart shutdown, which waits for clients to leave).
const POSTGRES_SMART: Recipe = Recipe {
    section: "postgres",
    stop_signal: None,
    env: &[("VIGIL_USER", "postgres")],
    cmd: &["postgres", "-D", PG_DATA],
    shell_form: false,
};

/// The recipe: SIGTERM forwarded as SIGINT, postgres' fast shutdown (open
/// sessions are ended, a checkpoint is written).
const POSTGRES: Recipe = Recipe {
    section: "postgres",
    stop_signal: None,
    env: &[("VIGIL_USER", "postgres"), ("VIGIL_REWRITE", "TERM:INT")],
    cmd: &["postgres", "-D", PG_DATA],
    shell_form: false,
};

/// nginx's graceful stop is SIGQUIT; SIGTERM is its fast one.
const NGINX: Recipe = Recipe {
    section: "nginx",
    stop_signal: Some("SIGQUIT"),
    env: &[],
    cmd: &["nginx", "-g", "daemon off;"],
    shell_form: false,
};

/// redis saves its data on SIGTERM; the save points are far apart, so that
/// what the test finds after a restart was saved by the shutdown.
const REDIS: Recipe = Recipe {
    section: "redis",
    stop_signal: None,
    env: &[("VIGIL_USER", "redis")],
    cmd: &[
        "redis-server",
        "--dir",
        "/var/lib/redis",
        "--save",
        "3600 1",
    ],
    shell_form: false,
};

/// gunicorn's SIGTERM lets requests in flight finish, within its graceful
/// timeout, which is kept below Docker's default stop timeout (10 s).
const GUNICORN: Recipe = Recipe {
    section: "gunicorn",
    stop_signal: None,
    env: &[("VIGIL_USER", "www-data")],
    cmd: &[
        "gunicorn",
        "--chdir",
        "/srv/app",
        "--bind",
        "0.0.0.0:8000",
        "--workers",
        "2",
        "--graceful-timeout",
        "8",
        "app:app",
    ],
    shell_form: false,
};

/// A wrapper that traps SIGTERM and waits for its foreground job: bash runs
/// a trap only once the foreground command has ended, and the job never
/// gets the signal (vigil sends it to its child, the shell).
const WRAPPER_SCRIPT: &str = "trap 'echo wrapper: got SIGTERM' TERM; echo wrapper: ready; sleep 1000; echo wrapper: sleep ended";
const WRAPPER: Recipe = Recipe {
    section: "shell wrappers",
    stop_signal: None,
    env: &[],
    cmd: &["bash", "-c", WRAPPER_SCRIPT],
    shell_form: false,
};

/// The same wrapper ending in `exec`: the server replaces the shell and
/// gets the signal itself.
const WRAPPER_EXEC: Recipe = Recipe {
    section: "shell wrappers",
    stop_signal: None,
    env: &[],
    cmd: &[
        "bash",
        "-c",
        "trap 'echo wrapper: got SIGTERM' TERM; echo wrapper: ready; exec sleep 1000",
    ],
    shell_form: false,
};

/// The same wrapper with `-g` (as an ENV line: the ENTRYPOINT stays
/// `["/vigil", "--"]`): the signal goes to the shell's whole process group.
const WRAPPER_GROUP: Recipe = Recipe {
    section: "shell wrappers",
    stop_signal: None,
    env: &[("VIGIL_KILL_PROCESS_GROUP", "1")],
    cmd: &["bash", "-c", WRAPPER_SCRIPT],
    shell_form: false,
};

/// A shell-form CMD (`CMD npm start`, `CMD node server.js`), with python's
/// web server standing in for node (the test image has no node): Docker
/// runs `/bin/sh -c "..."`, and Debian's sh (dash) does not exec a lone
/// command, so the server is the shell's child, not vigil's.
const SHELL_FORM: Recipe = Recipe {
    section: "node (npm)",
    stop_signal: None,
    env: &[],
    cmd: &["python3 -m http.server 8080"],
    shell_form: true,
};

/// The same with `exec`: the server replaces the shell.
const SHELL_FORM_EXEC: Recipe = Recipe {
    section: "node (npm)",
    stop_signal: None,
    env: &[],
    cmd: &["exec python3 -m http.server 8080"],
    shell_form: true,
};

/// nginx's graceful stop as vigil's stop signal, with a pre-stop hook and a
/// grace period below Docker's stop timeout.
const NGINX_STOP_SEQUENCE: Recipe = Recipe {
    section: "nginx",
    stop_signal: Some("SIGQUIT"),
    env: &[
        ("VIGIL_STOP_SIGNALS", "QUIT"),
        (
            "VIGIL_PRE_STOP",
            "sh -c \"echo pre-stop: draining after $VIGIL_SIGNAL\"",
        ),
        ("VIGIL_GRACE_PERIOD", "15s"),
    ],
    cmd: &["nginx", "-g", "daemon off;"],
    shell_form: false,
};

const RECIPES: &[&Recipe] = &[
    &POSTGRES_SMART,
    &POSTGRES,
    &NGINX,
    &NGINX_STOP_SEQUENCE,
    &REDIS,
    &GUNICORN,
    &WRAPPER,
    &WRAPPER_EXEC,
    &WRAPPER_GROUP,
    &SHELL_FORM,
    &SHELL_FORM_EXEC,
];

/// docs/recipes.md shows, in each recipe's section, the Dockerfile lines
/// the tests run: a recipe and its test cannot drift apart.
#[test]
fn recipes_doc_shows_what_the_tests_run() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recipes.md");
    let doc = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for recipe in RECIPES {
        let heading = format!("## {}", recipe.section);
        let start = doc
            .lines()
            .position(|l| l.trim_end().eq_ignore_ascii_case(&heading))
            .unwrap_or_else(|| panic!("docs/recipes.md has no {heading:?} section"));
        let section: Vec<&str> = doc
            .lines()
            .skip(start + 1)
            .take_while(|l| !l.starts_with("## "))
            .map(str::trim)
            .collect();
        for line in recipe.dockerfile() {
            assert!(
                section.contains(&line.as_str()),
                "docs/recipes.md, section {heading:?}, lacks the line the tests run:\n{line}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// postgres
// ---------------------------------------------------------------------------

/// `psql` in the container: its output, trimmed.
fn psql(ctr: &Ctr, sql: &str) -> String {
    ctr.exec(&["psql", "-U", "postgres", "-Atc", sql])
        .trim()
        .to_string()
}

const PG_READY: &str = "database system is ready to accept connections";
const PG_DOWN: &str = "database system is shut down";
const PG_RECOVERY: [&str; 2] = [
    "database system was not properly shut down",
    "automatic recovery in progress",
];

/// Starts a stopped postgres container again and returns the logs of that
/// start, once it is ready (its `start`th).
fn restart_postgres(ctr: &Ctr, start: usize) -> String {
    ctr.start_again();
    let logs = wait_log_times(ctr, PG_READY, start, READY);
    from_nth(&logs, "starting PostgreSQL", start).to_string()
}

/// `docker stop` of postgres under vigil: SIGTERM reaches it (a smart
/// shutdown, no client connected), it writes its shutdown checkpoint and
/// exits 0; the next start, on the same data, finds a clean shutdown and
/// the data written before.
#[test]
fn postgres_stops_cleanly_and_restarts_without_recovery() {
    const T: &str = "postgres_clean_stop";
    let Some(h) = harness(T) else { return };
    let ctr = POSTGRES_SMART.start(h, T, 20, &[]);
    ctr.wait_log(PG_READY, READY);
    psql(
        &ctr,
        "CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)",
    );

    let took = ctr.stop();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(T, format!("docker stop took {}, exit {code}", secs(took)));
    assert_has(&logs, &["received smart shutdown request", PG_DOWN]);
    assert_eq!(
        code, 0,
        "postgres' own status after a clean shutdown; logs:\n{logs}"
    );
    assert!(
        took < Duration::from_secs(10),
        "docker stop took {}",
        secs(took)
    );
    let report = must_report(T, &logs);
    assert!(
        report.contains("child exited with code 0; exit status 0")
            && report
                .contains("stop: SIGTERM from pid 0 (outside this PID namespace) (sent SIGTERM)"),
        "{report}"
    );

    let second = restart_postgres(&ctr, 2);
    assert!(
        second.contains("database system was shut down at"),
        "the second start did not find a clean shutdown:\n{second}"
    );
    for bad in PG_RECOVERY {
        assert!(
            !second.contains(bad),
            "{bad:?} on the second start:\n{second}"
        );
    }
    assert_eq!(psql(&ctr, "SELECT x FROM kept"), "42");
}

/// An idle client keeps a smart shutdown waiting (as a connection pool
/// does). With `VIGIL_REWRITE=TERM:INT`, `docker stop`'s SIGTERM reaches
/// postgres as SIGINT, its fast shutdown: the session is ended, the
/// shutdown is clean and quick. Beside it, tini + gosu pass SIGTERM on as
/// it is: postgres waits for the client until Docker's SIGKILL (137), and
/// the next start has to recover.
#[test]
fn postgres_with_an_idle_client_stops_fast_with_term_rewritten_to_int() {
    const T: &str = "postgres_idle_client";
    let Some(h) = harness(T) else { return };
    let stop_timeout = 6;
    let with = POSTGRES.start(h, T, stop_timeout, &[]);
    let without = h.start(
        T,
        &["--stop-timeout", "6", "--entrypoint", "/usr/bin/tini"],
        &["--", "gosu", "postgres", "postgres", "-D", PG_DATA],
    );
    with.wait_log(PG_READY, READY);
    without.wait_log(PG_READY, READY);
    let _clients = [&with, &without].map(|ctr| Session::start(ctr, &["psql", "-U", "postgres"]));
    for ctr in [&with, &without] {
        // The idle session, and the query's own.
        let sessions =
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'";
        assert!(
            wait_until_every(READY, Duration::from_millis(200), || {
                psql(ctr, sessions).parse::<u32>().unwrap_or(0) >= 2
            }),
            "{T}: the idle psql session never showed in {}",
            ctr.name
        );
    }

    let took = stop_together(&[&with, &without]);
    let (with_code, without_code) = (with.exit_code(), without.exit_code());
    let (with_logs, without_logs) = (with.logs(), without.logs());
    note(
        T,
        format!(
            "idle client, --stop-timeout {stop_timeout}: under vigil with TERM:INT docker stop took {} (exit {with_code}); under tini + gosu {} (exit {without_code})",
            secs(took[0]),
            secs(took[1])
        ),
    );
    assert_has(&with_logs, &["received fast shutdown request", PG_DOWN]);
    assert_eq!(with_code, 0, "under vigil; logs:\n{with_logs}");
    assert!(
        took[0] < Duration::from_secs(stop_timeout / 2),
        "under vigil docker stop took {}, not well within the {stop_timeout}s timeout",
        secs(took[0])
    );
    let report = must_report(T, &with_logs);
    assert!(report.contains("(sent SIGINT)"), "{report}");

    assert!(
        without_logs.contains("received smart shutdown request"),
        "{without_logs}"
    );
    assert!(!without_logs.contains(PG_DOWN), "{without_logs}");
    assert_eq!(
        without_code, 137,
        "under tini + gosu; logs:\n{without_logs}"
    );
    assert!(
        took[1] >= Duration::from_millis(stop_timeout * 1000 - 200),
        "under tini + gosu docker stop took only {}",
        secs(took[1])
    );

    let (with_second, without_second) = (restart_postgres(&with, 2), restart_postgres(&without, 2));
    for bad in PG_RECOVERY {
        assert!(
            !with_second.contains(bad),
            "{bad:?} after vigil's stop:\n{with_second}"
        );
        assert!(
            without_second.contains(bad),
            "no {bad:?} after the SIGKILL under tini + gosu:\n{without_second}"
        );
    }
}

// ---------------------------------------------------------------------------
// nginx
// ---------------------------------------------------------------------------

const NGINX_READY: &str = "start worker process ";
/// The size of /big in the image (tests/servers/setup.sh).
const BIG: usize = 4_000_000;

fn nginx_master(ctr: &Ctr) -> String {
    ctr.exec(&["cat", "/run/nginx.pid"]).trim().to_string()
}

/// `docker kill -s HUP`: vigil passes SIGHUP on to nginx, which reloads its
/// configuration (a changed answer) with the same master process.
#[test]
fn nginx_reloads_its_configuration_on_hup_with_the_same_master() {
    const T: &str = "nginx_hup";
    let Some(h) = harness(T) else { return };
    let ctr = NGINX.start(h, T, 20, &[]);
    ctr.wait_log(NGINX_READY, READY);
    let ip = address(&ctr);
    let get = |path| http_get(&ip, 80, path, Duration::from_secs(10));
    assert_eq!(get("/").unwrap().body_text(), "version 1\n");
    let master = nginx_master(&ctr);
    let parent = ctr.exec(&["ps", "-o", "ppid=", "-p", &master]);
    assert_eq!(
        parent.trim(),
        "1",
        "nginx's master {master} is not vigil's child"
    );

    ctr.exec(&[
        "sh",
        "-c",
        r#"echo 'return 200 "version 2\n";' > /etc/nginx/greeting.conf"#,
    ]);
    ctr.kill("HUP");
    ctr.wait_log("reconfiguring", Duration::from_secs(10));
    let reloaded = wait_until_every(Duration::from_secs(10), Duration::from_millis(100), || {
        get("/")
            .map(|r| r.body_text() == "version 2\n")
            .unwrap_or(false)
    });
    let logs = ctr.logs();
    assert!(
        reloaded,
        "nginx still answers with the old configuration; logs:\n{logs}"
    );
    assert!(logs.contains("signal 1 (SIGHUP) received"), "{logs}");
    let after = nginx_master(&ctr);
    note(
        T,
        format!("master {master} before the reload, {after} after"),
    );
    assert_eq!(after, master, "the reload replaced nginx's master");
    assert_eq!(ctr.inspect("{{.State.Running}}"), "true");
}

/// `STOPSIGNAL SIGQUIT`: vigil passes SIGQUIT on to nginx, whose graceful
/// shutdown lets a download in flight finish; beside it, Docker's default
/// SIGTERM is nginx's fast shutdown, which cuts the download. Both exit 0.
/// SIGQUIT is not one of vigil's stop signals, so vigil writes no exit
/// report for the graceful stop.
#[test]
fn nginx_stopsignal_quit_lets_a_download_finish_where_term_cuts_it() {
    const T: &str = "nginx_quit";
    let Some(h) = harness(T) else { return };
    let quit = NGINX.start(h, T, 20, &[]);
    let term = h.start(T, &["--stop-timeout", "20"], NGINX.cmd);
    quit.wait_log(NGINX_READY, READY);
    term.wait_log(NGINX_READY, READY);
    let downloads = [&quit, &term]
        .map(|ctr| Download::start(&address(ctr), 80, "/big", Duration::from_secs(30)));
    // Both in flight: a good part of the first second's bytes came.
    for d in &downloads {
        assert!(
            wait_until(Duration::from_secs(10), || d.received() > 200_000),
            "{T}: the download does not start"
        );
    }
    let took = stop_together(&[&quit, &term]);
    let [quit_dl, term_dl] = downloads.map(|d| d.finish());
    let (quit_logs, term_logs) = (quit.logs(), term.logs());
    let (quit_code, term_code) = (quit.exit_code(), term.exit_code());
    let size = |r: &std::io::Result<HttpResponse>| r.as_ref().map(|r| r.body.len()).unwrap_or(0);
    note(
        T,
        format!(
            "STOPSIGNAL SIGQUIT: docker stop {} exit {quit_code}, download {} of {BIG} bytes in {}; SIGTERM: docker stop {} exit {term_code}, download {} bytes",
            secs(took[0]),
            size(&quit_dl.0),
            secs(quit_dl.1),
            secs(took[1]),
            size(&term_dl.0),
        ),
    );
    let quit_resp = quit_dl
        .0
        .unwrap_or_else(|e| panic!("the download under SIGQUIT: {e}"));
    assert!(
        quit_resp.complete() && quit_resp.body.len() == BIG,
        "the download did not finish under SIGQUIT: {} of {:?} bytes; logs:\n{quit_logs}",
        quit_resp.body.len(),
        quit_resp.content_length()
    );
    assert_has(
        &quit_logs,
        &["signal 3 (SIGQUIT) received", "gracefully shutting down"],
    );
    assert_eq!(quit_code, 0, "{quit_logs}");
    assert!(
        took[0] < Duration::from_secs(15),
        "docker stop took {}: nginx did not exit after the download",
        secs(took[0])
    );
    assert!(
        exit_report(&quit_logs).is_none(),
        "an exit report after a stop by SIGQUIT, which is not a stop signal:\n{quit_logs}"
    );

    assert!(
        size(&term_dl.0) < BIG,
        "the download finished under SIGTERM: nginx's fast shutdown should cut it"
    );
    assert!(
        term_logs.contains("signal 15 (SIGTERM) received"),
        "{term_logs}"
    );
    assert_eq!(term_code, 0, "{term_logs}");
    let report = must_report(T, &term_logs);
    assert!(report.contains("stop: SIGTERM from pid 0"), "{report}");
}

// ---------------------------------------------------------------------------
// redis
// ---------------------------------------------------------------------------

/// A key set before `docker stop` is there after the restart: redis got
/// the SIGTERM (as its own user, through vigil) and saved its data before
/// exiting 0.
#[test]
fn redis_keeps_a_key_across_docker_stop() {
    const T: &str = "redis_stop";
    let Some(h) = harness(T) else { return };
    let ctr = REDIS.start(h, T, 20, &[]);
    ctr.wait_log("Ready to accept connections", READY);
    assert_eq!(
        ctr.exec(&["redis-cli", "SET", "vigil-key", "kept"]).trim(),
        "OK"
    );
    let user = ctr.exec(&["ps", "-o", "user=", "-C", "redis-server"]);
    assert_eq!(user.trim(), "redis", "redis-server does not run as redis");

    let took = ctr.stop();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(T, format!("docker stop took {}, exit {code}", secs(took)));
    assert_has(
        &logs,
        &[
            "Received SIGTERM scheduling shutdown",
            "Saving the final RDB snapshot before exiting",
            "DB saved on disk",
            "Redis is now ready to exit, bye bye",
        ],
    );
    assert_eq!(code, 0, "{logs}");
    assert!(
        took < Duration::from_secs(10),
        "docker stop took {}",
        secs(took)
    );

    ctr.start_again();
    let logs = wait_log_times(&ctr, "Ready to accept connections", 2, READY);
    assert!(logs.contains("DB loaded from disk"), "{logs}");
    assert_eq!(ctr.exec(&["redis-cli", "GET", "vigil-key"]).trim(), "kept");
}

// ---------------------------------------------------------------------------
// gunicorn
// ---------------------------------------------------------------------------

/// `docker stop` of gunicorn: a slow request in flight finishes (gunicorn's
/// graceful stop on SIGTERM), gunicorn exits 0, and vigil drains the two
/// `sleep`s the app left behind (orphans, re-parented to vigil): the exit
/// report counts them.
#[test]
fn gunicorn_finishes_a_slow_request_and_vigil_drains_the_orphans() {
    const T: &str = "gunicorn";
    let Some(h) = harness(T) else { return };
    let ctr = GUNICORN.start(h, T, 15, &[]);
    ctr.wait_log("Booting worker", READY);
    let ip = address(&ctr);
    let get = |path| http_get(&ip, 8000, path, Duration::from_secs(10));
    assert!(
        wait_until_every(READY, Duration::from_millis(200), || get("/")
            .map(|r| r.status == 200)
            .unwrap_or(false)),
        "{T}: gunicorn does not answer; logs:\n{}",
        ctr.logs()
    );
    let mut leaked = Vec::new();
    for _ in 0..2 {
        let body = get("/leak").unwrap().body_text();
        let pid = body
            .trim()
            .strip_prefix("leaked sleep ")
            .unwrap_or_else(|| panic!("/leak: {body:?}"));
        leaked.push(pid.to_string());
    }
    for pid in &leaked {
        let parent = ctr.exec(&["ps", "-o", "ppid=", "-p", pid]);
        assert_eq!(
            parent.trim(),
            "1",
            "the leaked sleep {pid} is not an orphan of vigil's"
        );
    }

    let slow = Download::start(&ip, 8000, "/slow", Duration::from_secs(30));
    ctr.wait_log("app: slow request started", Duration::from_secs(10));
    let took = ctr.stop();
    let (resp, answered) = slow.finish();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(
        T,
        format!(
            "slow request answered after {}; docker stop took {}, exit {code}",
            secs(answered),
            secs(took)
        ),
    );
    let resp = resp.unwrap_or_else(|e| panic!("the slow request: {e}; logs:\n{logs}"));
    assert!(
        resp.status == 200 && resp.complete() && resp.body_text() == "slow request done\n",
        "the slow request did not finish: {resp:?}; logs:\n{logs}"
    );
    assert_has(&logs, &["Handling signal: term", "Shutting down: Master"]);
    assert_eq!(code, 0, "{logs}");
    assert!(
        took >= Duration::from_millis(1500),
        "docker stop took only {}: did gunicorn wait for the request?",
        secs(took)
    );
    assert!(
        took < Duration::from_secs(12),
        "docker stop took {}",
        secs(took)
    );
    let report = must_report(T, &logs);
    assert!(
        report.contains("child exited with code 0; exit status 0")
            && report.contains("drain: SIGTERM to 2 processes")
            && report.ends_with("orphans reaped: 2"),
        "{report}"
    );
}

// ---------------------------------------------------------------------------
// Shell wrappers
// ---------------------------------------------------------------------------

/// A bash wrapper with a TERM trap, waiting for its foreground `sleep`:
/// vigil passes SIGTERM to bash, which holds the trap until the sleep ends,
/// and the sleep never gets the signal. `docker stop -t 3` waits out the
/// whole timeout and SIGKILLs everything (137); the trap never runs, and
/// vigil, killed too, writes no report. tini does the same.
#[test]
fn bash_wrapper_with_a_term_trap_waits_out_the_stop_timeout() {
    const T: &str = "bash_wrapper_trap";
    let Some(h) = harness(T) else { return };
    let stop_timeout = 3;
    let with = WRAPPER.start(h, T, stop_timeout, &[]);
    let without = h.start(
        T,
        &["--stop-timeout", "3", "--entrypoint", "/usr/bin/tini"],
        &["--", "bash", "-c", WRAPPER_SCRIPT],
    );
    with.wait_log("wrapper: ready", READY);
    without.wait_log("wrapper: ready", READY);
    let took = stop_together(&[&with, &without]);
    let (with_code, without_code) = (with.exit_code(), without.exit_code());
    let (with_logs, without_logs) = (with.logs(), without.logs());
    note(
        T,
        format!(
            "docker stop -t {stop_timeout}: under vigil {} exit {with_code}; under tini {} exit {without_code}",
            secs(took[0]),
            secs(took[1])
        ),
    );
    for (who, took, code, logs) in [
        ("vigil", took[0], with_code, &with_logs),
        ("tini", took[1], without_code, &without_logs),
    ] {
        assert_eq!(code, 137, "under {who}; logs:\n{logs}");
        assert!(
            took >= Duration::from_millis(stop_timeout * 1000 - 200),
            "under {who} docker stop took only {}",
            secs(took)
        );
        assert!(
            !logs.contains("wrapper: got SIGTERM"),
            "under {who} the trap ran:\n{logs}"
        );
    }
    assert!(exit_report(&with_logs).is_none(), "{with_logs}");
}

/// The two fixes of the wrapper above: `exec` (the sleep replaces bash and
/// gets SIGTERM itself: 143), and `-g` (SIGTERM to the whole group: the
/// sleep dies, bash runs its trap, goes on with its script and exits 0).
/// Both well within the timeout.
#[test]
fn bash_wrapper_stops_fast_with_exec_or_the_process_group() {
    const T: &str = "bash_wrapper_fixed";
    let Some(h) = harness(T) else { return };
    let stop_timeout = 6;
    let exec = WRAPPER_EXEC.start(h, T, stop_timeout, &[]);
    let group = WRAPPER_GROUP.start(h, T, stop_timeout, &[]);
    exec.wait_log("wrapper: ready", READY);
    group.wait_log("wrapper: ready", READY);
    let took = stop_together(&[&exec, &group]);
    let (exec_code, group_code) = (exec.exit_code(), group.exit_code());
    let (exec_logs, group_logs) = (exec.logs(), group.logs());
    note(
        T,
        format!(
            "docker stop -t {stop_timeout}: with exec {} exit {exec_code}; with -g {} exit {group_code}",
            secs(took[0]),
            secs(took[1])
        ),
    );
    for (what, took, logs) in [("exec", took[0], &exec_logs), ("-g", took[1], &group_logs)] {
        assert!(
            took < Duration::from_secs(stop_timeout / 2),
            "with {what} docker stop took {}; logs:\n{logs}",
            secs(took)
        );
    }
    assert_eq!(exec_code, 143, "{exec_logs}");
    let report = must_report(T, &exec_logs);
    assert!(
        report.contains("child was killed by SIGTERM (status 143)"),
        "{report}"
    );

    assert_eq!(group_code, 0, "{group_logs}");
    assert_has(
        &group_logs,
        &["wrapper: got SIGTERM", "wrapper: sleep ended"],
    );
    let report = must_report(T, &group_logs);
    assert!(
        report.contains("child exited with code 0; exit status 0"),
        "{report}"
    );
}

/// A shell-form CMD: the server is the shell's child. `docker stop`'s
/// SIGTERM kills the shell (143), and the server gets its SIGTERM from
/// vigil's drain, after the shell is gone (and SIGKILL after the drain
/// timeout, 2 s, if it takes longer). With `exec` in the CMD, the server
/// is vigil's child and gets the SIGTERM itself; nothing is left to drain.
#[test]
fn shell_form_cmd_leaves_the_server_to_the_drain_unless_it_execs() {
    const T: &str = "shell_form_cmd";
    let Some(h) = harness(T) else { return };
    let shell = SHELL_FORM.start(h, T, 10, &[]);
    let exec = SHELL_FORM_EXEC.start(h, T, 10, &[]);
    for ctr in [&shell, &exec] {
        let ip = address(ctr);
        assert!(
            wait_until_every(READY, Duration::from_millis(200), || {
                http_get(&ip, 8080, "/", Duration::from_secs(5))
                    .map(|r| r.status == 200)
                    .unwrap_or(false)
            }),
            "{T}: the server in {} does not answer; logs:\n{}",
            ctr.name,
            ctr.logs()
        );
    }
    let parent = |ctr: &Ctr| {
        let ps = ctr.exec(&["ps", "-o", "ppid=,comm=", "-C", "python3"]);
        ps.split_whitespace().next().unwrap_or("").to_string()
    };
    let (shell_parent, exec_parent) = (parent(&shell), parent(&exec));
    assert_ne!(
        shell_parent, "1",
        "under sh -c the server should be the shell's child"
    );
    assert_eq!(
        exec_parent, "1",
        "with exec the server should be vigil's child"
    );

    let took = stop_together(&[&shell, &exec]);
    let (shell_logs, exec_logs) = (shell.logs(), exec.logs());
    let (shell_code, exec_code) = (shell.exit_code(), exec.exit_code());
    note(
        T,
        format!(
            "shell form: docker stop {} exit {shell_code}; with exec: {} exit {exec_code}",
            secs(took[0]),
            secs(took[1])
        ),
    );
    for (what, took) in [("shell form", took[0]), ("exec", took[1])] {
        assert!(
            took < Duration::from_secs(5),
            "{what}: docker stop took {}",
            secs(took)
        );
    }
    assert_eq!(
        shell_code, 143,
        "the shell dies of the SIGTERM; logs:\n{shell_logs}"
    );
    let report = must_report(T, &shell_logs);
    assert!(
        report.contains("child was killed by SIGTERM (status 143)")
            && report.contains("drain: SIGTERM to 1 process"),
        "{report}"
    );
    assert_eq!(
        exec_code, 143,
        "the server dies of the SIGTERM; logs:\n{exec_logs}"
    );
    let report = must_report(T, &exec_logs);
    assert!(
        report.contains("child was killed by SIGTERM (status 143)") && !report.contains("drain:"),
        "{report}"
    );
}

// ---------------------------------------------------------------------------
// The stop sequence on any stop signal, a hung pre-stop hook, the warning
// about what does not stop
// ---------------------------------------------------------------------------

/// vigil's exit record in a container's logs (`VIGIL_LOG_FORMAT=json`): the
/// one line whose `event` is `exit`.
fn exit_record(test: &str, logs: &str) -> serde_json::Value {
    let records: Vec<serde_json::Value> = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .filter(|v| v["event"] == "exit")
        .collect();
    match records.as_slice() {
        [record] => {
            note(test, format!("exit record: {record}"));
            record.clone()
        }
        _ => panic!(
            "{test}: {} exit records in the logs:\n{logs}",
            records.len()
        ),
    }
}

/// nginx's graceful stop with the whole stop sequence: with SIGQUIT made a
/// stop signal (`VIGIL_STOP_SIGNALS=QUIT`, beside `STOPSIGNAL SIGQUIT`),
/// the pre-stop hook runs, then SIGQUIT goes on to nginx, within the grace
/// period; a download in flight finishes, and the exit record names SIGQUIT
/// as the stop signal, sent by the engine and forwarded as it is.
#[test]
fn nginx_quit_as_a_stop_signal_runs_the_hook_and_lets_a_download_finish() {
    const T: &str = "nginx_quit_stop_sequence";
    let Some(h) = harness(T) else { return };
    let ctr = NGINX_STOP_SEQUENCE.start(h, T, 20, &["-e", "VIGIL_LOG_FORMAT=json"]);
    ctr.wait_log(NGINX_READY, READY);
    let download = Download::start(&address(&ctr), 80, "/big", Duration::from_secs(30));
    assert!(
        wait_until(Duration::from_secs(10), || download.received() > 200_000),
        "{T}: the download does not start"
    );
    let took = ctr.stop();
    let (resp, lasted) = download.finish();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(
        T,
        format!(
            "docker stop took {}, exit {code}; the download took {}",
            secs(took),
            secs(lasted)
        ),
    );
    let resp = resp.unwrap_or_else(|e| panic!("the download: {e}; logs:\n{logs}"));
    assert!(
        resp.complete() && resp.body.len() == BIG,
        "the download did not finish: {} of {:?} bytes; logs:\n{logs}",
        resp.body.len(),
        resp.content_length()
    );
    assert!(
        logs.contains("pre-stop: draining after") && logs.contains("QUIT"),
        "the pre-stop hook's output is not in the logs:\n{logs}"
    );
    assert_has(
        &logs,
        &["signal 3 (SIGQUIT) received", "gracefully shutting down"],
    );
    assert_eq!(code, 0, "{logs}");
    let exit = exit_record(T, &logs);
    assert_eq!(exit["status"], 0, "{exit}");
    assert_eq!(exit["stop"]["cause"], "signal", "{exit}");
    assert_eq!(exit["stop"]["signal"], "SIGQUIT", "{exit}");
    assert_eq!(exit["stop"]["sent"], "SIGQUIT", "{exit}");
    assert_eq!(
        exit["stop"]["sender"]["kind"], "outside_namespace",
        "{exit}"
    );
    assert_eq!(exit["hooks"][0]["hook"], "pre-stop", "{exit}");
    assert_eq!(exit["hooks"][0]["outcome"], "succeeded", "{exit}");
    assert!(exit.get("grace_kills").is_none(), "{exit}");
}

/// A pre-stop hook that hangs (`sleep 30`) does not withhold the stop
/// signal: with a 20 s grace period, the hook is killed at the pre-stop
/// timeout (half the grace period by default), and postgres gets its
/// signal (SIGTERM, forwarded as SIGINT) well before the grace deadline:
/// a clean shutdown, exit 0, no recovery on the next start.
#[test]
fn postgres_gets_its_stop_signal_before_the_grace_deadline_despite_a_hung_hook() {
    const T: &str = "postgres_hung_hook";
    let Some(h) = harness(T) else { return };
    let grace = Duration::from_secs(20);
    let ctr = POSTGRES.start(
        h,
        T,
        30,
        &[
            "-e",
            "VIGIL_PRE_STOP=sleep 30",
            "-e",
            "VIGIL_GRACE_PERIOD=20s",
            "-e",
            "VIGIL_LOG_FORMAT=json",
        ],
    );
    ctr.wait_log(PG_READY, READY);
    let took = ctr.stop();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(
        T,
        format!(
            "grace period 20s, hook sleep 30: docker stop took {}, exit {code}",
            secs(took)
        ),
    );
    assert_has(&logs, &["received fast shutdown request", PG_DOWN]);
    assert_eq!(code, 0, "{logs}");
    assert!(
        took < grace - Duration::from_secs(2),
        "docker stop took {}: postgres' signal came at (or after) the grace deadline",
        secs(took)
    );
    let exit = exit_record(T, &logs);
    assert_eq!(exit["stop"]["sent"], "SIGINT", "{exit}");
    assert_eq!(exit["hooks"][0]["hook"], "pre-stop", "{exit}");
    assert_ne!(exit["hooks"][0]["outcome"], "succeeded", "{exit}");
    assert!(exit.get("grace_kills").is_none(), "{exit}");

    let second = restart_postgres(&ctr, 2);
    for bad in PG_RECOVERY {
        assert!(
            !second.contains(bad),
            "{bad:?} on the second start:\n{second}"
        );
    }
}

/// The bash wrapper that swallows SIGTERM: vigil says, before Docker's
/// SIGKILL, that the shell is still running and waits for its foreground
/// job (naming both), and how to fix it (`exec`, or `-g`). Without a grace
/// period the warning comes 5 s after the stop began.
#[test]
fn bash_wrapper_swallowing_term_gets_a_still_running_warning_before_the_sigkill() {
    const T: &str = "bash_wrapper_warning";
    let Some(h) = harness(T) else { return };
    let stop_timeout = 8;
    let ctr = WRAPPER.start(h, T, stop_timeout, &[]);
    ctr.wait_log("wrapper: ready", READY);
    let warning = |logs: &str| {
        logs.lines()
            .find(|l| {
                l.starts_with("vigil: warning:")
                    && l.contains("bash")
                    && l.contains("sleep")
                    && l.contains("exec")
                    && l.contains("-g")
            })
            .map(str::to_string)
    };
    let (took, seen) = std::thread::scope(|s| {
        let stopper = s.spawn(|| ctr.stop());
        let started = std::time::Instant::now();
        let bound = Duration::from_secs(stop_timeout + 2);
        let seen = wait_until_every(bound, Duration::from_millis(100), || {
            warning(&ctr.logs()).is_some()
        })
        .then(|| started.elapsed());
        (stopper.join().unwrap(), seen)
    });
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(
        T,
        format!(
            "docker stop -t {stop_timeout}: {} exit {code}; warning seen after {:?}",
            secs(took),
            seen.map(secs)
        ),
    );
    let line = warning(&logs).unwrap_or_else(|| {
        panic!("{T}: no warning naming the shell, its job, exec and -g:\n{logs}")
    });
    note(T, format!("warning: {line}"));
    let seen = seen.unwrap();
    assert!(
        seen >= Duration::from_millis(4500) && seen < Duration::from_secs(stop_timeout),
        "the warning came {} after the stop began, not about 5 s after it",
        secs(seen)
    );
    assert_eq!(code, 137, "{logs}");
}

/// A process started with `docker exec` (an idle psql session) is in the
/// container's PID namespace but not vigil's child: as PID 1, vigil's drain
/// still owes it SIGTERM when the server has exited ("every other process
/// in the namespace"), rather than leaving it to the kernel's SIGKILL.
#[test]
fn a_docker_exec_session_is_drained_with_sigterm() {
    const T: &str = "docker_exec_drained";
    let Some(h) = harness(T) else { return };
    let ctr = POSTGRES.start(h, T, 20, &[]);
    ctr.wait_log(PG_READY, READY);
    let _client = Session::start(&ctr, &["psql", "-U", "postgres"]);
    let sessions = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'";
    assert!(
        wait_until_every(READY, Duration::from_millis(200), || {
            psql(&ctr, sessions).parse::<u32>().unwrap_or(0) >= 2
        }),
        "{T}: the idle psql session never showed"
    );
    let took = ctr.stop();
    let logs = ctr.logs();
    note(
        T,
        format!("docker stop took {}, exit {}", secs(took), ctr.exit_code()),
    );
    let report = must_report(T, &logs);
    assert!(report.contains("drain: SIGTERM to 1 process"), "{report}");
}

// ---------------------------------------------------------------------------
// haproxy with the least privilege
// ---------------------------------------------------------------------------

/// haproxy on port 80 as its own user, in a container that keeps only what
/// that needs (`--cap-drop ALL`, NET_BIND_SERVICE for haproxy, SETUID and
/// SETGID for the switch; no CAP_KILL), with haproxy's own stop signal,
/// SIGUSR1. vigil, root without CAP_KILL, may not signal uid haproxy: it
/// takes that uid itself once haproxy has started, so `docker stop`'s
/// SIGUSR1 reaches haproxy, which stops softly and exits 0, at once.
#[test]
fn haproxy_with_the_least_privilege_stops_on_its_own_signal() {
    const T: &str = "haproxy_least_privilege";
    let Some(h) = harness(T) else { return };
    let ctr = h.start(
        T,
        &[
            super::LEAST_PRIVILEGE,
            &[
                "--stop-signal",
                "SIGUSR1",
                "-e",
                "VIGIL_STOP_SIGNALS=USR1",
                "-e",
                "VIGIL_USER=haproxy",
                "-e",
                "VIGIL_CAPS=NET_BIND_SERVICE",
                "-e",
                "VIGIL_LOG_FORMAT=json",
                "-e",
                "VIGIL_VERBOSITY=2",
            ],
        ]
        .concat(),
        &["haproxy", "-db", "-f", "/srv/servers/haproxy.cfg"],
    );
    ctr.wait_record("following_user", READY);
    // haproxy binds its port a little after vigil follows it to its user.
    let served = wait_until_every(READY, Duration::from_millis(200), || {
        ctr.exec_output(&["/vigil", "--probe", "http://127.0.0.1:80/"])
            .status
            .success()
    });
    assert!(served, "haproxy does not answer on port 80\n{}", ctr.logs());
    let user = ctr.exec(&["ps", "-o", "user=", "-C", "haproxy"]);
    assert_eq!(user.trim(), "haproxy", "{}", ctr.logs());

    let took = ctr.stop();
    let code = ctr.exit_code();
    let logs = ctr.logs();
    note(T, format!("docker stop took {}, exit {code}", secs(took)));
    assert_eq!(code, 0, "{logs}");
    assert!(
        took < Duration::from_secs(3),
        "docker stop took {}",
        secs(took)
    );
    let exit = exit_record(T, &logs);
    assert_eq!(exit["stop"]["signal"], "SIGUSR1", "{exit}");
    assert_eq!(exit["stop"]["sent"], "SIGUSR1", "{exit}");
    assert_eq!(exit["ending"]["kind"], "exited", "{exit}");
}
