//! `--help` reads well; bad arguments give one line and exit code 2.

mod support;

use support::recuo;

const SUBCOMMANDS: [&str; 7] = [
    "plan", "delay", "classify", "serve", "trial", "simulate", "run",
];

#[test]
fn every_help_exits_0_and_names_the_flags() {
    let r = recuo(&["--help"]);
    assert_eq!(r.code, 0);
    for sub in SUBCOMMANDS {
        assert!(r.stdout.contains(sub), "recuo --help lists {sub}");
    }
    let flags: [(&str, &[&str]); 7] = [
        (
            "plan",
            &[
                "--requests",
                "--allowance",
                "--target",
                "--latency",
                "--retry-fraction",
                "--json",
            ],
        ),
        (
            "delay",
            &["--retry-after", "--attempt", "--now-ms", "--date", "--json"],
        ),
        (
            "classify",
            &["--method", "--idempotency-key", "--header", "--json"],
        ),
        (
            "serve",
            &[
                "--port",
                "--allowance",
                "--burst",
                "--fail-rate",
                "--latency",
                "--retry-after",
                "--quota",
            ],
        ),
        (
            "trial",
            &[
                "--url",
                "--count",
                "--rate",
                "--concurrency",
                "--deadline",
                "--json",
                "--plot",
            ],
        ),
        (
            "simulate",
            &["--clients", "--jitter", "--seed", "--model", "--runs"],
        ),
        (
            "run",
            &[
                "--attempts",
                "--deadline",
                "--retry-on",
                "--kill-after",
                "--seed",
                "RECUO_ATTEMPT",
                "RECUO_IDEMPOTENCY_KEY",
            ],
        ),
    ];
    for (sub, names) in flags {
        let r = recuo(&[sub, "--help"]);
        assert_eq!(r.code, 0, "{sub} --help");
        assert!(r.stdout.contains("Usage: recuo"), "{sub}: {}", r.stdout);
        for name in names {
            assert!(
                r.stdout.contains(name),
                "recuo {sub} --help mentions {name}"
            );
        }
    }
    let v = recuo(&["--version"]);
    assert_eq!(
        (v.code, v.stdout.trim()),
        (0, concat!("recuo ", env!("CARGO_PKG_VERSION")))
    );
}

#[test]
fn bad_arguments_give_one_line_and_exit_2() {
    let cases: [&[&str]; 22] = [
        &["frobnicate"],
        &["plan", "--requests", "600"],
        &[
            "plan",
            "--requests",
            "x",
            "--allowance",
            "1/s",
            "--target",
            "1/s",
            "--latency",
            "1s",
        ],
        &[
            "plan",
            "--requests",
            "1",
            "--allowance",
            "0/min",
            "--target",
            "1/s",
            "--latency",
            "1s",
        ],
        &[
            "plan",
            "--requests",
            "1",
            "--allowance",
            "1/s",
            "--target",
            "1/s",
            "--latency",
            "-1s",
        ],
        &["delay", "--attempt", "-1"],
        &["delay", "--attempt", "0", "--date", "tomorrow"],
        &[
            "delay",
            "--attempt",
            "0",
            "--now-ms",
            "1",
            "--date",
            "Sun, 06 Nov 1994 08:49:37 GMT",
        ],
        &["classify", "teapot"],
        &["classify", "429", "--header", "no colon here"],
        &["serve", "--fail-rate", "2"],
        &["serve", "--burst", "0"],
        &["trial", "--url", "ftp://example.com/"],
        &[
            "trial",
            "--url",
            "http://127.0.0.1:9/",
            "--header",
            "Authorization sekrit",
        ],
        &[
            "trial",
            "--url",
            "https://127.0.0.1:9/",
            "--cacert",
            "/nonexistent.pem",
        ],
        &[
            "trial",
            "--url",
            "http://127.0.0.1:9/",
            "--cacert",
            "a",
            "--insecure",
        ],
        &[
            "trial",
            "--url",
            "http://127.0.0.1:9/",
            "--fail-rate",
            "0.5",
        ],
        &["trial", "--concurrency", "0"],
        &["simulate", "--jitter", "sometimes"],
        &["run"],
        &["run", "--retry-on", "0", "--", "true"],
        &["run", "--cap", "1ms", "--base", "2ms", "--", "true"],
    ];
    for args in cases {
        let r = recuo(args);
        assert_eq!(r.code, 2, "recuo {args:?}: {r:?}");
        assert_eq!(
            r.stderr.lines().count(),
            1,
            "recuo {args:?}: {:?}",
            r.stderr
        );
        assert!(r.stderr.starts_with("recuo: "), "{:?}", r.stderr);
        assert!(r.stdout.is_empty(), "recuo {args:?} printed {:?}", r.stdout);
        assert!(
            !r.stderr.contains("sekrit"),
            "a header's value is never shown"
        );
    }
    let r = recuo(&[]);
    assert_eq!(r.code, 2, "no subcommand: help and 2");
}
