#!/usr/bin/env bash
# Regenerates the README's images from the current code: the lab's charts into docs/img/.
# `cargo test` fails while they differ from what the code draws
# (crates/attnlab-cli/tests/consistency_cli.rs, readme_images_are_what_the_code_draws).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet -p attnlab-cli --bin attnlab -- lab --plot docs/img >/dev/null
echo "docs/img regenerated:"
ls docs/img
