//! recuo's Lua scripts as the crate sends them: each file of `src/` without its comment lines
//! (they document the script here, and would only travel to the server and weigh on the
//! WebAssembly build), with the SHA-1 of the text sent, which `EVALSHA` names it by.

use std::fmt::Write as _;
use std::path::Path;

/// Each script: its constant's name, its file, and what it is.
const SCRIPTS: [(&str, &str, &str); 7] = [
    (
        "GCRA",
        "gcra.lua",
        "The regulator's rule (GCRA, in microseconds).",
    ),
    (
        "ADAPT",
        "adapt.lua",
        "The adaptive rule: the interval in force after a 429 or a success.",
    ),
    (
        "SETTINGS",
        "settings.lua",
        "A key's settings, recorded by its first user and answered to every later one.",
    ),
    (
        "LEASE_ACQUIRE",
        "lease_acquire.lua",
        "A place in a concurrency limit, as a lease.",
    ),
    ("LEASE_RENEW", "lease_renew.lua", "A lease extended."),
    (
        "LEASE_RELEASE",
        "lease_release.lua",
        "A lease given back (or, with the token `-`, the places held counted).",
    ),
    ("BUDGET", "budget.lua", "The retry budget's rule."),
];

fn main() {
    let src = Path::new("src");
    let mut out = String::new();
    for (name, file, doc) in SCRIPTS {
        let path = src.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("a script of src/");
        let body: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("--") && !l.trim().is_empty())
            .flat_map(|l| [l, "\n"])
            .collect();
        let sha1 = sha1_smol::Sha1::from(body.as_bytes()).digest().to_string();
        let _ = writeln!(
            out,
            "/// {doc} (`src/{file}`, its comments left out)\npub const {name}: Script = Script {{ body: {body:?}, sha1: {sha1:?} }};"
        );
    }
    let dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&dir).join("scripts.rs"), out).expect("OUT_DIR is writable");
}
