//! Hidden tools for warden's own tests: not in the manifest's `tools`.

use std::io::Write as _;

/// `__spin`: loops forever (the wall clock or fuel must end it).
pub fn spin() -> i32 {
    let mut x: u64 = 0;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

/// `__alloc MIB`: allocates and touches MIB mebibytes, one at a time.
pub fn alloc(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let mib: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1024);
    let mut keep: Vec<Vec<u8>> = Vec::new();
    for i in 0..mib {
        let mut block = vec![0u8; 1 << 20];
        if let Some(b) = block.get_mut(i % (1 << 20)) {
            *b = 1;
        }
        keep.push(block);
    }
    let _ = writeln!(ctx.out, "allocated {} MiB", keep.len());
    0
}

/// `__flood BYTES [err]`: writes BYTES bytes of numbered lines to stdout (or stderr).
pub fn flood(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let total: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1 << 20);
    let to_err = args.get(1).is_some_and(|a| a == "err");
    let mut written: u64 = 0;
    let mut n: u64 = 0;
    let mut err = std::io::stderr();
    while written < total {
        let line = format!("line {n:010}\n");
        let take = (total - written).min(line.len() as u64) as usize;
        let bytes = line.as_bytes().get(..take).unwrap_or_default();
        let ok = if to_err { err.write_all(bytes).is_ok() } else { ctx.out.write_all(bytes).is_ok() };
        if !ok {
            return 1;
        }
        written += take as u64;
        n += 1;
    }
    0
}

/// `__exit CODE`: exits with CODE.
pub fn exit(args: &[String]) -> i32 {
    args.first().and_then(|a| a.parse().ok()).unwrap_or(0)
}
