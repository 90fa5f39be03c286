//! A small getopt: bundled short flags (`-rn`), options with values (`-n 5`, `-n5`), `--`.

use std::collections::HashMap;

/// Parsed command line.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Flags seen, in order (repeats kept).
    pub flags: Vec<char>,
    /// Last value of each option that takes one.
    pub values: HashMap<char, String>,
    /// Every value of each option (for `-e` given twice).
    pub all_values: Vec<(char, String)>,
    /// Operands, in order.
    pub operands: Vec<String>,
}

impl Parsed {
    /// Whether flag `c` was given.
    pub fn has(&self, c: char) -> bool {
        self.flags.contains(&c)
    }
}

/// Parses `args`: `flags` are the accepted flags without values, `valued` those with one;
/// `long` maps long names to short ones.
pub fn parse(args: &[String], flags: &str, valued: &str, long: &[(&str, char)]) -> Result<Parsed, String> {
    let mut p = Parsed::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            p.operands.extend(it.cloned());
            break;
        }
        if let Some(name) = a.strip_prefix("--") {
            let (name, inline) = match name.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (name, None),
            };
            let Some(&(_, c)) = long.iter().find(|(l, _)| *l == name) else {
                return Err(format!("unrecognized option '--{name}'"));
            };
            if valued.contains(c) {
                let v = match inline {
                    Some(v) => v,
                    None => it.next().cloned().ok_or_else(|| format!("option '--{name}' requires an argument"))?,
                };
                p.values.insert(c, v.clone());
                p.all_values.push((c, v));
            } else {
                p.flags.push(c);
            }
            continue;
        }
        if a.len() < 2 || !a.starts_with('-') {
            p.operands.push(a.clone());
            continue;
        }
        let chars: Vec<char> = a.chars().skip(1).collect();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            if valued.contains(c) {
                let rest: String = chars.iter().skip(i + 1).collect();
                let v = if rest.is_empty() {
                    it.next().cloned().ok_or_else(|| format!("option requires an argument -- '{c}'"))?
                } else {
                    rest
                };
                p.values.insert(c, v.clone());
                p.all_values.push((c, v));
                break;
            } else if flags.contains(c) {
                p.flags.push(c);
            } else {
                return Err(format!("invalid option -- '{c}'"));
            }
            i += 1;
        }
    }
    Ok(p)
}
