//! The memory a child runs on until its execve: it shares the parent's (`CLONE_VM`, see
//! `spawn.rs`), on a stack and thread-local area of its own.

use crate::Error;

/// The child's stack (with a guard page below it) and thread-local area: it shares the
/// parent's memory until execve, so it must not use the parent thread's stack or its TLS
/// (where libc keeps `errno`).
///
/// A mapping whose child is gone is kept for the next run ([`SPARE`]) rather than unmapped:
/// mapping, guarding and unmapping two of them, and the page faults of a fresh stack, cost a
/// run tens of microseconds here.
pub(crate) struct ChildMemory {
    base: *mut libc::c_void,
    len: usize,
}

const GUARD: usize = 4096;
const STACK: usize = 256 << 10;
const TLS: usize = 64 << 10;

/// Mappings no child uses any more (their addresses), at most [`SPARES`].
static SPARE: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
const SPARES: usize = 4;

impl ChildMemory {
    pub(crate) fn new() -> Result<ChildMemory, Error> {
        let len = GUARD + STACK + TLS;
        let spare = SPARE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
        let memory = match spare {
            Some(base) => ChildMemory { base: base as *mut libc::c_void, len },
            None => Self::map(len)?,
        };
        // The thread pointer: glibc reads the TCB's self pointers (x86_64: `%fs:0` and
        // `%fs:16`); TLS variables sit below it on x86_64 and above it on aarch64.
        let tcb = memory.tls().cast::<usize>();
        // SAFETY: `tcb` is inside our mapping, aligned, with room on both sides.
        unsafe {
            *tcb = tcb as usize;
            *tcb.add(2) = tcb as usize;
        }
        Ok(memory)
    }

    /// A new mapping of `len` bytes, its first page the stack's guard page.
    fn map(len: usize) -> Result<ChildMemory, Error> {
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK;
        // SAFETY: a fresh anonymous mapping; nothing else refers to it.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0) };
        if base == libc::MAP_FAILED {
            return Err(Error::Io(std::io::Error::last_os_error()));
        }
        let memory = ChildMemory { base, len };
        // SAFETY: the first page of our own mapping becomes the stack's guard page.
        if unsafe { libc::mprotect(base, GUARD, libc::PROT_NONE) } < 0 {
            return Err(Error::Io(std::io::Error::last_os_error()));
        }
        Ok(memory)
    }

    /// The top of the stack (it grows down), 16-byte aligned.
    pub(crate) fn stack_top(&self) -> *mut libc::c_void {
        self.base.wrapping_byte_add(GUARD + STACK)
    }

    /// The thread pointer for the child.
    pub(crate) fn tls(&self) -> *mut libc::c_void {
        let offset = if cfg!(target_arch = "x86_64") { TLS - 4096 } else { 4096 };
        self.base.wrapping_byte_add(GUARD + STACK + offset)
    }
}

// SAFETY: a `ChildMemory` owns its mapping alone; it is only unmapped by its drop, on whichever
// thread that happens (a process started ahead is made on one thread and used on another).
unsafe impl Send for ChildMemory {}

impl Drop for ChildMemory {
    fn drop(&mut self) {
        // The child has exec'd or is gone (drop order in `run`): the mapping is ours alone.
        let mut spare = SPARE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if spare.len() < SPARES {
            spare.push(self.base as usize);
            return;
        }
        drop(spare);
        // SAFETY: unmaps our own mapping, which nothing uses any more (above).
        unsafe { libc::munmap(self.base, self.len) };
    }
}
