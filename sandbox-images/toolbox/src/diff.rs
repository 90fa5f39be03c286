//! `diff [-u] OLD NEW`: a unified diff (Myers' algorithm, 3 lines of context).

use std::io::Write as _;

use crate::fsx;

/// Edit distance beyond which the diff gives up on a minimal script and replaces the file
/// whole (the trace would grow quadratically).
const MAX_D: usize = 4096;
const CONTEXT: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Same(usize, usize),
    Del(usize),
    Ins(usize),
}

/// `diff [-u] OLD NEW`: exit 0 when equal, 1 when they differ, 2 on trouble.
pub fn run(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let p = match crate::args::parse(args, "uN", "U", &[("unified", 'u')]) {
        Ok(p) => p,
        Err(e) => {
            ctx.err(e);
            return 2;
        }
    };
    let [a, b] = p.operands.as_slice() else {
        ctx.err("usage: diff [-u] OLD NEW");
        return 2;
    };
    let (Some(da), Some(db)) = (load(ctx, a), load(ctx, b)) else { return 2 };
    if da == db {
        return 0;
    }
    let la: Vec<&[u8]> = da.split_inclusive(|&c| c == b'\n').collect();
    let lb: Vec<&[u8]> = db.split_inclusive(|&c| c == b'\n').collect();
    let ops = myers(&la, &lb).unwrap_or_else(|| {
        (0..la.len()).map(Op::Del).chain((0..lb.len()).map(Op::Ins)).collect()
    });
    let stamp = |p: &str| {
        if p == "-" { String::new() } else { format!("\t{}.000000000 +0000", fsx::time(std::fs::metadata(p).and_then(|m| m.modified()))) }
    };
    let _ = writeln!(ctx.out, "--- {a}{}", stamp(a));
    let _ = writeln!(ctx.out, "+++ {b}{}", stamp(b));
    hunks(ctx, &ops, &la, &lb);
    1
}

fn load(ctx: &crate::Ctx, path: &str) -> Option<Vec<u8>> {
    match fsx::read_input(path) {
        Ok(d) => Some(d),
        Err(e) => {
            fsx::report(ctx, path, &e, "fs.read");
            None
        }
    }
}

/// The shortest edit script, or `None` past [`MAX_D`].
fn myers(a: &[&[u8]], b: &[&[u8]]) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let off = max as isize;
    let mut v = vec![0isize; 2 * max + 2];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let at = |v: &[isize], k: isize| v.get((k + off) as usize).copied().unwrap_or(0);
    for d in 0..=(max.min(MAX_D) as isize) {
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let mut x = if k == -d || (k != d && at(&v, k - 1) < at(&v, k + 1)) { at(&v, k + 1) } else { at(&v, k - 1) + 1 };
            let mut y = x - k;
            while x < n && y < m && a.get(x as usize) == b.get(y as usize) {
                x += 1;
                y += 1;
            }
            if let Some(slot) = v.get_mut((k + off) as usize) {
                *slot = x;
            }
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m, off));
            }
            k += 2;
        }
    }
    None
}

fn backtrack(trace: &[Vec<isize>], n: isize, m: isize, off: isize) -> Vec<Op> {
    let (mut x, mut y) = (n, m);
    let mut ops = Vec::new();
    for (d, v) in trace.iter().enumerate().rev() {
        let d = d as isize;
        let at = |k: isize| v.get((k + off) as usize).copied().unwrap_or(0);
        let k = x - y;
        let pk = if k == -d || (k != d && at(k - 1) < at(k + 1)) { k + 1 } else { k - 1 };
        let px = at(pk);
        let py = px - pk;
        while x > px && y > py {
            ops.push(Op::Same((x - 1) as usize, (y - 1) as usize));
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            if x == px {
                ops.push(Op::Ins((y - 1) as usize));
            } else {
                ops.push(Op::Del((x - 1) as usize));
            }
        }
        x = px;
        y = py;
    }
    ops.reverse();
    ops
}

fn hunks(ctx: &mut crate::Ctx, ops: &[Op], a: &[&[u8]], b: &[&[u8]]) {
    let changes: Vec<usize> = ops.iter().enumerate().filter(|(_, o)| !matches!(o, Op::Same(..))).map(|(i, _)| i).collect();
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for c in changes {
        match groups.last_mut() {
            Some((_, last)) if c - *last <= 2 * CONTEXT + 1 => *last = c,
            _ => groups.push((c, c)),
        }
    }
    // Lines of each file consumed before each op.
    let mut before = Vec::with_capacity(ops.len() + 1);
    let (mut oa, mut ob) = (0usize, 0usize);
    for o in ops {
        before.push((oa, ob));
        match o {
            Op::Same(..) => {
                oa += 1;
                ob += 1;
            }
            Op::Del(_) => oa += 1,
            Op::Ins(_) => ob += 1,
        }
    }
    before.push((oa, ob));
    for (first, last) in groups {
        let start = first.saturating_sub(CONTEXT);
        let end = (last + CONTEXT + 1).min(ops.len());
        let (sa, sb) = before.get(start).copied().unwrap_or((0, 0));
        let (ea, eb) = before.get(end).copied().unwrap_or((oa, ob));
        let range = |s: usize, c: usize| match c {
            0 => format!("{s},0"),
            1 => format!("{}", s + 1),
            _ => format!("{},{c}", s + 1),
        };
        let _ = writeln!(ctx.out, "@@ -{} +{} @@", range(sa, ea - sa), range(sb, eb - sb));
        for o in ops.get(start..end).unwrap_or_default() {
            let (mark, line) = match *o {
                Op::Same(i, _) => (' ', a.get(i)),
                Op::Del(i) => ('-', a.get(i)),
                Op::Ins(j) => ('+', b.get(j)),
            };
            let line = line.copied().unwrap_or_default();
            let _ = write!(ctx.out, "{mark}");
            let _ = ctx.out.write_all(line);
            if !line.ends_with(b"\n") {
                let _ = writeln!(ctx.out, "\n\\ No newline at end of file");
            }
        }
    }
}
