//! `cat`, `head`, `tail`, `wc`, `sort`, `uniq`, `echo`, `pwd`.

use std::io::Write as _;

use crate::fsx;

fn inputs(operands: &[String]) -> Vec<String> {
    if operands.is_empty() { vec![String::from("-")] } else { operands.to_vec() }
}

fn read(ctx: &crate::Ctx, path: &str) -> Option<Vec<u8>> {
    match fsx::read_input(path) {
        Ok(d) => Some(d),
        Err(e) => {
            fsx::report(ctx, path, &e, "fs.read");
            None
        }
    }
}

/// `cat [FILE...]`.
pub fn cat(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let mut code = 0;
    for f in inputs(args) {
        match read(ctx, &f) {
            Some(d) => {
                let _ = ctx.out.write_all(&d);
            }
            None => code = 1,
        }
    }
    code
}

/// `head`/`tail [-n N | -N] [FILE...]`; `tail -n +N` starts at line N.
pub fn head_tail(ctx: &mut crate::Ctx, args: &[String], head: bool) -> i32 {
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix('-') {
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => format!("-n{n}"),
            _ => a.clone(),
        })
        .collect();
    let p = match crate::args::parse(&args, "qv", "n", &[("lines", 'n')]) {
        Ok(p) => p,
        Err(e) => {
            ctx.err(e);
            return 1;
        }
    };
    let spec = p.values.get(&'n').cloned().unwrap_or_else(|| String::from("10"));
    let from_start = !head && spec.starts_with('+');
    let Ok(n) = spec.trim_start_matches('+').parse::<usize>() else {
        ctx.err(format_args!("invalid number of lines: '{spec}'"));
        return 1;
    };
    let files = inputs(&p.operands);
    let headers = files.len() > 1;
    let mut code = 0;
    for (i, f) in files.iter().enumerate() {
        let Some(data) = read(ctx, f) else {
            code = 1;
            continue;
        };
        if headers {
            let name = if f == "-" { "standard input" } else { f };
            let _ = writeln!(ctx.out, "{}==> {name} <==", if i > 0 { "\n" } else { "" });
        }
        let lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
        let pick: &[&[u8]] = if head {
            lines.get(..n.min(lines.len())).unwrap_or_default()
        } else if from_start {
            lines.get(n.saturating_sub(1).min(lines.len())..).unwrap_or_default()
        } else {
            lines.get(lines.len().saturating_sub(n)..).unwrap_or_default()
        };
        for l in pick {
            let _ = ctx.out.write_all(l);
        }
    }
    code
}

/// `wc [-l] [-w] [-c] [FILE...]`.
pub fn wc(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let p = match crate::args::parse(args, "lwcm", "", &[("lines", 'l'), ("words", 'w'), ("bytes", 'c')]) {
        Ok(p) => p,
        Err(e) => {
            ctx.err(e);
            return 1;
        }
    };
    let none = !(p.has('l') || p.has('w') || p.has('c') || p.has('m'));
    let show = [none || p.has('l'), none || p.has('w'), none || p.has('c') || p.has('m')];
    let files = inputs(&p.operands);
    let mut rows: Vec<([u64; 3], String)> = Vec::new();
    let mut total = [0u64; 3];
    let mut code = 0;
    for f in &files {
        let Some(d) = read(ctx, f) else {
            code = 1;
            continue;
        };
        let lines = d.iter().filter(|&&b| b == b'\n').count() as u64;
        let words = d.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()).count() as u64;
        let counts = [lines, words, d.len() as u64];
        for (t, c) in total.iter_mut().zip(counts) {
            *t += c;
        }
        rows.push((counts, if f == "-" { String::new() } else { f.clone() }));
    }
    if files.len() > 1 {
        rows.push((total, String::from("total")));
    }
    let columns = show.iter().filter(|s| **s).count();
    let width = if columns == 1 && rows.len() == 1 {
        0
    } else {
        let max = rows.iter().flat_map(|r| r.0).max().unwrap_or(0);
        let w = max.to_string().len();
        if files.iter().any(|f| f == "-") { w.max(7) } else { w }
    };
    for (counts, name) in rows {
        let nums: Vec<String> = counts
            .iter()
            .zip(show)
            .filter(|(_, s)| *s)
            .map(|(c, _)| format!("{c:>width$}"))
            .collect();
        let sep = if name.is_empty() { "" } else { " " };
        let _ = writeln!(ctx.out, "{}{sep}{name}", nums.join(" "));
    }
    code
}

/// The leading number of a line, as `sort -n` reads it (none: 0).
fn numeric(line: &[u8]) -> f64 {
    let s = String::from_utf8_lossy(line);
    let s = s.trim_start();
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && c == '-')))
        .map_or(s.len(), |(i, _)| i);
    s.get(..end).and_then(|n| n.parse().ok()).unwrap_or(0.0)
}

/// `sort [-r] [-n] [-u] [FILE...]`.
pub fn sort(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let p = match crate::args::parse(args, "rnu", "", &[("reverse", 'r'), ("numeric-sort", 'n'), ("unique", 'u')]) {
        Ok(p) => p,
        Err(e) => {
            ctx.err(e);
            return 2;
        }
    };
    let mut data = Vec::new();
    let mut code = 0;
    for f in inputs(&p.operands) {
        match read(ctx, &f) {
            Some(mut d) => {
                if !d.is_empty() && !d.ends_with(b"\n") {
                    d.push(b'\n');
                }
                data.extend(d);
            }
            None => code = 2,
        }
    }
    let mut lines = fsx::lines(&data);
    let num = p.has('n');
    let key = |a: &&[u8], b: &&[u8]| {
        if num { numeric(a).total_cmp(&numeric(b)) } else { a.cmp(b) }
    };
    lines.sort_by(|a, b| key(a, b).then_with(|| if p.has('u') { std::cmp::Ordering::Equal } else { a.cmp(b) }));
    if p.has('u') {
        lines.dedup_by(|a, b| key(&&**a, &&**b).is_eq());
    }
    if p.has('r') {
        lines.reverse();
    }
    for l in lines {
        let _ = ctx.out.write_all(l);
        let _ = ctx.out.write_all(b"\n");
    }
    code
}

/// `uniq [-c] [INPUT]`: drops adjacent repeats.
pub fn uniq(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let p = match crate::args::parse(args, "cdu", "", &[("count", 'c')]) {
        Ok(p) => p,
        Err(e) => {
            ctx.err(e);
            return 1;
        }
    };
    let f = p.operands.first().cloned().unwrap_or_else(|| String::from("-"));
    let Some(data) = read(ctx, &f) else { return 1 };
    let lines = fsx::lines(&data);
    let mut groups: Vec<(&[u8], usize)> = Vec::new();
    for l in lines {
        match groups.last_mut() {
            Some((prev, n)) if *prev == l => *n += 1,
            _ => groups.push((l, 1)),
        }
    }
    for (l, n) in groups {
        if (p.has('d') && n < 2) || (p.has('u') && n > 1) {
            continue;
        }
        if p.has('c') {
            let _ = write!(ctx.out, "{n:>7} ");
        }
        let _ = ctx.out.write_all(l);
        let _ = ctx.out.write_all(b"\n");
    }
    0
}

/// `echo [-n] ARGS...`.
pub fn echo(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let (newline, rest) = match args.first() {
        Some(a) if a == "-n" => (false, args.get(1..).unwrap_or_default()),
        _ => (true, args),
    };
    let _ = write!(ctx.out, "{}", rest.join(" "));
    if newline {
        let _ = writeln!(ctx.out);
    }
    0
}

/// `pwd`.
pub fn pwd(ctx: &mut crate::Ctx) -> i32 {
    match std::env::current_dir() {
        Ok(d) => {
            let _ = writeln!(ctx.out, "{}", d.display());
            0
        }
        Err(e) => {
            ctx.err(fsx::describe(&e));
            1
        }
    }
}
