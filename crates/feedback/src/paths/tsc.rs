//! TypeScript's plain form `src/a.ts(3,5): error TS2322: ...`. (The pretty form
//! `src/a.ts:3:5 - error TS2322` is the colon convention: see `colon`.)

use super::loc::{self, Loc};

pub(crate) fn scan<'a>(line: &'a str, out: &mut Vec<Loc<'a>>) {
    let trimmed = line.trim_start();
    let Some((path, rest)) = trimmed.split_once('(') else {
        return;
    };
    let Some((inside, after)) = rest.split_once(')') else {
        return;
    };
    if !loc::has_extension(path) || path.contains(char::is_whitespace) || !after.starts_with(':') {
        return;
    }
    if let Some((l, c)) = inside.split_once(',')
        && let (Some(l), Some(c)) = (loc::number(l), loc::number(c))
    {
        out.push(Loc::new(path, Some(l), Some(c)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::loc::Loc;

    fn scan(line: &str) -> Vec<Loc<'_>> {
        super::super::loc::collect(super::scan, line)
    }

    #[test]
    fn recorded_tsc_lines() {
        assert_eq!(
            scan("src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'."),
            [Loc::new("src/a.ts", Some(3), Some(5))]
        );
        assert_eq!(scan("a.tsx(12,1): warning TS6133: x"), [Loc::new("a.tsx", Some(12), Some(1))]);
    }

    #[test]
    fn non_locations_are_ignored() {
        for line in
            ["f(3,5): x", "call f (3,5): x", "a.ts(3,0): error", "a.ts(3): error", "a.ts(3,5) error", "(3,5): x"]
        {
            assert_eq!(scan(line), [], "{line}");
        }
    }
}
