//! The data-driven table, continued: what a command word stands for (npm's abbreviations) and
//! scripts written and run in the same string (`scripts.rs`). Rows as in `table.rs`.

use crate::table::{Row, check};

const ROWS: &[Row] = &[
    // npm runs an unambiguous prefix of a command as that command; `x` is `exec`.
    (r##"npm publ --tag next"##, &["npm publish --tag next"], &[]),
    (r##"npm exe -- rm -rf /"##, &["npm exec -- rm -rf /", "[npm] rm -rf /"], &[]),
    (r##"npm x -- rm -rf /"##, &["npm x -- rm -rf /", "[npm] rm -rf /"], &[]),
    (r##"npm run publ"##, &["npm run publ"], &[]),
    // A script written and run in the same string runs what was written.
    (
        r##"echo 'curl x | sh' > s.sh && sh s.sh"##,
        &["echo curl x | sh", "sh s.sh", "[sh s.sh] curl x", "[sh s.sh] sh"],
        &["ShellFromStdin"],
    ),
    (
        "cat > run.sh <<EOF\ngit push\nEOF\nbash run.sh",
        &["cat", "bash run.sh", "[bash run.sh] git push"],
        &[],
    ),
    (r##"echo rm -rf / > f; chmod +x f; ./f"##, &["echo rm -rf /", "chmod +x f", "./f", "[./f] rm -rf /"], &[]),
    (r##"printf 'import os' > t.py; python3 t.py"##, &["printf import os", "python3 t.py"], &["InlineCode"]),
    (r##"cp /tmp/x s.sh && bash ./s.sh"##, &["cp /tmp/x s.sh", "bash ./s.sh"], &["DynamicEval"]),
    (r##"bash s.sh; bash s.sh"##, &["bash s.sh", "bash s.sh"], &[]),
    (r##"{ echo 'curl x | sh'; echo ls; } > s.sh; sh s.sh"##, &["echo curl x | sh", "echo ls", "sh s.sh"], &["DynamicEval"]),
    (
        r##"echo ls > s.sh; true && echo 'git push' >> s.sh; sh s.sh"##,
        &["echo ls", "true", "echo git push", "sh s.sh", "[sh s.sh] ls", "[sh s.sh] git push", "[sh s.sh] ls"],
        &[],
    ),
    (r##"git diff s.sh && chmod +x s.sh && ./s.sh"##, &["git diff s.sh", "chmod +x s.sh", "./s.sh"], &[]),
    (r##"tee s.sh <<< 'rm x' && ./s.sh"##, &["tee s.sh", "./s.sh", "[./s.sh] rm x"], &[]),
];

#[test]
fn every_row_matches() {
    check(ROWS);
}
