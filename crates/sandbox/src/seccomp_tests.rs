//! The hand-assembled filter against a seccompiler build of the same rules, run through a
//! small classic-BPF interpreter on every system call number with argument values that cross
//! each rule.

use std::collections::BTreeMap;

use seccompiler::{
    SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::*;

#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;

/// The same rules, compiled by seccompiler (what the sandbox installed before).
fn reference(network: bool) -> Program {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &(nr, _) in REFUSED {
        rules.insert(nr, Vec::new());
    }
    let cond = |arg: u8, len: Len, op: Op, v: u64| SeccompRule::new(vec![Cond::new(arg, len, op, v).unwrap()]).unwrap();
    rules.insert(libc::SYS_clone, CLONE_NS.iter().map(|&f| cond(0, Len::Qword, Op::MaskedEq(f), f)).collect());
    rules.insert(libc::SYS_ioctl, [TIOCSTI, TIOCLINUX].iter().map(|&c| cond(1, Len::Dword, Op::Eq, c)).collect());
    for &(nr, arg) in MODES {
        let bits = [u64::from(libc::S_ISUID), u64::from(libc::S_ISGID)];
        rules.insert(nr, bits.iter().map(|&b| cond(arg, Len::Dword, Op::MaskedEq(b), b)).collect());
    }
    if !network {
        rules.insert(libc::SYS_socket, vec![cond(0, Len::Dword, Op::Ne, libc::AF_UNIX as u64)]);
    }
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), ARCH).unwrap();
    let program: seccompiler::BpfProgram = filter.try_into().unwrap();
    program.into_iter().map(|f| libc::sock_filter { code: f.code, jt: f.jt, jf: f.jf, k: f.k }).collect()
}

/// Runs a classic BPF program on `seccomp_data` (nr, arch, ip 0, args).
fn eval(prog: &Program, nr: u32, args: [u64; 6]) -> u32 {
    run(prog, nr, args).0
}

/// What [`eval`] returns, and how many instructions it ran.
fn run(prog: &Program, nr: u32, args: [u64; 6]) -> (u32, usize) {
    let mut data = Vec::new();
    data.extend_from_slice(&nr.to_le_bytes());
    data.extend_from_slice(&AUDIT_ARCH.to_le_bytes());
    data.extend_from_slice(&0u64.to_le_bytes());
    for a in args {
        data.extend_from_slice(&a.to_le_bytes());
    }
    let (mut acc, mut pc) = (0u32, 0usize);
    for steps in 1..10_000 {
        let i = prog[pc];
        pc += 1;
        let jump = |cond: bool| if cond { usize::from(i.jt) } else { usize::from(i.jf) };
        match i.code {
            0x20 => acc = u32::from_le_bytes(data[i.k as usize..i.k as usize + 4].try_into().unwrap()),
            0x54 => acc &= i.k,
            0x05 => pc += i.k as usize,
            0x15 => pc += jump(acc == i.k),
            0x25 => pc += jump(acc > i.k),
            0x35 => pc += jump(acc >= i.k),
            0x45 => pc += jump(acc & i.k != 0),
            0x06 => return (i.k, steps),
            other => panic!("unexpected instruction {other:#x}"),
        }
    }
    panic!("the program did not return");
}

#[test]
fn both_variants_compile_and_stay_small() {
    for network in [false, true] {
        let [main] = programs(network).unwrap() else { panic!("one filter") };
        assert!(main.len() > REFUSED.len() && main.len() < 130, "{}", main.len());
        // The kernel runs the filter for every system call number at install: the longest path
        // is what a linear chain of `jeq` made long (over 70 instructions).
        let longest = (0..=460u32).map(|nr| run(main, nr, [0; 6]).1).max().unwrap_or(0);
        assert!(longest <= 16, "longest path {longest}");
        eprintln!("main filter: {} instructions, longest path {longest} (network {network})", main.len());
    }
}

#[test]
fn clone3_openat2_and_x32_numbers_fail_with_enosys() {
    let enosys = RET_ERRNO | libc::ENOSYS as u32;
    for network in [false, true] {
        let [main] = programs(network).unwrap() else { panic!("one filter") };
        assert_eq!(eval(main, libc::SYS_clone3 as u32, [0; 6]), enosys);
        assert_eq!(eval(main, libc::SYS_openat2 as u32, [0; 6]), enosys);
        if cfg!(target_arch = "x86_64") {
            for nr in [0u32, libc::SYS_read as u32, libc::SYS_bpf as u32, libc::SYS_clone3 as u32, 512, 547] {
                assert_eq!(eval(main, 0x4000_0000 | nr, [0; 6]), enosys, "x32 {nr}");
            }
        }
    }
}

#[test]
fn the_filter_decides_like_seccompiler() {
    let setid = u64::from(libc::S_ISUID | libc::S_ISGID);
    let mut values = vec![0u64, 0o755, 0o4755, 0o2755, 0o6000, libc::SIGCHLD as u64, TIOCSTI, TIOCLINUX, 0x5401];
    values.extend([libc::AF_UNIX, libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK].map(|d| d as u64));
    values.extend(CLONE_NS.iter().map(|f| f | libc::SIGCHLD as u64));
    values.push(setid | 0o644);
    for network in [false, true] {
        let ours = &programs(network).unwrap()[0];
        let theirs = reference(network);
        let mut checked = 0;
        for nr in 0..=460u32 {
            for &v in &values {
                for slot in 0..4 {
                    let mut args = [0u64; 6];
                    args[slot] = v;
                    if nr == libc::SYS_clone3 as u32 || nr == libc::SYS_openat2 as u32 {
                        continue;
                    }
                    // Ours hands a refusal to the supervisor, which answers EPERM.
                    let mine = match eval(ours, nr, args) {
                        RET_USER_NOTIF => RET_ERRNO | libc::EPERM as u32,
                        other => other,
                    };
                    assert_eq!(mine, eval(&theirs, nr, args), "nr {nr}, args {args:?}, network {network}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000);
    }
    // And the decisions themselves, on a few cases.
    let ours = &programs(false).unwrap()[0];
    let eperm = RET_USER_NOTIF;
    assert_eq!(eval(ours, libc::SYS_bpf as u32, [0; 6]), eperm);
    assert_eq!(eval(ours, libc::SYS_clone as u32, [libc::CLONE_NEWUSER as u64, 0, 0, 0, 0, 0]), eperm);
    assert_eq!(eval(ours, libc::SYS_clone as u32, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(eval(ours, libc::SYS_openat as u32, [0, 0, 0, 0o4755, 0, 0]), eperm);
    assert_eq!(eval(ours, libc::SYS_socket as u32, [libc::AF_INET as u64, 0, 0, 0, 0, 0]), eperm);
    assert_eq!(eval(ours, libc::SYS_read as u32, [0; 6]), RET_ALLOW);
}

#[test]
fn refusals_are_described_for_denials() {
    let call = |nr: i64, a0: u64, a1: u64, a2: u64| describe(nr, &[a0, a1, a2, 0, 0, 0]);
    assert_eq!(call(libc::SYS_mount, 0, 0, 0), "mount");
    assert_eq!(call(libc::SYS_socket, libc::AF_INET as u64, 1, 0), "socket (AF_INET)");
    assert_eq!(call(libc::SYS_socket, 99, 1, 0), "socket (family 99)");
    assert_eq!(call(libc::SYS_clone, (libc::CLONE_NEWUSER | libc::SIGCHLD) as u64, 0, 0), "clone (namespace flags 0x10000000)");
    assert_eq!(call(libc::SYS_ioctl, 0, TIOCSTI, 0), "ioctl TIOCSTI");
    assert_eq!(call(libc::SYS_fchmodat, 0, 0, 0o104_755), "fchmodat (set-id mode 4755)");
}
