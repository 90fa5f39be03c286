//! The write tier's helpers: `write PATH` (stdin to a file) and `edit PATH OLD NEW`.

use std::io::{Read as _, Write as _};

use crate::fsx;

/// `write PATH`: replaces PATH's contents with stdin (creating it).
pub fn write(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let [path] = args else {
        ctx.err("usage: write PATH  (the new contents on stdin)");
        return 2;
    };
    let mut data = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut data) {
        ctx.err(format_args!("reading stdin: {}", fsx::describe(&e)));
        return 1;
    }
    match fsx::regular_or_missing(path).and_then(|()| std::fs::write(path, &data)) {
        Ok(()) => {
            let _ = writeln!(ctx.out, "wrote {} bytes to {path}", data.len());
            0
        }
        Err(e) => {
            fsx::report(ctx, path, &e, "fs.write");
            1
        }
    }
}

/// `edit PATH OLD NEW`: replaces the one occurrence of OLD in PATH with NEW.
pub fn edit(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let [path, old, new] = args else {
        ctx.err("usage: edit PATH OLD NEW");
        return 2;
    };
    if old.is_empty() {
        ctx.err("the snippet to replace is empty");
        return 2;
    }
    let text = match fsx::regular_or_missing(path).and_then(|()| std::fs::read_to_string(path)) {
        Ok(t) => t,
        Err(e) => {
            fsx::report(ctx, path, &e, "fs.read");
            return 1;
        }
    };
    let found = text.matches(old.as_str()).count();
    if found != 1 {
        if found == 0 {
            ctx.err(format_args!("{path}: snippet not found"));
        } else {
            ctx.err(format_args!("{path}: snippet found {found} times; give a longer snippet that occurs once"));
        }
        return 1;
    }
    let updated = text.replacen(old.as_str(), new, 1);
    match std::fs::write(path, updated) {
        Ok(()) => {
            let line = text.find(old.as_str()).map_or(1, |i| text.get(..i).unwrap_or("").matches('\n').count() + 1);
            let _ = writeln!(ctx.out, "edited {path}:{line}");
            0
        }
        Err(e) => {
            fsx::report(ctx, path, &e, "fs.write");
            1
        }
    }
}
