//! Landlock: the ABI the kernel offers, and the access masks for each kind of grant.
//!
//! The rights per ABI come from the `landlock` crate's tables; the rules themselves are added
//! in the child with raw system calls (after fork nothing may allocate), see `child.rs`.

use std::sync::OnceLock;

use landlock::{ABI, Access, AccessFs, AccessNet, Scope};

/// `LANDLOCK_CREATE_RULESET_VERSION`.
const CREATE_RULESET_VERSION: u32 = 1;

/// The highest Landlock ABI this kernel offers (0: none).
pub fn abi() -> u32 {
    static ABI_CELL: OnceLock<u32> = OnceLock::new();
    *ABI_CELL.get_or_init(|| {
        // SAFETY: the documented probe form of landlock_create_ruleset: null attr, size 0,
        // the VERSION flag; it reads no memory and returns the ABI or -1.
        let v = unsafe {
            libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, CREATE_RULESET_VERSION)
        };
        u32::try_from(v).unwrap_or(0)
    })
}

/// The masks one run uses, resolved for an ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Masks {
    /// The ABI they were resolved for (>= 1).
    pub abi: u32,
    /// Everything handled (denied unless a rule allows it).
    pub handled_fs: u64,
    /// Network rights handled (TCP bind and connect) when the network is not granted.
    pub handled_net: u64,
    /// Scopes (abstract unix sockets, signals).
    pub scoped: u64,
    /// Rights on a read grant (directory).
    pub read: u64,
    /// Rights on a write grant (directory).
    pub write: u64,
    /// The subset of rights that apply to a regular file.
    pub file: u64,
    /// Listing a directory.
    pub read_dir: u64,
    /// Reading and writing a device node (`/dev/null`, the tty).
    pub device: u64,
}

impl Masks {
    /// Masks for `abi` (clamped to what the crate knows).
    pub(crate) fn new(abi: u32, network: bool) -> Masks {
        let level = ABI::from(i32::try_from(abi).unwrap_or(i32::MAX));
        let all = AccessFs::from_all(level).bits();
        let read = AccessFs::from_read(level).bits();
        let file = AccessFs::from_file(level).bits();
        let handled_net = if network { 0 } else { AccessNet::from_all(level).bits() };
        let scoped = Scope::from_all(level).bits();
        let device = (AccessFs::ReadFile | AccessFs::WriteFile).bits()
            | (AccessFs::from_all(level) & (AccessFs::Truncate | AccessFs::IoctlDev)).bits();
        Masks {
            abi,
            handled_fs: all,
            handled_net,
            scoped,
            read,
            write: all,
            file,
            read_dir: AccessFs::ReadDir as u64,
            device,
        }
    }

    /// The size of `landlock_ruleset_attr` this ABI understands.
    pub(crate) fn attr_size(&self) -> usize {
        match self.abi {
            0..=3 => 8,
            4 | 5 => 16,
            _ => 24,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernel_offers_landlock() {
        assert!(abi() >= 1, "Landlock is not available on this kernel");
    }

    #[test]
    fn masks_grow_with_the_abi() {
        let one = Masks::new(1, false);
        let seven = Masks::new(7, false);
        assert_eq!(one.handled_net, 0);
        assert_ne!(seven.handled_net, 0);
        assert_ne!(seven.scoped, 0);
        assert!(seven.handled_fs & one.handled_fs == one.handled_fs);
        assert_eq!(seven.read & !seven.handled_fs, 0);
        assert_eq!(Masks::new(7, true).handled_net, 0);
    }
}
