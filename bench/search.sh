#!/usr/bin/env bash
# Grep and Glob as whole processes against ripgrep, on a large real tree and on a generated one.
#
#   bench/search.sh                 # both trees
#   RUNS=5 bench/search.sh          # fewer timed runs per case (default 10)
#   TREES=gen bench/search.sh       # only the generated tree (or TREES=registry)
#
# Each case runs `target/release/toolbelt call Grep|Glob '{...}'` and the equivalent `rg`
# command in the tree's directory, first once to check both give the same results (the
# output lines, compared as sorted sets: Glob lists newest first, rg in walk order), then
# timed with hyperfine (or a plain loop when hyperfine is missing). The output budget is
# raised so toolbelt prints everything, as rg does; both write to /dev/null while timed.
# Trees: the crate sources under ~/.cargo/registry/src (REGISTRY_TREE to change it), and
# a generated tree of 20,000 files (bench/gen-tree.py; FILES to change the count).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin="$repo/target/release/toolbelt"
runs=${RUNS:-10}
trees=${TREES:-"registry gen"}

command -v rg >/dev/null || { echo "rg is required (Debian: apt-get install -y ripgrep)" >&2; exit 1; }
if [[ ! -x $bin || -n $(find crates -name '*.rs' -newer "$bin" -print -quit) ]]; then
    cargo build --release -p toolbelt >&2
fi

budget=(--output-budget 1000000000)
results=$(mktemp)
trap 'rm -f "$results" "$results".*' EXIT

# time_cmd LABEL CMD... -> mean seconds (also appended to $results.json when hyperfine runs)
time_cmd() {
    local label=$1
    shift
    if command -v hyperfine >/dev/null; then
        hyperfine -N --warmup 2 --runs "$runs" --output null --export-json "$results.one" "$(printf '%q ' "$@")" \
            >/dev/null 2>&1
        python3 - "$results.one" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("%.4f %.4f" % (r["mean"], r["stddev"] or 0))
EOF
    else
        "$@" </dev/null >/dev/null 2>&1 || true
        python3 - "$runs" "$@" <<'EOF'
import statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
samples = []
for _ in range(runs):
    t = time.perf_counter()
    # stdin is this script: rg would search it instead of the tree.
    subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples.append(time.perf_counter() - t)
print(f"{statistics.mean(samples):.4f} {statistics.pstdev(samples):.4f}")
EOF
    fi
}

# case NAME TOOL JSON -- RG-ARGS...
case_() {
    local name=$1 tool=$2 json=$3
    shift 4
    local tb=("$bin" --cwd . "${budget[@]}" call "$tool" "$json")
    local rgc=(rg --no-config --no-require-git "$@")
    # Same results? (toolbelt adds nothing when the output is whole; drop blank lines.)
    "${tb[@]}" </dev/null | grep -v '^$' | LC_ALL=C sort >"$results.tb" || true
    # Grep drops the `\r` of CRLF line endings; rg prints it.
    "${rgc[@]}" </dev/null | sed 's/\r$//' | LC_ALL=C sort >"$results.rg" || true
    local lines same
    lines=$(wc -l <"$results.rg")
    if [[ $name == *"first 100"* ]]; then
        same="n/a (a page of $(grep -vc '^\[' "$results.tb") newest)"
    elif cmp -s "$results.tb" "$results.rg"; then
        same="yes"
    else
        same="NO ($(wc -l <"$results.tb") vs $lines lines)"
    fi
    # rg printing in the order toolbelt gives (it then walks on one thread).
    local order=(--sort path)
    [[ $tool == Glob ]] && order=(--sortr modified)
    local rgo=(rg --no-config --no-require-git "${order[@]}" "$@")
    read -r tb_mean tb_sd < <(time_cmd toolbelt "${tb[@]}")
    read -r rg_mean rg_sd < <(time_cmd rg "${rgc[@]}")
    read -r rgo_mean rgo_sd < <(time_cmd rg-ordered "${rgo[@]}")
    python3 - "$name" "$tb_mean" "$tb_sd" "$rg_mean" "$rg_sd" "$rgo_mean" "$lines" "$same" <<'EOF'
import sys
name, tb, tbsd, rg, rgsd, rgo, lines, same = sys.argv[1:]
tb, tbsd, rg, rgsd, rgo = map(float, (tb, tbsd, rg, rgsd, rgo))
print(f"  {name:<34} {tb*1000:7.1f} ±{tbsd*1000:4.1f} ms {rg*1000:7.1f} ±{rgsd*1000:4.1f} ms {tb/rg:5.2f}x"
      f" {rgo*1000:7.1f} ms {tb/rgo:5.2f}x {int(lines):>8,}  {same}")
EOF
}

header() {
    printf '\n%s\n' "$1"
    printf '  %-34s %17s %17s %6s %10s %6s %8s  %s\n' case toolbelt rg ratio "rg sorted" ratio lines \
        "same results"
}

for tree in $trees; do
    case $tree in
    registry)
        dir=${REGISTRY_TREE:-$HOME/.cargo/registry/src}
        [[ -d $dir ]] || { echo "no $dir; skipping the registry tree" >&2; continue; }
        header "Tree: $dir ($(rg --files "$dir" | wc -l) files searched, $(du -sh "$dir" | cut -f1))"
        cd "$dir"
        case_ "Grep files_with_matches 'unsafe'" Grep '{"pattern":"unsafe"}' -- -l unsafe
        case_ "Grep content 'TODO'" Grep '{"pattern":"TODO","output_mode":"content"}' -- -n TODO
        case_ "Grep content regex" Grep '{"pattern":"fn \\w+_mut\\(","output_mode":"content"}' -- -n 'fn \w+_mut\('
        case_ "Grep content -i -C2 'deprecated'" Grep '{"pattern":"deprecated","-i":true,"-C":2,"output_mode":"content"}' \
            -- -n -i -C2 deprecated
        case_ "Grep count 'impl'" Grep '{"pattern":"impl","output_mode":"count"}' -- -c impl
        case_ "Grep files type=rust 'Arc<'" Grep '{"pattern":"Arc<","type":"rust"}' -- -l -t rust 'Arc<'
        case_ "Glob '**/*.rs' (all)" Glob '{"pattern":"**/*.rs","limit":0}' -- --files -g '**/*.rs'
        case_ "Glob '**/*.rs' (first 100)" Glob '{"pattern":"**/*.rs"}' -- --files -g '**/*.rs'
        cd "$repo"
        ;;
    gen)
        dir=${GEN_TREE:-/tmp/toolbelt-bench-tree}
        python3 bench/gen-tree.py "$dir" "${FILES:-20000}"
        header "Tree: generated, $dir ($(rg --files "$dir" | wc -l) files searched, $(du -sh "$dir" | cut -f1))"
        cd "$dir"
        case_ "Grep files_with_matches 'searcher'" Grep '{"pattern":"searcher"}' -- -l searcher
        case_ "Grep content 'FIXME'" Grep '{"pattern":"FIXME","output_mode":"content"}' -- -n FIXME
        case_ "Grep content 'matcher \\w+ sink'" Grep '{"pattern":"matcher \\w+ sink","output_mode":"content"}' \
            -- -n 'matcher \w+ sink'
        case_ "Grep count 'walk'" Grep '{"pattern":"walk","output_mode":"count"}' -- -c walk
        case_ "Glob '**/*.rs' (all)" Glob '{"pattern":"**/*.rs","limit":0}' -- --files -g '**/*.rs'
        case_ "Glob '*' (first 100)" Glob '{"pattern":"*"}' -- --files
        cd "$repo"
        ;;
    esac
done
cat <<'EOF'

Times are whole processes (start-up included), mean ± standard deviation over the runs.
"rg" is plain parallel rg; "rg sorted" is rg printing in the order toolbelt's output has
(`--sort path` for Grep, `--sortr modified` for Glob; rg then walks on one thread).
"same results" compares the complete outputs as sorted line sets (with rg's `\r` of CRLF
lines dropped, as Grep drops it). The "(first 100)" Glob rows show what a model gets by
default: the 100 newest of all matches (every file is still walked and stat'ed to find
them), against rg listing all matches.
EOF
