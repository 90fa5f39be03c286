//! `find` (-name -iname -type -maxdepth -mindepth) and `tree` (-a -L).

use std::io::Write as _;

use crate::fsx;

struct Find {
    names: Vec<(String, bool)>,
    kind: Option<char>,
    max: Option<usize>,
    min: usize,
}

/// `find [PATH...] [-name GLOB] [-iname GLOB] [-type f|d|l] [-maxdepth N] [-mindepth N] [-print]`.
pub fn find(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let mut paths = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.peek() {
        if a.starts_with('-') && a.len() > 1 {
            break;
        }
        paths.push((*a).clone());
        it.next();
    }
    let mut f = Find { names: Vec::new(), kind: None, max: None, min: 0 };
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("missing argument to `{a}'"));
        let r: Result<(), String> = match a.as_str() {
            "-name" | "-iname" => value().map(|v| f.names.push((v, a == "-iname"))),
            "-type" => value().and_then(|v| match v.as_str() {
                "f" | "d" | "l" => {
                    f.kind = v.chars().next();
                    Ok(())
                }
                _ => Err(format!("Unknown argument to -type: {v}")),
            }),
            "-maxdepth" => value().and_then(|v| v.parse().map(|n| f.max = Some(n)).map_err(|_| format!("invalid -maxdepth `{v}'"))),
            "-mindepth" => value().and_then(|v| v.parse().map(|n| f.min = n).map_err(|_| format!("invalid -mindepth `{v}'"))),
            "-print" => Ok(()),
            other => Err(format!("unknown predicate `{other}' (toolbox find supports -name -iname -type -maxdepth -mindepth -print)")),
        };
        if let Err(e) = r {
            ctx.err(e);
            return 1;
        }
    }
    if paths.is_empty() {
        paths.push(String::from("."));
    }
    let mut code = 0;
    for p in paths {
        code = code.max(visit(ctx, &f, &p, 0));
    }
    code
}

fn visit(ctx: &mut crate::Ctx, f: &Find, path: &str, depth: usize) -> i32 {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => {
            fsx::report(ctx, &format!("‘{path}’"), &e, "fs.read");
            return 1;
        }
    };
    let t = meta.file_type();
    let kind = if t.is_dir() { 'd' } else if t.is_symlink() { 'l' } else { 'f' };
    let name = if depth == 0 { path.trim_end_matches('/').rsplit('/').next().unwrap_or(path) } else { path.rsplit('/').next().unwrap_or(path) };
    let name = if name.is_empty() { path } else { name };
    let selected = depth >= f.min
        && f.kind.is_none_or(|k| k == kind)
        && f.names.iter().all(|(g, fold)| glob(g, name, *fold));
    if selected {
        let _ = writeln!(ctx.out, "{path}");
    }
    let mut code = 0;
    if t.is_dir() && f.max.is_none_or(|m| depth < m) {
        match fsx::entries(path, true) {
            Ok(names) => {
                for n in names {
                    code = code.max(visit(ctx, f, &fsx::join(path, &n), depth + 1));
                }
            }
            Err(e) => {
                fsx::report(ctx, &format!("‘{path}’"), &e, "fs.read");
                code = 1;
            }
        }
    }
    code
}

/// Shell glob: `*`, `?`, `[...]` (with `!` or `^` negation and ranges), `\` escapes.
pub fn glob(pattern: &str, name: &str, fold: bool) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = if fold {
        (pattern.to_lowercase().chars().collect(), name.to_lowercase().chars().collect())
    } else {
        (pattern.chars().collect(), name.chars().collect())
    };
    glob_at(&p, &n)
}

fn glob_at(p: &[char], n: &[char]) -> bool {
    match p.split_first() {
        None => n.is_empty(),
        Some(('*', rest)) => (0..=n.len()).any(|i| glob_at(rest, n.get(i..).unwrap_or_default())),
        Some(('?', rest)) => n.split_first().is_some_and(|(_, nr)| glob_at(rest, nr)),
        Some(('[', rest)) => {
            let Some((&c, nr)) = n.split_first() else { return false };
            let (neg, body) = match rest.first() {
                Some('!' | '^') => (true, rest.get(1..).unwrap_or_default()),
                _ => (false, rest),
            };
            let Some(close) = body.iter().skip(1).position(|&x| x == ']').map(|i| i + 1) else {
                return c == '[' && glob_at(rest, nr);
            };
            let set = body.get(..close).unwrap_or_default();
            let mut hit = false;
            let mut i = 0;
            while let Some(&a) = set.get(i) {
                if set.get(i + 1) == Some(&'-') && set.get(i + 2).is_some() {
                    let b = set.get(i + 2).copied().unwrap_or(a);
                    hit |= a <= c && c <= b;
                    i += 3;
                } else {
                    hit |= a == c;
                    i += 1;
                }
            }
            hit != neg && glob_at(body.get(close + 1..).unwrap_or_default(), nr)
        }
        Some(('\\', rest)) if !rest.is_empty() => {
            rest.first() == n.first() && !n.is_empty() && glob_at(rest.get(1..).unwrap_or_default(), n.get(1..).unwrap_or_default())
        }
        Some((c, rest)) => n.first() == Some(c) && glob_at(rest, n.get(1..).unwrap_or_default()),
    }
}

/// `tree [-a] [-L DEPTH] [DIR...]`.
pub fn tree(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let p = match crate::args::parse(args, "ad", "L", &[]) {
        Ok(p) => p,
        Err(e) => {
            ctx.err(e);
            return 2;
        }
    };
    let depth: Option<usize> = p.values.get(&'L').and_then(|v| v.parse().ok());
    let roots = if p.operands.is_empty() { vec![String::from(".")] } else { p.operands.clone() };
    let (mut dirs, mut files) = (0usize, 0usize);
    let mut code = 0;
    for r in &roots {
        let _ = writeln!(ctx.out, "{r}");
        code = code.max(branch(ctx, r, "", p.has('a'), p.has('d'), depth, 1, &mut dirs, &mut files));
    }
    let d = if dirs == 1 { "directory" } else { "directories" };
    if p.has('d') {
        let _ = writeln!(ctx.out, "\n{dirs} {d}");
    } else {
        let f = if files == 1 { "file" } else { "files" };
        let _ = writeln!(ctx.out, "\n{dirs} {d}, {files} {f}");
    }
    code
}

#[allow(clippy::too_many_arguments)]
fn branch(
    ctx: &mut crate::Ctx,
    dir: &str,
    prefix: &str,
    all: bool,
    dirs_only: bool,
    max: Option<usize>,
    level: usize,
    dirs: &mut usize,
    files: &mut usize,
) -> i32 {
    let names = match fsx::entries(dir, all) {
        Ok(n) => n,
        Err(e) => {
            let _ = writeln!(ctx.out, "{prefix}[error opening dir]");
            fsx::mark_denied(&e, "fs.read", std::path::Path::new(dir));
            return 2;
        }
    };
    let entries: Vec<(String, std::io::Result<std::fs::Metadata>)> = names
        .into_iter()
        .map(|n| {
            let m = std::fs::symlink_metadata(fsx::join(dir, &n));
            (n, m)
        })
        .filter(|(_, m)| !dirs_only || m.as_ref().is_ok_and(|m| m.is_dir()))
        .collect();
    let count = entries.len();
    let mut code = 0;
    for (i, (name, meta)) in entries.into_iter().enumerate() {
        let last = i + 1 == count;
        let path = fsx::join(dir, &name);
        let is_dir = meta.as_ref().is_ok_and(|m| m.is_dir());
        let link = meta.as_ref().is_ok_and(|m| m.file_type().is_symlink());
        let target = if link { std::fs::read_link(&path).map(|t| format!(" -> {}", t.display())).unwrap_or_default() } else { String::new() };
        let _ = writeln!(ctx.out, "{prefix}{}{name}{target}", if last { "└── " } else { "├── " });
        if is_dir {
            *dirs += 1;
            if max.is_none_or(|m| level < m) {
                let next = format!("{prefix}{}", if last { "    " } else { "│   " });
                code = code.max(branch(ctx, &path, &next, all, dirs_only, max, level + 1, dirs, files));
            }
        } else {
            *files += 1;
        }
    }
    code
}
