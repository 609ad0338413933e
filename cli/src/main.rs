//! `recuo` — the command line of recuo: plan a batch, read Retry-After, classify outcomes,
//! serve a simulated rate-limited API, run a trial batch through the core's retry loop and
//! gate, and simulate backoff with jitter in virtual time.
//!
//! Every decision comes from the core crate `recuo`; this crate parses arguments, does the
//! I/O (HTTP with hyper on tokio, the terminal, files) and prints.
#![deny(missing_docs)]

mod args;
mod classify;
mod client;
mod delay;
mod error;
mod events;
mod occ;
mod plan;
mod plot;
mod progress;
mod report;
mod run;
mod script;
mod serve;
mod server_state;
mod simulate;
mod table;
mod tls;
mod trial;
mod trickle;

use std::io::Write;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use crate::args::{Cli, Command};
use crate::error::{one_line, CliError};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(&e),
    };
    let result = match cli.command {
        Command::Plan(a) => plan::run(&a),
        Command::Delay(a) => delay::run(&a),
        Command::Classify(a) => classify::run(&a),
        Command::Serve(a) => serve::run(&a),
        Command::Trial(a) => trial::run(&a),
        Command::Simulate(a) => simulate::run(&a),
        Command::Run(a) => return run::main(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("recuo: {e}");
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
        }
    }
}

/// The subcommands' names, to point a bad argument at the right `--help`.
const SUBCOMMANDS: [&str; 7] = [
    "plan", "delay", "classify", "serve", "trial", "simulate", "run",
];

/// Help and version go to stdout with status 0; every other parse error is one line on
/// stderr with status 2.
fn argument_error(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(2)
        }
        _ => {
            let usage = CliError::Usage(one_line(&e.render().to_string()));
            let sub = std::env::args()
                .skip(1)
                .find(|a| SUBCOMMANDS.contains(&a.as_str()))
                .map_or(String::new(), |s| format!("{s} "));
            eprintln!("recuo: {usage} (see 'recuo {sub}--help')");
            ExitCode::from(2)
        }
    }
}
