//! A `redis-server` of the test's own on 127.0.0.1: a plain port, a TLS port (a self-signed
//! certificate for 127.0.0.1 made by `openssl` for this server, trusted through
//! `SSL_CERT_FILE`), the default user's password and an ACL user `app`. And the fleets'
//! parts: `recuo serve`, and copies of the test binary as the fleet's processes.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
    dir: PathBuf,
    pub port: u16,
    pub tls_port: u16,
    pub password: String,
    /// `redis://:password@127.0.0.1:port`
    pub url: String,
    /// `rediss://app:apppw@127.0.0.1:tls_port` (the ACL user, over TLS)
    pub tls_url: String,
    /// `redis://app:apppw@127.0.0.1:port`
    pub acl_url: String,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The certificate every server of this process uses (made once, trusted through
/// `SSL_CERT_FILE` before any TLS connection).
fn certificate() -> (PathBuf, PathBuf) {
    static MADE: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("recuo-redis-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        let ok = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args(["-subj", "/CN=127.0.0.1"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
            .args(["-addext", "basicConstraints=critical,CA:FALSE"])
            .args(["-addext", "extendedKeyUsage=serverAuth"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl must be installed")
            .success();
        assert!(ok, "openssl could not make a certificate");
        std::env::set_var("SSL_CERT_FILE", &cert);
        (cert, key)
    })
    .clone()
}

impl Server {
    pub fn start() -> Server {
        let (cert, key) = certificate();
        for round in 0..20 {
            let (port, tls_port) = (free_port(), free_port());
            let password = format!("pw{}x{port}x{round}", std::process::id());
            let dir = std::env::temp_dir().join(format!("recuo-redis-{port}-{tls_port}"));
            let _ = std::fs::create_dir_all(&dir);
            let mut child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--tls-port", &tls_port.to_string()])
                .arg("--tls-cert-file")
                .arg(&cert)
                .arg("--tls-key-file")
                .arg(&key)
                .args(["--tls-auth-clients", "no"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&dir)
                .args(["--requirepass", &password])
                .args(["--user", "app", "on", ">apppw", "~*", "&*", "+@all"])
                .stdout(Stdio::null())
                .spawn()
                .expect("redis-server must be installed (make deps installs it)");
            let url = format!("redis://:{password}@127.0.0.1:{port}");
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until {
                if child.try_wait().ok().flatten().is_some() {
                    break; // it could not start (a port was taken): other ports
                }
                if recuo_redis::ping(&url, Duration::from_secs(2)).is_ok() {
                    return Server {
                        child,
                        dir,
                        port,
                        tls_port,
                        url,
                        tls_url: format!("rediss://app:apppw@127.0.0.1:{tls_port}"),
                        acl_url: format!("redis://app:apppw@127.0.0.1:{port}"),
                        password,
                    };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server did not start");
    }

    /// Stops the server (SIGKILL) and waits for it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGSTOP / SIGCONT: a server that accepts connections but never answers.
    pub fn freeze(&self, frozen: bool) {
        let sig = if frozen { "-STOP" } else { "-CONT" };
        let _ = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.freeze(false);
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// This test binary, running only its test `name` with `env`, and `role` (the environment
/// variable a test reads to know which part it plays) set to `name`.
pub fn child(role: &str, name: &str, env: &[(&str, String)]) -> Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .env(role, name)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

/// `recuo serve` (target/debug/recuo: `cargo build -p recuo-cli`), answering every request
/// 200 after `latency`; its base URL.
pub fn recuo_serve(latency: &str) -> (Child, String) {
    let bin = std::env::var("RECUO_BIN")
        .unwrap_or_else(|_| format!("{}/../target/debug/recuo", env!("CARGO_MANIFEST_DIR")));
    let mut serve = Command::new(&bin)
        .args(["serve", "--stop-after", "300s", "--allowance", "100000/s"])
        .args(["--burst", "10000", "--fail-rate", "0", "--latency", latency])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin}: {e} (cargo build -p recuo-cli)"));
    let mut first = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        first.starts_with("listening on http://127.0.0.1:"),
        "{first}"
    );
    (serve, first.split_whitespace().last().unwrap().to_owned())
}

/// Runs `count` copies of this test binary playing `name` (as [`child`]) with `env`, each
/// required to succeed, then answers `recuo serve`'s `/stats` at `api` and stops `serve`.
pub fn run_fleet(
    role: &str,
    name: &str,
    count: usize,
    env: &[(&str, String)],
    (serve, api): (Child, String),
) -> serde_json::Value {
    let children: Vec<_> = (0..count).map(|_| child(role, name, env)).collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    stop_serve((serve, api))
}

/// `recuo serve`'s `/stats` at `api`, then `serve` stopped.
pub fn stop_serve((mut serve, api): (Child, String)) -> serde_json::Value {
    let stats = Command::new("curl")
        .args(["-s", &format!("{api}/stats")])
        .output()
        .unwrap();
    let _ = serve.kill();
    let _ = serve.wait();
    serde_json::from_slice(&stats.stdout).unwrap()
}

/// A Redis Cluster of 3 masters and 3 replicas on 127.0.0.1 (`scripts/redis-cluster`),
/// stopped when dropped.
pub struct Cluster {
    dir: PathBuf,
    /// `redis+cluster://…` (`rediss+cluster://app:apppw@…` with TLS): the masters as seeds.
    pub url: String,
    /// Every node's port.
    pub nodes: Vec<u16>,
    /// The certificate to trust (TLS clusters).
    pub cert: Option<PathBuf>,
}

fn cluster_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/redis-cluster")
}

impl Cluster {
    /// Starts a cluster (TLS, with the ACL user `app`, when `tls`), ready: every slot served,
    /// every replica linked.
    pub fn start(tls: bool) -> Cluster {
        let dir = std::env::temp_dir().join(format!(
            "recuo-cluster-{}-{}",
            std::process::id(),
            free_port()
        ));
        let mut cmd = Command::new(cluster_script());
        cmd.arg("start").arg(&dir);
        if tls {
            cmd.arg("--tls");
        }
        let out = cmd.stderr(Stdio::inherit()).output().unwrap();
        assert!(out.status.success(), "the cluster did not start");
        let env = String::from_utf8(out.stdout).unwrap();
        let get = |name: &str| {
            env.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .map(str::to_owned)
        };
        Cluster {
            url: get("URL").unwrap(),
            nodes: get("NODES")
                .unwrap()
                .split(',')
                .map(|p| p.parse().unwrap())
                .collect(),
            cert: get("CERT").map(PathBuf::from),
            dir,
        }
    }

    fn script(&self, args: &[&str]) -> String {
        let out = Command::new(cluster_script())
            .arg(args[0])
            .arg(&self.dir)
            .args(&args[1..])
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(out.status.success(), "redis-cluster {args:?} failed");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// The port and pid of the master serving `key`'s slot.
    pub fn master_of(&self, key: &str) -> (u16, u32) {
        let answer = self.script(&["master-of", key]);
        let mut words = answer.split_whitespace();
        (
            words.next().unwrap().parse().unwrap(),
            words.next().unwrap().parse().unwrap(),
        )
    }

    /// Waits until every slot is served again; the seconds it took.
    pub fn wait_ok(&self) -> f64 {
        self.script(&["wait-ok", "30"]).parse().unwrap()
    }

    /// `redis-cli` against the node at `port` (plain clusters): its answer.
    pub fn cli(&self, port: u16, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// The node id of the node at `port`.
    pub fn id(&self, port: u16) -> String {
        self.cli(port, &["CLUSTER", "MYID"])
    }

    /// The ports of the nodes that are masters now.
    pub fn masters(&self) -> Vec<u16> {
        self.nodes
            .iter()
            .copied()
            .filter(|p| self.cli(*p, &["ROLE"]).starts_with("master"))
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(cluster_script())
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}
