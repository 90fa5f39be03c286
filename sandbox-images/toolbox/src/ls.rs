//! `ls` (-l -a -1 -R) and `stat`.

use std::fs::Metadata;
use std::io::Write as _;

use crate::fsx;

struct Opts {
    long: bool,
    all: bool,
    recursive: bool,
}

/// `ls [-l] [-a] [-1] [-R] [PATH...]`: one name per line (output is never a terminal).
pub fn run(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let p = match crate::args::parse(args, "la1RA", "", &[("all", 'a'), ("recursive", 'R')]) {
        Ok(p) => p,
        Err(e) => {
            ctx.err(e);
            return 2;
        }
    };
    let o = Opts { long: p.has('l'), all: p.has('a') || p.has('A'), recursive: p.has('R') };
    let operands = if p.operands.is_empty() { vec![String::from(".")] } else { p.operands.clone() };
    let mut code = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for op in &operands {
        match std::fs::metadata(op).or_else(|_| std::fs::symlink_metadata(op)) {
            Ok(m) if m.is_dir() => dirs.push(op.clone()),
            Ok(m) => files.push((op.clone(), m)),
            Err(e) => {
                ctx.err(format_args!("cannot access '{op}': {}", fsx::describe(&e)));
                fsx::mark_denied(&e, "fs.read", std::path::Path::new(op));
                code = 2;
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    dirs.sort();
    for (name, m) in &files {
        line(ctx, &o, name, name, m);
    }
    let headers = operands.len() > 1 || o.recursive;
    let mut first = files.is_empty();
    for d in dirs {
        if list_dir(ctx, &o, &d, headers, &mut first) != 0 {
            code = code.max(1);
        }
    }
    code
}

fn list_dir(ctx: &mut crate::Ctx, o: &Opts, dir: &str, header: bool, first: &mut bool) -> i32 {
    if header {
        if !*first {
            let _ = writeln!(ctx.out);
        }
        let _ = writeln!(ctx.out, "{dir}:");
    }
    *first = false;
    let names = match fsx::entries(dir, o.all) {
        Ok(n) => n,
        Err(e) => {
            ctx.err(format_args!("cannot open directory '{dir}': {}", fsx::describe(&e)));
            fsx::mark_denied(&e, "fs.read", std::path::Path::new(dir));
            return 2;
        }
    };
    let mut shown: Vec<String> = Vec::new();
    if o.all {
        shown.push(String::from("."));
        shown.push(String::from(".."));
    }
    shown.extend(names);
    let mut subdirs = Vec::new();
    for name in &shown {
        let path = fsx::join(dir, name);
        match std::fs::symlink_metadata(&path) {
            Ok(m) => {
                if o.long {
                    line(ctx, o, name, &path, &m);
                } else {
                    let _ = writeln!(ctx.out, "{name}");
                }
                if m.is_dir() && name != "." && name != ".." {
                    subdirs.push(path);
                }
            }
            Err(_) => {
                let _ = writeln!(ctx.out, "{name}");
            }
        }
    }
    let mut code = 0;
    if o.recursive {
        for s in subdirs {
            code = code.max(list_dir(ctx, o, &s, true, first));
        }
    }
    code
}

fn kind(m: &Metadata) -> char {
    let t = m.file_type();
    if t.is_dir() {
        'd'
    } else if t.is_symlink() {
        'l'
    } else if t.is_file() {
        '-'
    } else {
        '?'
    }
}

/// `-l`: type, size, modification time (UTC) and name. WASI shows no owner or mode bits.
fn line(ctx: &mut crate::Ctx, o: &Opts, name: &str, path: &str, m: &Metadata) {
    if !o.long {
        let _ = writeln!(ctx.out, "{name}");
        return;
    }
    let time = fsx::time(m.modified());
    let short = time.get(..16).unwrap_or(&time);
    let target = if m.file_type().is_symlink() {
        std::fs::read_link(path).map(|t| format!(" -> {}", t.display())).unwrap_or_default()
    } else {
        String::new()
    };
    let _ = writeln!(ctx.out, "{} {:>10} {short} {name}{target}", kind(m), m.len());
}

/// `stat PATH...`: size, type and times.
pub fn stat(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    if args.is_empty() {
        ctx.err("missing operand");
        return 1;
    }
    let mut code = 0;
    for path in args {
        match std::fs::symlink_metadata(path) {
            Ok(m) => {
                let t = m.file_type();
                let what = if t.is_dir() {
                    "directory"
                } else if t.is_symlink() {
                    "symbolic link"
                } else if t.is_file() {
                    if m.len() == 0 { "regular empty file" } else { "regular file" }
                } else {
                    "other"
                };
                let _ = writeln!(ctx.out, "  File: {path}");
                let _ = writeln!(ctx.out, "  Size: {:<15} {what}", m.len());
                let _ = writeln!(ctx.out, "Access: {} UTC", fsx::time(m.accessed()));
                let _ = writeln!(ctx.out, "Modify: {} UTC", fsx::time(m.modified()));
                let _ = writeln!(ctx.out, " Birth: {}", fsx::time(m.created()));
            }
            Err(e) => {
                ctx.err(format_args!("cannot statx '{path}': {}", fsx::describe(&e)));
                fsx::mark_denied(&e, "fs.read", std::path::Path::new(path));
                code = 1;
            }
        }
    }
    code
}
