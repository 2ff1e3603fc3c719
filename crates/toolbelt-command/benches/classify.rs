//! How long classifying a command takes (parsing with tree-sitter, resolving wrappers and
//! variables, judging each program), for typical commands an agent runs. A plain program,
//! run by hand: `cargo bench -p toolbelt-command --bench classify`.
#![allow(missing_docs)]

use std::time::Instant;

use toolbelt_command::classify;

fn main() {
    let commands = [
        "git status",
        "ls -la && cat Cargo.toml | grep -n version",
        "rg -n 'fn main' --type rust src | head -n 20",
        "find . -name '*.rs' -not -path './target/*' | xargs wc -l",
    ];
    println!("{:>10}  command", "per call");
    for command in commands {
        classify(command);
        let runs = 10_000;
        let start = Instant::now();
        for _ in 0..runs {
            std::hint::black_box(classify(std::hint::black_box(command)));
        }
        println!("{:>7.2} µs  {command}", start.elapsed().as_secs_f64() * 1e6 / f64::from(runs));
    }
}
