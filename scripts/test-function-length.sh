#!/usr/bin/env bash
# `make test-scripts`: scripts/check-function-length.py refuses a function over the limit and
# only that: braces in strings, comments and char literals, bodiless trait functions and test
# modules do not count.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
check=scripts/check-function-length.py

body() { # N lines of statements
  for _ in $(seq "$1"); do echo '    let _ = "{"; // }'; done
}
# A function of exactly N lines: `fn` line, N-2 statements, closing brace.
fn_of() { echo "fn f$2() {"; body $(($1 - 2)); echo "}"; }

{ fn_of 80 a; echo "trait T { fn g(&self); }"; echo "const C: char = '{';"; } >"$dir/ok.rs"
{ echo '#[cfg(test)]'; echo 'mod tests {'; fn_of 120 t; echo '}'; } >>"$dir/ok.rs"
fn_of 81 b >"$dir/long.rs"
printf 'fn r() -> &%s str {\n    r#"{{{"#\n}\n' "'static" >>"$dir/ok.rs"

python3 "$check" "$dir/ok.rs" >/dev/null || { echo "test-function-length: an 80-line function was refused" >&2; exit 1; }
if python3 "$check" "$dir/long.rs" 2>"$dir/err"; then
  echo "test-function-length: an 81-line function passed" >&2; exit 1
fi
grep -q "fn fb is 81 lines" "$dir/err" || { echo "test-function-length: unexpected message: $(cat "$dir/err")" >&2; exit 1; }
echo "test-function-length: ok"
