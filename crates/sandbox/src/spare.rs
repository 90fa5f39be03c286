//! Root callers: a network namespace made ahead, while the caller is still loading its policy.
//!
//! Making a network namespace is the costliest part of the `clone` that starts a command
//! without network (the loopback device and the per-namespace sysctl tables: about 0.3 ms of
//! kernel time here, on the caller's path). A root caller can make a fresh one ahead on another
//! thread ([`make`], started by [`crate::warm`]) and give it to the next run that needs one
//! ([`take`]): the thread that clones the command joins it for the `clone` only (a network
//! namespace is per thread), so the command starts in it instead of in a new one, and the
//! thread goes back to its own at once.
//!
//! What the command gets is what `CLONE_NEWNET` would have given it: a namespace made by this
//! process moments before, used by no process and no other run (a spare is taken once), holding
//! only a loopback device that is down. Its owner is the initial user namespace instead of the
//! command's, so the command holds no capability over it at all. Other callers cannot join a
//! namespace that the initial user namespace owns from the command's own, and clone with
//! `CLONE_NEWNET` as before.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Mutex, PoisonError};

use crate::Error;

/// The spare, if one is waiting. Held while one is being made, so that a run asking meanwhile
/// waits for it (less than making its own) instead of making a second one.
static SPARE: Mutex<Option<Spare>> = Mutex::new(None);

/// A network namespace no process has used.
#[derive(Debug)]
pub(crate) struct Spare(OwnedFd);

/// The cloning thread's own network namespace, to go back to.
#[derive(Debug)]
pub(crate) struct Home(OwnedFd);

/// Makes a spare for the next run, unless one is waiting. Called on a thread that does
/// nothing else afterwards: the thread is left in the namespace it made. Root callers only;
/// a failure leaves no spare, and the next run makes its own namespace.
pub(crate) fn make() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let mut slot = SPARE.lock().unwrap_or_else(PoisonError::into_inner);
    if slot.is_some() {
        return;
    }
    // SAFETY: unshare only changes this thread's namespaces.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } < 0 {
        return;
    }
    if let Ok(ns) = std::fs::File::open("/proc/thread-self/ns/net") {
        *slot = Some(Spare(OwnedFd::from(ns)));
    }
}

/// The spare, if one is waiting (or being made), for one run.
pub(crate) fn take() -> Option<Spare> {
    SPARE.lock().unwrap_or_else(PoisonError::into_inner).take()
}

impl Spare {
    /// Moves the calling thread into the spare; [`Home::leave`] moves it back.
    pub(crate) fn enter(&self) -> Result<Home, Error> {
        let home = std::fs::File::open("/proc/thread-self/ns/net").map(OwnedFd::from).map_err(Error::Io)?;
        setns(&self.0)?;
        Ok(Home(home))
    }

    /// The namespace's inode number (what `/proc/PID/ns/net` links to: `net:[INODE]`).
    #[cfg(test)]
    fn inode(&self) -> u64 {
        std::fs::File::from(self.0.try_clone().unwrap()).metadata().map(|m| std::os::unix::fs::MetadataExt::ino(&m)).unwrap()
    }
}

impl Home {
    /// Moves the calling thread back into its own network namespace.
    pub(crate) fn leave(self) -> Result<(), Error> {
        setns(&self.0)
    }
}

fn setns(ns: &OwnedFd) -> Result<(), Error> {
    // SAFETY: setns on a namespace descriptor we own; it changes only this thread's network
    // namespace.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
        return Err(Error::Namespaces(std::io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_net() -> String {
        std::fs::read_link("/proc/thread-self/ns/net").unwrap().display().to_string()
    }

    #[test]
    fn a_spare_is_a_new_namespace_and_the_thread_goes_back_to_its_own() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return; // only root callers make spares
        }
        // On a thread of its own: `make` leaves its thread in the spare.
        let spare = std::thread::spawn(|| {
            let before = thread_net();
            make();
            // Another test's run may have taken it; then this thread made none or one more.
            (before, take())
        });
        let (host, Some(spare)) = spare.join().unwrap() else { return };
        let here = thread_net();
        assert_eq!(here, host, "this thread starts in the process's namespace");
        let new = format!("net:[{}]", spare.inode());
        assert_ne!(new, host);
        let home = spare.enter().unwrap();
        assert_eq!(thread_net(), new);
        home.leave().unwrap();
        assert_eq!(thread_net(), host);
        // Taken once: the slot is empty until the next `make`.
        assert!(take().is_none_or(|other| other.inode() != spare.inode()));
    }
}
