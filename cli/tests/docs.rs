//! The examples of `docs/cli.md` run and print what the page says (all but `serve` and
//! `trial`, whose answers depend on time and ports). A `recuo run` example shows what a
//! terminal shows: the command's output and recuo's own lines on stderr, in one stream.

mod support;

use support::{recuo, recuo_merged};

/// Splits a command line on spaces, keeping single-quoted parts whole.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// `(command, expected output)` for every `$ recuo …` line in the page's code blocks.
fn examples(page: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut in_block = false;
    let mut current: Option<(String, String)> = None;
    for line in page.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            found.extend(current.take());
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            found.extend(current.take());
            current = Some((cmd.to_string(), String::new()));
        } else if let Some((_, out)) = &mut current {
            out.push_str(line);
            out.push('\n');
        }
    }
    found
}

#[test]
fn the_pages_examples_print_what_it_says() {
    let path = format!("{}/../docs/cli.md", env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(&path).expect("docs/cli.md");
    let mut checked = 0;
    for (cmd, expected) in examples(&page) {
        let w = words(&cmd);
        assert_eq!(w.first().map(String::as_str), Some("recuo"), "{cmd}");
        if matches!(w.get(1).map(String::as_str), Some("serve" | "trial")) {
            continue;
        }
        let args: Vec<&str> = w[1..].iter().map(String::as_str).collect();
        let r = if args[0] == "run" {
            recuo_merged(&args)
        } else {
            recuo(&args)
        };
        // An example that exits with another status than 0 says so last: `[exit 75]`.
        let (expected, code) = match expected.trim_end().rsplit_once('\n') {
            Some((before, last)) if last.starts_with("[exit ") => (
                format!("{before}\n"),
                last.trim_start_matches("[exit ")
                    .trim_end_matches(']')
                    .parse()
                    .expect("an exit status"),
            ),
            _ => (expected, 0),
        };
        assert_eq!(r.code, code, "{cmd}: {r:?}");
        assert_eq!(r.stdout, expected, "docs/cli.md: {cmd}");
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} examples checked");
}

#[test]
fn words_keep_quoted_parts() {
    assert_eq!(
        words("recuo classify 429 --header 'Retry-After: 30'"),
        ["recuo", "classify", "429", "--header", "Retry-After: 30"]
    );
}
