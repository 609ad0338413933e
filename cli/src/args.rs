//! The command line: subcommands, flags and the parsers of their values (durations, rates,
//! jitter modes). Parsing only: each subcommand's module does the work.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use recuo::{Jitter, Rate};

use crate::serve::cors::Cors;

/// `recuo` — careful retries, from the command line.
#[derive(Debug, Parser)]
#[command(
    name = "recuo",
    version,
    about = "Careful retries from the command line: plan a batch, read Retry-After, classify \
             outcomes, serve a rate-limited test API (HTTP or HTTPS), run a trial batch against \
             it or a real API, retry any command, simulate backoff with jitter.",
    after_help = "Durations are written 200ms, 2s, 1.5s, 1m or 1h (a bare number is seconds); \
                  rates 90/min, 2/s, 5000/h or 86400/day (a bare number is per second).\n\
                  Bad arguments exit with status 2; a failure while running exits with 1 \
                  (recuo run exits with its command's status).",
    arg_required_else_help = true,
    propagate_version = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan a batch: start interval, least duration and requests in flight.
    Plan(PlanArgs),
    /// How long to wait before a retry, for a Retry-After value and a retry index.
    Delay(DelayArgs),
    /// The verdict on an HTTP status or a transport failure.
    Classify(ClassifyArgs),
    /// Serve a simulated rate-limited API on 127.0.0.1 (429, 503, quotas, GET /stats, GET /metrics).
    Serve(ServeArgs),
    /// Run a batch of reads through the retry loop and the gate, and report what happened.
    Trial(Box<TrialArgs>),
    /// Simulate many clients retrying, in virtual time: the AWS post's experiment (occ) or a
    /// rate-limited server (rate).
    Simulate(SimulateArgs),
    /// Run a command, retrying it while it fails (com_retry for the shell).
    Run(RunArgs),
}

/// `recuo plan`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example (600 requests against 120 a minute): recuo plan --requests 600 \
                        --allowance 120/min --target 90/min --latency 2s\n  → one start \
                        every 667 ms, 400 s in all, 3 requests in flight."
)]
pub struct PlanArgs {
    /// How many requests the batch sends (first attempts).
    #[arg(long, value_name = "N")]
    pub requests: u64,
    /// The server's allowance, e.g. 120/min.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub allowance: Rate,
    /// The rate to send at, at or below the allowance, e.g. 90/min.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub target: Rate,
    /// How long one response takes, e.g. 2s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub latency: Duration,
    /// The share of all attempts expected to be retries, in [0, 1).
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub retry_fraction: f64,
    /// Print one JSON object instead of words.
    #[arg(long)]
    pub json: bool,
}

/// `recuo delay`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  recuo delay --retry-after 12 --attempt 0        → 12000 \
                        ms (12 is seconds)\n  recuo delay --retry-after 'Sun, 06 Nov 1994 \
                        08:49:37 GMT' --attempt 0 --date 'Sun, 06 Nov 1994 08:49:07 GMT'\n  \
                        recuo delay --attempt 2 --seed 1               → a draw from [0, 4000] \
                        ms"
)]
pub struct DelayArgs {
    /// The Retry-After header's value; leave it out when the response had none.
    #[arg(long, value_name = "VALUE", allow_hyphen_values = true)]
    pub retry_after: Option<String>,
    /// The retry index: 0 before the first retry.
    #[arg(long, value_name = "N")]
    pub attempt: u32,
    /// The current time in epoch milliseconds (default: the system clock).
    #[arg(
        long,
        value_name = "MS",
        allow_negative_numbers = true,
        conflicts_with = "date"
    )]
    pub now_ms: Option<i64>,
    /// The response's Date header, taken as "now" (immune to the client's clock skew).
    #[arg(long, value_name = "HTTP-DATE")]
    pub date: Option<String>,
    /// Seed the full-jitter draw used when there is no valid Retry-After.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Print one JSON object: kind, wait_ms, delay_ms.
    #[arg(long)]
    pub json: bool,
}

/// `recuo classify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  recuo classify 429 --header 'Retry-After: 30'   → retry \
                        (rate_limited), wait 30000 ms\n  recuo classify 500 --method POST      \
                        → give_up (not_idempotent)\n  recuo classify timeout --method POST \
                        --idempotency-key → retry (timeout)"
)]
pub struct ClassifyArgs {
    /// An HTTP status code, or a transport failure: connect, tls, timeout, reset, other.
    #[arg(value_name = "STATUS|connect|tls|timeout|reset|other")]
    pub outcome: String,
    /// The request's method.
    #[arg(long, value_name = "METHOD", default_value = "GET")]
    pub method: String,
    /// The request carried an idempotency key (makes POST and PATCH safe to repeat).
    #[arg(long)]
    pub idempotency_key: bool,
    /// A response header, "Name: value"; repeat for several.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
    /// The current time in epoch milliseconds, for dates in the headers (default: now).
    #[arg(long, value_name = "MS", allow_negative_numbers = true)]
    pub now_ms: Option<i64>,
    /// Print one JSON object: verdict, reason, wait_ms, wait_unbounded.
    #[arg(long)]
    pub json: bool,
}

/// How a hostile server misbehaves (`recuo serve --trickle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrickleMode {
    /// A 503 with `Retry-After: 1` whose headers come at once and whose 35-byte body comes
    /// one byte at a time.
    Body,
    /// The same 503, its status line and headers one byte at a time.
    Headers,
    /// A 200 whose body never ends (chunks as fast as the client reads them).
    Endless,
}

/// When `recuo trial` adds recuo's own Idempotency-Key to a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeysMode {
    /// To methods that are not idempotent (POST, PATCH): the adapters' default.
    Auto,
    /// To every read.
    Always,
    /// To none.
    Never,
}

impl KeysMode {
    /// The caller's choice as the core's request plan takes it: `None` lets the method
    /// decide.
    pub const fn send_keys(self) -> Option<bool> {
        match self {
            KeysMode::Auto => None,
            KeysMode::Always => Some(true),
            KeysMode::Never => Some(false),
        }
    }
}

/// How the simulated server says how long to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RetryAfterMode {
    /// `Retry-After: 2` (delay-seconds, rounded up).
    Seconds,
    /// `Retry-After: <HTTP-date>` (rounded up to the next second).
    Date,
    /// No Retry-After: the client falls back on its own backoff.
    None,
}

impl RetryAfterMode {
    /// The mode's name, as written on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            RetryAfterMode::Seconds => "seconds",
            RetryAfterMode::Date => "date",
            RetryAfterMode::None => "none",
        }
    }
}

/// `recuo serve`.
#[derive(Debug, Args)]
#[command(
    after_help = "Every path but /stats and /metrics is the API: GET /items/7 answers 200 with a \
                        small JSON body, 429 when the allowance is exceeded (counted per \
                        X-Api-Key header, or per client address), 503 at --fail-rate. \
                        GET /stats answers what the server saw (GET /metrics: the same as \
                        Prometheus text). The first line printed is \
                        'listening on http://127.0.0.1:PORT' (https:// with --tls, then \
                        'CA certificate: FILE'); Ctrl-C or SIGTERM stops it.\n\n\
                        With --script FILE, the server plays a script instead: FILE is JSON, \
                        {\"requests\": [{\"id\": \"flaky\", \"script\": [EVENT, …]}, …]}, \
                        where an EVENT is {\"status\": 503, \"headers\": {\"Retry-After\": \
                        \"1\"}}, or {\"status\": 200, \"cut\": true} (headers saying \
                        Content-Length: 1000, then 10 bytes, then the connection closes), or \
                        {\"reset\": true} (the request is read, then the connection closes \
                        with no answer). Each path ending in /flaky (e.g. /mine/flaky) plays \
                        the next event of 'flaky', one counter per whole path; the last event \
                        repeats. In a header value, {date+N} is the HTTP-date of the server's \
                        clock plus N seconds ({date}, {date-N} too). GET \
                        /__script/log/mine/flaky answers what the server saw on /mine/flaky: \
                        [{\"method\": \"POST\", \"key\": \"<Idempotency-Key>\" or null}, …], \
                        the first 1000 requests of each path. A path whose last segment names \
                        no case answers 404. A file over 4 MiB or not as described is refused \
                        at start."
)]
pub struct ServeArgs {
    /// The port on 127.0.0.1; 0 picks a free one.
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub port: u16,
    /// Answer 429 past this rate (per API key or per client).
    #[arg(long, value_name = "RATE", value_parser = parse_rate, default_value = "120/min")]
    pub allowance: Rate,
    /// Starts allowed at once after a quiet spell.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub burst: u32,
    /// The share of requests answered 503, in [0, 1].
    #[arg(long, value_name = "F", default_value_t = 0.1, value_parser = parse_fraction)]
    pub fail_rate: f64,
    /// How long a 200 or 503 takes to come back.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "200ms")]
    pub latency: Duration,
    /// How 429s and 503s say when to come back.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = RetryAfterMode::Seconds)]
    pub retry_after: RetryAfterMode,
    /// A daily quota: after N requests served (per API key or client), answer 429 with a
    /// Retry-After a day away.
    #[arg(long, value_name = "N")]
    pub quota: Option<u64>,
    /// Seed the random 503s, for a reproducible run.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Stop on its own after this long (for scripts and tests).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub stop_after: Option<Duration>,
    /// Speak HTTPS, with a certificate for 127.0.0.1 and localhost signed by a CA made for
    /// this run; the second line printed says where the CA's certificate is.
    #[arg(long)]
    pub tls: bool,
    /// With --tls: write the CA's certificate here (default: a new file in the temporary
    /// folder, removed when the server stops).
    #[arg(long, value_name = "FILE", requires = "tls")]
    pub ca_file: Option<PathBuf>,
    /// Be a hostile server instead, to see a client's deadline hold: trickle a 503's body or
    /// its headers one byte at a time, or send a 200 whose body never ends. Every other
    /// setting but --port and --stop-after is ignored.
    #[arg(long, value_name = "MODE", value_enum, conflicts_with = "tls")]
    pub trickle: Option<TrickleMode>,
    /// With --trickle: the time between two bytes.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "1s", requires = "trickle")]
    pub trickle_every: Duration,
    /// Be a scripted server instead, for testing a client's retries: each path ending in
    /// /<id> plays the next answer of the case <id> of this JSON file (see below). Every
    /// other setting but --port, --stop-after, --tls and --ca-file is ignored.
    #[arg(long, value_name = "FILE", conflicts_with = "trickle")]
    pub script: Option<PathBuf>,
    /// Let pages of other origins read the answers, for tests in a browser: `full` (any
    /// origin, and the waits exposed: Retry-After, Date, the RateLimit and X-RateLimit-*
    /// fields, X-Request-Id), `origin-only` (any origin, nothing exposed: a page sees a 429
    /// but not its wait), or `none` (a page on another origin sees every answer as a failed
    /// fetch). Works with --script too.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = Cors::None, conflicts_with = "trickle")]
    pub cors: Cors,
}

/// The embedded server's settings in `recuo trial` (no `--url`).
#[derive(Debug, Args)]
#[command(next_help_heading = "The embedded server (without --url)")]
pub struct EmbeddedArgs {
    /// The server's allowance. With --url, the API's allowance if you know it: it is then
    /// used only for the plan and the plot. [default: 60/min]
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub allowance: Option<Rate>,
    /// The server's burst. [default: 5]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub burst: Option<u32>,
    /// The share of requests the server answers 503. [default: 0.1]
    #[arg(long, value_name = "F", value_parser = parse_fraction)]
    pub fail_rate: Option<f64>,
    /// How long the server takes to answer a 200 or a 503. [default: 2s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub latency: Option<Duration>,
    /// How the server says when to come back. [default: seconds]
    #[arg(long, value_name = "MODE", value_enum)]
    pub retry_after: Option<RetryAfterMode>,
    /// The server's daily quota: 429 with a Retry-After a day away after N served.
    #[arg(long, value_name = "N")]
    pub quota: Option<u64>,
    /// Seed the server's random 503s.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}

/// `recuo trial`.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --url or --urls, recuo starts its own simulated API on 127.0.0.1 (an \
                        allowance of 60/min with a burst of 5, 10% of 503s, 2 s per answer): \
                        a 90/min trial then meets both 429s and 503s. In a URL, {i} is replaced \
                        by the read's number. https:// URLs are verified against the system's \
                        root certificates, or the CA of --cacert. The values of sensitive \
                        headers (Authorization, Cookie, names with token, key, secret, …) are \
                        never printed or recorded."
)]
pub struct TrialArgs {
    /// The URL to read (http:// or https://); with --urls, the base that paths in the file
    /// are read against. Leave it out to use the embedded server.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A file of URLs or paths, one a line (blank lines and lines starting with # are
    /// skipped): one read each, in order.
    #[arg(long, value_name = "FILE", conflicts_with = "count")]
    pub urls: Option<PathBuf>,
    /// How many reads (of --url). [default: 20]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub count: Option<u32>,
    /// The request method. [default: GET, or POST with --data/--data-file]
    #[arg(long, value_name = "METHOD")]
    pub method: Option<String>,
    /// A request header, "Name: value", sent on every attempt; repeat for several. Your
    /// own Idempotency-Key is sent as it is (on every read) instead of recuo's, and makes
    /// the request safe to retry.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// The body sent on every attempt (a POST or PATCH carries recuo's Idempotency-Key, one
    /// per read).
    #[arg(long, value_name = "TEXT", conflicts_with = "data_file")]
    pub data: Option<String>,
    /// The body, read from a file once at the start.
    #[arg(long, value_name = "FILE")]
    pub data_file: Option<PathBuf>,
    /// Trust only the certificate authorities of this PEM file for https:// (instead of
    /// the system's root certificates).
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// DANGEROUS: take any certificate from an https:// server, for any name — anyone in
    /// the path can read and change the requests, credentials included. For a test server
    /// only; prefer --cacert.
    #[arg(long, conflicts_with = "cacert")]
    pub insecure: bool,
    /// The server honours Idempotency-Key: a request sent with recuo's key whose outcome is
    /// unknown (a timeout, a reset, a 500) is retried even when its method is not
    /// idempotent (POST, PATCH).
    #[arg(long)]
    pub keys_honoured: bool,
    /// When recuo adds its own Idempotency-Key (one per read, the same on all its attempts):
    /// auto (to methods that are not idempotent: POST, PATCH), always or never. A key given
    /// with --header is sent instead.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = KeysMode::Auto)]
    pub keys: KeysMode,
    /// The rate of starts, retries included (a regulator with a burst of 1).
    #[arg(long, value_name = "RATE", value_parser = parse_rate, default_value = "90/min")]
    pub rate: Rate,
    /// The most requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub concurrency: u32,
    /// A limit on the whole batch: no read starts or waits past it.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration, default_value = "30s")]
    pub deadline: Duration,
    /// The most attempts per read (5: at most 4 retries).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub attempts: u32,
    /// The backoff's first window: the first retry waits a random time up to
    /// it when the server says nothing.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration, default_value = "1s")]
    pub base: Duration,
    /// The backoff's largest window.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration, default_value = "8s")]
    pub cap: Duration,
    /// How long one request may take before it counts as a timeout.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration, default_value = "10s")]
    pub timeout: Duration,
    /// Send this API key as the X-Api-Key header (never printed).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write an SVG timeline of the starts, the allowance and the requests in flight.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Write a record of every attempt and of every read's result, one JSON object a line,
    /// redacted (no credentials, no personal data).
    #[arg(long, value_name = "FILE.jsonl")]
    pub records: Option<PathBuf>,
    /// Write the batch's metrics in the Prometheus text format: attempts by outcome and
    /// reason, retry delays, give-ups, time waited at the gate, budget refusals.
    #[arg(long, value_name = "FILE.prom")]
    pub metrics: Option<PathBuf>,
    /// The embedded server.
    #[command(flatten)]
    pub server: EmbeddedArgs,
}

/// Which experiment `recuo simulate` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Model {
    /// The experiment of AWS's "Exponential Backoff and Jitter" (2015), as its published
    /// simulator has it: clients race to update one row under optimistic concurrency.
    Occ,
    /// recuo's own: clients retry 429s against a server admitting a rate with a burst.
    Rate,
}

/// `recuo simulate`.
#[derive(Debug, Args)]
#[command(
    after_help = "--model occ (the default) is the experiment of AWS's 'Exponential Backoff \
                        and Jitter' (2015) as its published simulator \
                        (aws-samples/aws-arch-backoff-simulator) models it: every client reads \
                        one row's version and writes it back; a write with a stale version \
                        fails, and the client backs off (the core's backoff: base 5 ms, cap \
                        2 s) and reads again; each message takes |N(10 ms, 2 ms)|. It reports, \
                        per client count (10 to 100 by default), the writes the server \
                        received (calls) and when the last client finished, averaged over \
                        --runs (100). --model rate is a different experiment, recuo's own: \
                        every client sends one request at time 0 and retries every 429 against \
                        a server that admits --rate with a --burst, one seeded run. Virtual \
                        time: no sockets, no sleeping."
)]
pub struct SimulateArgs {
    /// The experiment: occ (the AWS post's) or rate (recuo's rate-limited server).
    #[arg(long, value_name = "MODEL", value_enum, default_value_t = Model::Occ)]
    pub model: Model,
    /// How many clients; occ takes a list, e.g. 10,50,100. [default: occ 10,20,…,100;
    /// rate 100]
    #[arg(long, value_name = "N,…", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub clients: Vec<u32>,
    /// One jitter mode only (default: all, side by side; occ adds no backoff at all).
    #[arg(long, value_name = "MODE", value_parser = parse_jitter)]
    pub jitter: Option<Jitter>,
    /// Seed the jitter (and occ's network), for a reproducible run (default: a random seed,
    /// printed).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// occ: how many runs to average per client count. [default: 100]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub runs: Option<u32>,
    /// The backoff's first window. [default: occ 5ms (its first retry's window is 2 × base,
    /// as the published simulator counts); rate 100ms]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub base: Option<Duration>,
    /// The backoff's largest window. [default: occ 2s; rate 10s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub cap: Option<Duration>,
    /// rate: what the server admits. [default: 100/s]
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub rate: Option<Rate>,
    /// rate: how many requests the server admits at once after a quiet spell. [default: 10]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub burst: Option<u32>,
    /// rate: the most attempts per client. [default: 100]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub attempts: Option<u32>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `recuo run`.
#[derive(Debug, Args)]
#[command(
    after_help = "The command runs with the terminal's stdin, stdout and stderr, unchanged; \
                        recuo's own lines go to stderr, prefixed 'recuo run:' (none with \
                        --quiet). Exit codes that are transient by default: every non-zero \
                        but 2 (misuse), 64 (EX_USAGE), 126 (cannot execute) and 127 (not \
                        found). In its environment: RECUO_ATTEMPT (0 on the first run), \
                        RECUO_ATTEMPTS, RECUO_IDEMPOTENCY_KEY (one per run of recuo, the \
                        same on every attempt) and RECUO_RETRY_AFTER_FILE (write a Retry-After \
                        value there — seconds or an HTTP-date — and recuo waits at least that \
                        long before the next attempt). recuo exits with the last attempt's \
                        status; 124 when the deadline or --timeout stopped it (as timeout \
                        does), 128+N for a signal N, 130 on Ctrl-C.\n\nExample: recuo run \
                        --attempts 4 --deadline 2m -- curl -fsS https://example.com/"
)]
pub struct RunArgs {
    /// The most attempts.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub attempts: u32,
    /// The backoff's first window.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "200ms")]
    pub base: Duration,
    /// The backoff's largest window.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    pub cap: Duration,
    /// The jitter: full, equal, decorrelated or none.
    #[arg(long, value_name = "MODE", value_parser = parse_jitter, default_value = "full")]
    pub jitter: Jitter,
    /// A limit on the whole run, retries and waits included: a command still running then
    /// is stopped (SIGTERM, then SIGKILL after --kill-after).
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub deadline: Option<Duration>,
    /// A limit on each attempt (stopped as at the deadline, and retried).
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub timeout: Option<Duration>,
    /// How long a command stopped with SIGTERM (or Ctrl-C's SIGINT) has to end before it is
    /// killed (SIGKILL).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    pub kill_after: Duration,
    /// The exit codes worth another attempt, e.g. 75,111 (then every other code is
    /// permanent). [default: every non-zero but 2, 64, 126 and 127]
    #[arg(long, value_name = "CODES", value_delimiter = ',', value_parser = clap::value_parser!(u8).range(1..))]
    pub retry_on: Vec<u8>,
    /// Seed the jitter, for exact delays in tests.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Print nothing of recuo's own (the command's output is never touched).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// The command and its arguments, after `--`.
    #[arg(value_name = "CMD", required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub command: Vec<String>,
}

/// A duration: a decimal number and a unit (`ms`, `s`, `m`/`min`, `h`); a bare number is
/// seconds.
///
/// # Errors
/// A message naming the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a duration: write it as 200ms, 2s, 1.5s, 1m or 1h");
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let per_unit_ms = match unit.trim() {
        "ms" => 1.0,
        "" | "s" | "sec" => 1000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(bad()),
    };
    if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
        return Err(bad());
    }
    let n: f64 = number.parse().map_err(|_| bad())?;
    let ms = n * per_unit_ms;
    // A week is far more than any command here could mean; beyond it is a typo.
    if !ms.is_finite() || ms > 7.0 * 86_400_000.0 {
        return Err(format!("{text:?} is too long: at most a week"));
    }
    Ok(Duration::from_micros((ms * 1000.0).round() as u64))
}

/// A duration above zero.
///
/// # Errors
/// As [`parse_duration`], and for zero.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d.is_zero() => Err(format!("{text:?} must be longer than zero")),
        d => Ok(d),
    }
}

/// A rate, as the core reads it (`90/min`, `2/s`, …).
///
/// # Errors
/// The core's message.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    text.parse::<Rate>().map_err(|e| e.to_string())
}

/// A fraction in `[0, 1]`.
///
/// # Errors
/// When not a number in range.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{text:?} is not a fraction between 0 and 1")),
    }
}

/// A jitter mode, as the core names it.
///
/// # Errors
/// When not one of the four.
pub fn parse_jitter(text: &str) -> Result<Jitter, String> {
    Jitter::from_name(text)
        .ok_or_else(|| format!("{text:?} is not a jitter mode: full, equal, decorrelated or none"))
}

/// A header written `Name: value`.
///
/// # Errors
/// When there is no colon or the name is empty.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() && !name.trim().contains(' ') => Ok((
            name.trim().to_string(),
            value.trim_matches([' ', '\t']).to_string(),
        )),
        _ => Err("a header is written \"Name: value\"".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let ms = |s: &str| parse_duration(s).map(|d| d.as_millis());
        assert_eq!(ms("200ms"), Ok(200));
        assert_eq!(ms("2s"), Ok(2000));
        assert_eq!(ms("1.5s"), Ok(1500));
        assert_eq!(ms("2"), Ok(2000));
        assert_eq!(ms("1m"), Ok(60_000));
        assert_eq!(ms("1min"), Ok(60_000));
        assert_eq!(ms("1h"), Ok(3_600_000));
        assert_eq!(ms(" 30s "), Ok(30_000));
        assert_eq!(ms("0s"), Ok(0));
        assert!(parse_positive_duration("0ms").is_err());
        assert_eq!(parse_positive_duration("1ms"), Ok(Duration::from_millis(1)));
        for bad in [
            "",
            "s",
            "-1s",
            "1.s",
            ".5s",
            "1e3s",
            "1 fortnight",
            "NaNs",
            "inf",
            "9999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn headers_fractions_jitter() {
        assert_eq!(
            parse_header("Retry-After:  30 "),
            Ok(("Retry-After".into(), "30".into()))
        );
        assert_eq!(parse_header("X: a: b"), Ok(("X".into(), "a: b".into())));
        assert!(parse_header("no colon").is_err());
        assert!(parse_header(": value").is_err());
        assert_eq!(parse_fraction("0.25"), Ok(0.25));
        assert!(parse_fraction("1.5").is_err());
        assert!(parse_fraction("NaN").is_err());
        assert_eq!(parse_jitter("decorrelated"), Ok(Jitter::Decorrelated));
        assert!(parse_jitter("some").is_err());
        assert!(parse_rate("0/min").is_err());
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
