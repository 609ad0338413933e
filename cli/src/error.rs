//! How the command fails: bad arguments (exit 2) or a failure while running (exit 1), each
//! said in one line.

use std::fmt;

/// Why a subcommand stopped.
#[derive(Debug)]
pub enum CliError {
    /// The arguments cannot be answered (exit code 2).
    Usage(String),
    /// Something failed while running: a socket, a file (exit code 1).
    Run(String),
}

impl CliError {
    /// The process exit code for this error.
    pub const fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Run(_) => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Run(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CliError {}

/// A failure while running, with what was being done.
pub fn run_error(doing: &str, e: impl fmt::Display) -> CliError {
    CliError::Run(format!("{doing}: {e}"))
}

/// Reduces clap's multi-line message to one line: the message itself, without the usage
/// block and the "For more information" hint.
pub fn one_line(rendered: &str) -> String {
    let mut parts = Vec::new();
    for line in rendered.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.strip_prefix("error: ").unwrap_or(line));
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_messages_fit_on_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  \
                        --requests <N>\n\nUsage: recuo plan --requests <N>\n\nFor more \
                        information, try '--help'.\n";
        assert_eq!(
            one_line(rendered),
            "the following required arguments were not provided: --requests <N>"
        );
        assert_eq!(CliError::Usage("x".into()).exit_code(), 2);
        assert_eq!(
            run_error("binding", "in use").to_string(),
            "binding: in use"
        );
    }
}
