//! Stopping a run from another thread: [`Cancel`].
//!
//! The supervisor polls the handle's eventfd beside the command's pipes and pidfd, so a run
//! that is not cancelled pays nothing for it (no extra wakeups), and a cancelled one is killed
//! as soon as the handle fires: pid 1 of its namespace, which takes the rest with it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::Error;

/// A handle that cancels the run it is given to (in [`crate::Spec::cancel`]): a run not yet
/// started does not start ([`Error::Cancelled`]); a running command is killed, with its whole
/// pid namespace, and the run reports `cancelled`. Clones share the handle; firing it again does
/// nothing more.
#[derive(Debug, Clone)]
pub struct Cancel(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    fired: AtomicBool,
    /// Readable once fired (never read: it stays readable).
    event: OwnedFd,
}

impl Cancel {
    /// A handle not fired yet.
    ///
    /// # Errors
    /// The eventfd cannot be made (out of descriptors).
    pub fn new() -> Result<Cancel, Error> {
        // SAFETY: eventfd has no memory preconditions; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(Error::Io(std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor owned by nobody else.
        let event = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Cancel(Arc::new(Inner { fired: AtomicBool::new(false), event })))
    }

    /// Fires the handle: the run stops (or never starts).
    pub fn cancel(&self) {
        if self.0.fired.swap(true, Ordering::SeqCst) {
            return;
        }
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to the eventfd we own. It cannot fail but
        // by overflow, which one write cannot reach; the flag above is set either way.
        unsafe { libc::write(self.0.event.as_raw_fd(), (&raw const one).cast(), 8) };
    }

    /// Whether the handle has fired.
    pub fn is_cancelled(&self) -> bool {
        self.0.fired.load(Ordering::SeqCst)
    }

    /// The descriptor that becomes readable when the handle fires.
    pub(crate) fn fd(&self) -> RawFd {
        self.0.event.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firing_sets_the_flag_and_wakes_a_poll() {
        let c = Cancel::new().unwrap();
        let mut pfd = libc::pollfd { fd: c.fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&raw mut pfd, 1, 0) }, 0);
        assert!(!c.is_cancelled());
        c.clone().cancel();
        c.cancel();
        assert!(c.is_cancelled());
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&raw mut pfd, 1, 0) }, 1);
    }
}
