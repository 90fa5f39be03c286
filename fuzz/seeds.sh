#!/bin/sh
# Rebuilds the committed seed corpora under fuzz/corpus/seeds/ from the repository's own
# inputs: policy files for policy_parse, command strings for shell_analyse. Run from anywhere.
# policy_decide has no seeds: its input is structured (`arbitrary`) and starts from nothing.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
seeds="$root/fuzz/corpus/seeds"

rm -rf "$seeds/policy_parse" "$seeds/shell_analyse"
mkdir -p "$seeds/policy_parse" "$seeds/shell_analyse"

# Every policy file: the shipped ones and the test fixtures (valid and broken). Files over
# 4000 bytes (the runs use -max_len=4096) are also cut at blank lines into pieces under 4000
# bytes, so that every statement of the shipped policies is in some seed whole.
find "$root/policies" "$root/crates/policy/tests/fixtures" -name '*.policy' -type f |
    sort | while read -r f; do
        name=$(printf '%s' "${f#"$root"/}" | tr '/' '_')
        if [ "$(wc -c < "$f")" -le 4000 ]; then
            cp "$f" "$seeds/policy_parse/$name"
            continue
        fi
        awk -v out="$seeds/policy_parse/$name" '
            function flush() { if (buf != "") { n++; printf "%s", buf > (out "." n); close(out "." n) } buf = "" }
            { para = para $0 "\n" }
            /^[ \t]*$/ { if (length(buf) + length(para) > 4000) flush(); buf = buf para; para = "" }
            END { if (length(buf) + length(para) > 4000) flush(); buf = buf para; flush() }
        ' "$f"
    done

# One file per command of tests/corpus/commands.txt: everything after the first ` | `,
# verbatim, without a trailing newline.
n=0
grep -v '^#' "$root/tests/corpus/commands.txt" | grep ' | ' | while IFS= read -r line; do
    n=$((n + 1))
    printf '%s' "${line#* | }" > "$seeds/shell_analyse/$(printf 'cmd%04d' "$n")"
done

echo "policy_parse: $(ls "$seeds/policy_parse" | wc -l) seeds"
echo "shell_analyse: $(ls "$seeds/shell_analyse" | wc -l) seeds"
