//! A pipe read into memory by a background thread.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// Collects a pipe's bytes in a background thread; readable while running.
#[derive(Clone)]
pub(crate) struct Capture {
    pub(crate) buf: Arc<Mutex<Vec<u8>>>,
    pub(crate) done: Arc<AtomicBool>,
}

impl Capture {
    pub(crate) fn start(mut r: impl Read + Send + 'static) -> Capture {
        let c = Capture {
            buf: Arc::default(),
            done: Arc::default(),
        };
        let c2 = c.clone();
        thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match r.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => c2.buf.lock().unwrap().extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            c2.done.store(true, Ordering::SeqCst);
        });
        c
    }
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.buf.lock().unwrap()).into_owned()
    }
}
