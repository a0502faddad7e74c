//! The plain facts vigil tells of: signals and who sent them, processes
//! and how they ended, hooks and how they went, what the memory cgroup
//! counted. Data and its words (`Display` for the text lines, `Fields` for
//! the records) and nothing else: nothing here touches the kernel, so the
//! log events and the exit report, which are made of these, stand below
//! every module that does.

pub mod hook;
pub mod memory;
pub mod process;
pub mod signal;
pub mod stop;

pub use hook::{Cancel, HookKind, KillReason, Outcome};
pub use memory::MemoryEvents;
pub use process::{Command, Ending, Proc};
pub use signal::{Named, Received, Sender, Signal, Target};
