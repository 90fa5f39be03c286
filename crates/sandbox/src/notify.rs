//! The seccomp filter's refusals, as ground truth for `denials`.
//!
//! The filter (`seccomp.rs`) hands every refused system call to a listener instead of failing
//! it in the kernel: the child installs it with `SECCOMP_FILTER_FLAG_NEW_LISTENER` and passes
//! the listener to the parent over a socket of its own ([`send`], [`receive`]), closing its
//! copy before the command is started (the command must never hold it: whoever answers a
//! notification decides the system call). The parent polls it beside the command's pipes and
//! answers every notification `EPERM` ([`Refusals::answer`]), noting the call and the
//! argument that decided it. The command sees exactly what the kernel's own `EPERM` gave it;
//! a run that makes no refused call pays for one more descriptor.
//!
//! If the parent stops answering (it died), the kernel fails the waiting call with `ENOSYS`:
//! refused either way.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use warden_feedback::{Denial, DenialSource};

/// At most this many distinct refusals are kept for one run (all are answered).
const KEPT: usize = 32;

/// Sends `fd` over the socket `sock` (one byte and one descriptor).
///
/// # Safety
/// Only in a child between `clone` and `execve`; `sock` and `fd` are descriptors it holds.
pub(crate) unsafe fn send(sock: RawFd, fd: RawFd) -> libc::c_int {
    // SAFETY: the caller's contract.
    unsafe { send_fds(sock, &[0], &[fd]) as libc::c_int }
}

/// One `sendmsg` of `payload` with the descriptors `fds` (at most 8) on `sock`: what
/// `sendmsg` returns (-1 with more descriptors). Async-signal-safe: stack buffers only.
///
/// # Safety
/// `sock` and every one of `fds` are descriptors this process holds.
pub(crate) unsafe fn send_fds(sock: RawFd, payload: &[u8], fds: &[RawFd]) -> isize {
    #[repr(C, align(8))]
    struct Control([u8; 128]);
    let mut iov = libc::iovec { iov_base: payload.as_ptr().cast_mut().cast(), iov_len: payload.len() };
    let mut control = Control([0; 128]);
    let bytes = size_of_val(fds);
    // SAFETY: (the whole block) sendmsg from buffers whose sizes we pass; the CMSG_* helpers
    // only compute addresses inside `control`, checked to have room for one header and `fds`.
    unsafe {
        let space = libc::CMSG_SPACE(bytes as u32) as usize;
        if fds.len() > 8 || space > control.0.len() {
            return -1;
        }
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            msg.msg_control = control.0.as_mut_ptr().cast();
            msg.msg_controllen = space;
            let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(bytes as u32) as usize;
            std::ptr::copy_nonoverlapping(fds.as_ptr().cast::<u8>(), libc::CMSG_DATA(cmsg), bytes);
        }
        libc::sendmsg(sock, &raw const msg, libc::MSG_NOSIGNAL)
    }
}

/// The listener the child sent on `sock`, if it sent one (without waiting: the child sends it
/// before it waits for its last go, so it is there once the command has started).
pub(crate) fn receive(sock: &OwnedFd) -> Option<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut fds = [-1; 1];
    // SAFETY: receives into our buffers; a descriptor received is ours to own.
    let (got, n) = unsafe { receive_fds(sock.as_raw_fd(), &mut byte, &mut fds, libc::MSG_DONTWAIT) }?;
    // SAFETY: as above.
    (got == 1 && n == 1 && fds[0] >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fds[0]) })
}

/// One `recvmsg` on `sock` into `payload`, with up to `fds.len()` (at most 8) descriptors
/// (close-on-exec) into `fds`: the bytes and the descriptors received, `None` on an error or a
/// truncated message. Async-signal-safe: stack buffers only.
///
/// # Safety
/// `sock` is a socket this process holds; the caller owns every descriptor received.
pub(crate) unsafe fn receive_fds(sock: RawFd, payload: &mut [u8], fds: &mut [RawFd], flags: libc::c_int) -> Option<(usize, usize)> {
    #[repr(C, align(8))]
    struct Control([u8; 128]);
    let mut iov = libc::iovec { iov_base: payload.as_mut_ptr().cast(), iov_len: payload.len() };
    let mut control = Control([0; 128]);
    // SAFETY: (the whole block) recvmsg into buffers whose sizes we pass; the CMSG_* helpers
    // only compute addresses inside `control`.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = control.0.len();
        let got = loop {
            let r = libc::recvmsg(sock, &raw mut msg, flags | libc::MSG_CMSG_CLOEXEC);
            if r >= 0 || *libc::__errno_location() != libc::EINTR {
                break r;
            }
        };
        if got < 0 || msg.msg_flags & libc::MSG_CTRUNC != 0 {
            return None;
        }
        let mut n = 0;
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        if !cmsg.is_null() && (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
            let bytes = (*cmsg).cmsg_len - libc::CMSG_LEN(0) as usize;
            n = (bytes / size_of::<RawFd>()).min(fds.len());
            let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
            for (i, slot) in fds.iter_mut().enumerate().take(n) {
                *slot = data.add(i).read_unaligned();
            }
        }
        Some((got as usize, n))
    }
}

/// The refused calls of one run: the distinct ones (system call number and arguments as the
/// filter read them), and how many there were.
#[derive(Debug, Default)]
pub(crate) struct Refusals {
    kept: Vec<String>,
    pub(crate) count: u64,
}

impl Refusals {
    /// Answers one pending notification on `listener` with `EPERM` and notes it. `false` when
    /// the listener is unusable (then the caller stops polling it; the kernel answers `ENOSYS`
    /// to whatever still waits). A notification whose caller died meanwhile is skipped.
    pub(crate) fn answer(&mut self, listener: &OwnedFd) -> bool {
        // SAFETY: (the whole block) the two ioctls of a seccomp listener, on zeroed structs of
        // the kernel's layout (libc's), which RECV requires zeroed.
        unsafe {
            let mut req: libc::seccomp_notif = std::mem::zeroed();
            if libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &raw mut req) < 0 {
                let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                // ENOENT: its caller was killed between poll and here.
                return e == libc::ENOENT || e == libc::EINTR;
            }
            let mut resp: libc::seccomp_notif_resp = std::mem::zeroed();
            resp.id = req.id;
            resp.error = -libc::EPERM;
            // ENOENT here too: the caller is gone, nothing is waiting for the answer.
            libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &raw mut resp);
            self.note(i64::from(req.data.nr), &req.data.args);
        }
        true
    }

    fn note(&mut self, nr: i64, args: &[u64; 6]) {
        self.count += 1;
        let what = crate::seccomp::describe(nr, args);
        if self.kept.len() < KEPT && !self.kept.contains(&what) {
            self.kept.push(what);
        }
    }

    /// One denial per distinct refused call: `{op: syscall, target: socket (AF_INET)}`.
    pub(crate) fn denials(&self) -> Vec<Denial> {
        self.kept.iter().map(|t| Denial::observed("syscall", t.clone(), DenialSource::Seccomp)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_kept_once_each_and_counted() {
        let mut r = Refusals::default();
        for _ in 0..3 {
            r.note(libc::SYS_ptrace, &[0; 6]);
        }
        r.note(libc::SYS_socket, &[libc::AF_INET6 as u64, 1, 0, 0, 0, 0]);
        assert_eq!(r.count, 4);
        let d: Vec<String> = r.denials().into_iter().map(|d| format!("{} {} {:?}", d.op, d.target, d.source)).collect();
        assert_eq!(d, ["syscall ptrace Seccomp", "syscall socket (AF_INET6) Seccomp"]);
        for nr in 0..100 {
            r.note(1000 + nr, &[0; 6]);
        }
        assert_eq!(r.denials().len(), KEPT);
    }
}
