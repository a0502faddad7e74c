//! Pause mode (`-P`): vigil runs no command. As a pod's infra process
//! (the sandbox's pause container, catatonit's `-P`) it holds the pod's
//! namespaces, reaps whatever is reparented to it, and exits 0 on a stop
//! signal.
//!
//! A loop of its own, not a state of the supervisor without a child:
//! with nothing to forward to, no hook, no deadline and no drain, every
//! state and handler of the supervisor would have to learn that there may
//! be no child. Here what happens on each signal is the one `match` in
//! `run`: SIGCHLD reaps, a stop signal exits 0, anything else is logged at
//! `-v` and changes nothing. The loop sleeps in one wait for a signal,
//! with no timeout, so an idle pause is never scheduled.

use crate::cli::Config;
use crate::log;
use crate::log::event::{Event, Level};
use crate::log::facts::{Named, Sender, Signal};
use crate::procs::{self, Role};
use crate::reap;
use crate::text::os_error;

use super::setup::{kernel_side, open_signals};

/// Pauses until a stop signal; vigil's exit status: 0 after a stop
/// signal, 1 when signals cannot be read.
pub fn run(config: &Config) -> i32 {
    let mut signals = match open_signals() {
        Ok(signals) => signals,
        Err(status) => return status,
    };
    kernel_side(config, Role::of_this_process());
    // A pause process needs no working directory, and left where it was
    // started it would keep that directory's mount busy. Failing to move
    // leaves it as it was, which is no reason not to pause.
    let _ = nix::unistd::chdir("/");
    let stop_signals = stop_signals(config);
    log::emit(&Event::Pausing {
        stop_signals: &stop_signals,
    });
    let mut orphans_reaped = 0;
    loop {
        let received = match signals.wait(None) {
            Ok(Some(received)) => received,
            // Interrupted (a tracer attached, say): wait again.
            Ok(None) => continue,
            // No stop signal could be seen: exit 1 rather than pause deaf
            // to the stop.
            Err(e) => {
                let error = format!("cannot read signals: {}", os_error(&e));
                log::emit(&Event::Fault { error: &error });
                return 1;
            }
        };
        match received.signal {
            Signal::CHLD => reap::all_ended(|pid, ending| {
                orphans_reaped += 1;
                let warn = config.warn_on_reap;
                log::emit(&Event::Reaped { pid, ending, warn });
            }),
            signal if stop_signals.contains(&signal) => {
                let status = 0;
                log::emit(&Event::PauseEnded {
                    signal,
                    sender: &named(received.sender),
                    orphans_reaped,
                    status,
                });
                return status;
            }
            signal => {
                if log::shown(Level::Info) {
                    log::emit(&Event::SignalReceived {
                        signal,
                        sender: &named(received.sender),
                    });
                }
            }
        }
    }
}

/// The signals that end the pause: TERM and INT always (a pause process
/// holds nothing that a stop could lose), and those of `--stop-signals`.
fn stop_signals(config: &Config) -> Vec<Signal> {
    let mut signals = vec![Signal::TERM, Signal::INT];
    for &signal in &config.stop_signals {
        if !signals.contains(&signal) {
            signals.push(signal);
        }
    }
    signals
}

/// A signal's sender, named from /proc when it is a process of vigil's
/// namespace.
fn named(sender: Sender) -> Named {
    Named::looked_up(sender, procs::name)
}
