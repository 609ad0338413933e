//! The limits on a Redis Cluster: a real cluster of 3 masters and 3 replicas
//! (`scripts/redis-cluster`, through support/) serves the regulator, the limit and the budget
//! on keys of every master, from one seed, after its scripts are flushed, while a slot moves
//! (`MOVED`) and while it is being migrated (`ASK`); fake nodes show that redirects, a node
//! that never answers, a cluster that stays down and a huge slot map all end in a clear error
//! within the call's deadline.
#![cfg(feature = "client")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use recuo_redis::{RedisBudget, RedisGcra, RedisLimit};

mod support;
use support::Cluster;

const SECOND_NS: u64 = 1_000_000_000;

/// `(reserved, waits)` of one start of the regulator on `gcra`.
fn start(gcra: &RedisGcra) -> (bool, bool) {
    let (reserved, wait_us, _) = gcra.reserve_us(None, 1, 0).unwrap();
    (reserved, wait_us > 0)
}

/// The limits of the key `key` all answer by their rules on `url`.
fn limits_hold(url: &str, key: &str) {
    let gcra = RedisGcra::open(url, key, SECOND_NS, 2, false).unwrap();
    assert_eq!(start(&gcra), (true, false), "{key}");
    assert_eq!(start(&gcra), (true, false), "{key}");
    assert_eq!(start(&gcra), (false, true), "{key}");

    let limit = RedisLimit::open(url, key, 2, Duration::from_secs(10)).unwrap();
    let one = limit.try_acquire().unwrap().unwrap();
    let _two = limit.try_acquire().unwrap().unwrap();
    assert!(limit.try_acquire().unwrap().is_err(), "{key}");
    assert!(one.release().unwrap());
    assert_eq!(limit.in_flight().unwrap(), 1);

    let budget = RedisBudget::open(url, key, 0.1, 0.5, 10).unwrap();
    for _ in 0..20 {
        budget.op_at("request", 1_000).unwrap();
    }
    // 10% of 20 requests and 0.5 a second over 10 s: 7 retries.
    let granted = (0..10)
        .filter(|_| budget.op_at("withdraw", 1_000).unwrap().0)
        .count();
    assert_eq!(granted, 7, "{key}");
}

/// Keys whose limits live on three different masters.
fn keys_on_every_master(cluster: &Cluster) -> Vec<(String, u16)> {
    let mut found: Vec<(String, u16)> = Vec::new();
    for i in 0..40 {
        let key = format!("k{i}");
        let (port, _) = cluster.master_of(&format!("{{{key}}}:tat"));
        if found.iter().all(|(_, p)| *p != port) {
            found.push((key, port));
        }
        if found.len() == 3 {
            return found;
        }
    }
    panic!("no keys on three masters: {found:?}");
}

fn slot(cluster: &Cluster, port: u16, key: &str) -> String {
    cluster.cli(port, &["CLUSTER", "KEYSLOT", key])
}

/// Moves `slot` from the master at `from` to the one at `to`: both sides marked, the keys
/// migrated when `keys`, then every master told.
fn begin_moving(cluster: &Cluster, slot: &str, from: u16, to: u16) {
    let (from_id, to_id) = (cluster.id(from), cluster.id(to));
    assert_eq!(
        cluster.cli(to, &["CLUSTER", "SETSLOT", slot, "IMPORTING", &from_id]),
        "OK"
    );
    assert_eq!(
        cluster.cli(from, &["CLUSTER", "SETSLOT", slot, "MIGRATING", &to_id]),
        "OK"
    );
}

fn migrate_keys(cluster: &Cluster, slot: &str, from: u16, to: u16) {
    let keys = cluster.cli(from, &["CLUSTER", "GETKEYSINSLOT", slot, "100"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert!(!keys.is_empty());
    let to_port = to.to_string();
    let mut args = vec!["MIGRATE", "127.0.0.1", &to_port, "", "0", "5000", "KEYS"];
    args.extend(&keys);
    assert_eq!(cluster.cli(from, &args), "OK");
}

/// Gives `slot` to the master at `to`: that node first, as Redis documents, then the others.
fn end_moving(cluster: &Cluster, slot: &str, to: u16) {
    let to_id = cluster.id(to);
    let mut masters = cluster.masters();
    masters.sort_by_key(|m| *m != to);
    for master in masters {
        assert_eq!(
            cluster.cli(master, &["CLUSTER", "SETSLOT", slot, "NODE", &to_id]),
            "OK"
        );
    }
}

#[test]
fn every_limit_runs_on_a_cluster_and_follows_its_slots() {
    let cluster = Cluster::start(false);
    let keys = keys_on_every_master(&cluster);
    for (key, port) in &keys {
        limits_hold(&cluster.url, key);
        // Each limit's keys live on its slot's master.
        for suffix in ["tat", "settings", "budget"] {
            let stored = format!("{{{key}}}:{suffix}");
            assert_eq!(cluster.cli(*port, &["EXISTS", &stored]), "1", "{stored}");
        }
    }

    // One seed is enough: the others are found from its slot map.
    let one_seed = format!("redis+cluster://127.0.0.1:{}/", keys[0].1);
    let seeded = RedisGcra::open(&one_seed, "seeded", SECOND_NS, 1, false).unwrap();
    assert_eq!(start(&seeded), (true, false));
    assert_eq!(start(&seeded), (false, true));

    // A node that forgot the scripts is taught them again.
    for (_, port) in &keys {
        assert_eq!(cluster.cli(*port, &["SCRIPT", "FLUSH"]), "OK");
    }
    let again = RedisGcra::open(&cluster.url, "flushed", SECOND_NS, 1, false).unwrap();
    assert_eq!(start(&again), (true, false));

    // MOVED: a slot moved with its keys after the handle read the map; its state moved too.
    let (moved_key, from) = keys[0].clone();
    let to = keys[1].1;
    let gcra = RedisGcra::open(&cluster.url, &moved_key, SECOND_NS, 2, false).unwrap();
    let slot_moved = slot(&cluster, from, &format!("{{{moved_key}}}:tat"));
    begin_moving(&cluster, &slot_moved, from, to);
    migrate_keys(&cluster, &slot_moved, from, to);
    end_moving(&cluster, &slot_moved, to);
    assert_eq!(
        start(&gcra),
        (false, true),
        "the burst spent before the move"
    );
    let tat = format!("{{{moved_key}}}:tat");
    assert_eq!(cluster.cli(to, &["EXISTS", &tat]), "1");

    // ASK: a slot halfway through its migration; a limit's new keys are made on the node
    // that imports it.
    let asked = (0..40)
        .map(|i| format!("ask{i}"))
        .find(|k| cluster.master_of(&format!("{{{k}}}:tat")).0 == keys[2].1)
        .unwrap();
    let (from, to) = (keys[2].1, keys[0].1);
    let slot_asked = slot(&cluster, from, &format!("{{{asked}}}:tat"));
    begin_moving(&cluster, &slot_asked, from, to);
    let limit = RedisLimit::open(&cluster.url, &asked, 1, Duration::from_secs(10)).unwrap();
    let held = limit.try_acquire().unwrap().unwrap();
    assert!(limit.try_acquire().unwrap().is_err());
    // The regulator's script names two keys, one of them absent: the importing node answers
    // TRYAGAIN until the migration ends, and the call waits for it within its deadline.
    let waiting = {
        let url = cluster.url.clone();
        let asked = asked.clone();
        std::thread::spawn(move || {
            let gcra = RedisGcra::open(&url, &asked, SECOND_NS, 1, false).unwrap();
            let started = Instant::now();
            let first = start(&gcra);
            (first, started.elapsed(), start(&gcra))
        })
    };
    std::thread::sleep(Duration::from_millis(400));
    end_moving(&cluster, &slot_asked, to);
    let (first, took, second) = waiting.join().unwrap();
    assert_eq!((first, second), ((true, false), (false, true)));
    assert!(took >= Duration::from_millis(200), "{took:?}");
    for made in [format!("{{{asked}}}:leases"), format!("{{{asked}}}:tat")] {
        assert_eq!(cluster.cli(to, &["EXISTS", &made]), "1", "{made}");
        let elsewhere = cluster.cli(from, &["EXISTS", &made]);
        assert!(elsewhere.starts_with("MOVED "), "{made}: {elsewhere}");
    }
    assert!(held.release().unwrap());

    // A cluster node named as one server says how to name the cluster.
    let (port, _) = cluster.master_of("{other}:tat");
    let node = cluster.nodes.iter().find(|p| **p != port).unwrap();
    let e = RedisGcra::open(
        &format!("redis://127.0.0.1:{node}"),
        "other",
        SECOND_NS,
        1,
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("redis+cluster://"), "{e}");

    // A key that could not keep its parts in one slot is refused.
    let e = RedisGcra::open(&cluster.url, "", SECOND_NS, 1, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the key \"\" cannot name a limit on a Redis Cluster"),
        "{e}"
    );
    let e = RedisLimit::open(&cluster.url, "}x", 1, Duration::from_secs(1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("the key \"}x\" cannot name a limit"), "{e}");
}

#[test]
fn a_tls_cluster_with_an_acl_user_serves_the_limits() {
    let cluster = Cluster::start(true);
    std::env::set_var("SSL_CERT_FILE", cluster.cert.as_ref().unwrap());
    assert!(
        cluster.url.starts_with("rediss+cluster://app:apppw@"),
        "{}",
        cluster.url
    );
    recuo_redis::ping(&cluster.url, Duration::from_secs(5)).unwrap();
    limits_hold(&cluster.url, "tls");
    let wrong = cluster.url.replace("apppw", "nope");
    let e = recuo_redis::ping(&wrong, Duration::from_secs(5))
        .unwrap_err()
        .to_string();
    assert!(e.contains("127.0.0.1"), "{e}");
    assert!(!e.contains("nope"), "{e}");
}

/// The words of one RESP command (an array of bulk strings), or `None` at the end.
fn read_command(reader: &mut BufReader<TcpStream>) -> Option<Vec<String>> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let count: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut words = Vec::new();
    for _ in 0..count {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut word = vec![0; len + 2];
        reader.read_exact(&mut word).ok()?;
        word.truncate(len);
        words.push(String::from_utf8_lossy(&word).into_owned());
    }
    Some(words)
}

/// A fake Redis on 127.0.0.1 answering each command (its words) with `answer`'s bytes
/// (`None`: no answer ever); its port.
fn fake(answer: impl Fn(&[String], u16) -> Option<Vec<u8>> + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let answer = Arc::clone(&answer);
            std::thread::spawn(move || {
                let mut out = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                while let Some(words) = read_command(&mut reader) {
                    match answer(&words, port) {
                        Some(bytes) => {
                            if out.write_all(&bytes).is_err() {
                                return;
                            }
                        }
                        None => std::thread::sleep(Duration::from_secs(30)),
                    }
                }
            });
        }
    });
    port
}

/// `CLUSTER SLOTS`' answer: every slot on the node at `port`.
fn all_slots_on(port: u16) -> Vec<u8> {
    format!("*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n:{port}\r\n$2\r\nid\r\n")
        .into_bytes()
}

/// A fake cluster node on 127.0.0.1 whose slot map gives it every slot; every other command
/// gets `answer(words, port)` (`None`: no answer ever). Its `redis+cluster://` URL.
fn fake_node(answer: impl Fn(&[String], u16) -> Option<Vec<u8>> + Send + Sync + 'static) -> String {
    let port = fake(move |words, port| {
        if words.first().map(String::as_str) == Some("CLUSTER") {
            Some(all_slots_on(port))
        } else {
            answer(words, port)
        }
    });
    format!("redis+cluster://127.0.0.1:{port}/")
}

#[test]
fn a_master_gone_without_a_word_is_replaced_by_the_next_call() {
    use std::sync::atomic::{AtomicBool, Ordering};
    // The new master: one start reserved, no wait.
    let new_master = fake(|words, port| {
        Some(match words[0].as_str() {
            "CLUSTER" => all_slots_on(port),
            _ => b"*3\r\n:1\r\n:0\r\n:1000000000\r\n".to_vec(),
        })
    });
    // The old master answers the settings' check, then nothing ever again (its machine lost).
    let gone = Arc::new(AtomicBool::new(false));
    let old_master = {
        let gone = Arc::clone(&gone);
        fake(move |words, _| {
            if gone.swap(true, Ordering::SeqCst) {
                return None;
            }
            assert_eq!(words[0], "EVALSHA");
            Some(b"*3\r\n:1000000\r\n:1\r\n:0\r\n".to_vec())
        })
    };
    // The seed: the old master serves every slot until it is gone, then the new one.
    let seed = fake(move |_, _| {
        Some(all_slots_on(if gone.load(Ordering::SeqCst) {
            new_master
        } else {
            old_master
        }))
    });
    let url = format!("redis+cluster://127.0.0.1:{seed}/");
    let gcra = RedisGcra::open_with_deadline(
        &url,
        "gone",
        SECOND_NS,
        1,
        false,
        Duration::from_millis(600),
    )
    .unwrap();
    let started = Instant::now();
    let e = gcra.reserve_us(None, 1, 0).unwrap_err().to_string();
    assert!(e.contains(&format!("127.0.0.1:{old_master}")), "{e}");
    assert!(started.elapsed() < Duration::from_millis(1500));
    // The next call reads the slot map first, and asks the node that took the slots.
    let started = Instant::now();
    assert_eq!(
        gcra.reserve_us(None, 1, 0).unwrap(),
        (true, 0, 1_000_000_000)
    );
    assert!(started.elapsed() < Duration::from_millis(1500));
}

fn open_error(url: &str, deadline: Duration) -> (String, Duration) {
    let started = Instant::now();
    let e = RedisGcra::open_with_deadline(url, "fake", SECOND_NS, 1, false, deadline)
        .unwrap_err()
        .to_string();
    (e, started.elapsed())
}

#[test]
fn redirects_without_end_stop_after_eight() {
    let moved = fake_node(|_, port| Some(format!("-MOVED 1 127.0.0.1:{port}\r\n").into_bytes()));
    let (e, took) = open_error(&moved, Duration::from_secs(5));
    let port = moved.trim_end_matches('/').rsplit(':').next().unwrap();
    assert_eq!(
        e,
        format!(
            "shared state: the Redis Cluster redirected the call more than 8 times (the last: \
             MOVED 1 127.0.0.1:{port})"
        )
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    let ask = fake_node(|words, port| {
        Some(if words[0] == "ASKING" {
            b"+OK\r\n".to_vec()
        } else {
            format!("-ASK 1 127.0.0.1:{port}\r\n").into_bytes()
        })
    });
    let (e, _) = open_error(&ask, Duration::from_secs(5));
    let port = ask.trim_end_matches('/').rsplit(':').next().unwrap();
    assert_eq!(
        e,
        format!(
            "shared state: the Redis Cluster redirected the call more than 8 times (the last: \
             ASK 127.0.0.1:{port})"
        )
    );
}

#[test]
fn a_node_that_never_answers_ends_the_call_by_its_deadline() {
    let silent = fake_node(|_, _| None);
    let (e, took) = open_error(&silent, Duration::from_millis(500));
    assert!(
        e.contains("no complete answer within the call's deadline"),
        "{e}"
    );
    assert!(took >= Duration::from_millis(450), "{took:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn a_cluster_that_stays_down_is_asked_again_until_the_deadline() {
    let down = fake_node(|_, _| Some(b"-CLUSTERDOWN The cluster is down\r\n".to_vec()));
    let (e, took) = open_error(&down, Duration::from_millis(600));
    assert!(e.contains("CLUSTERDOWN The cluster is down"), "{e}");
    assert!(
        e.contains("no master answered within the call's deadline"),
        "{e}"
    );
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn a_try_the_deadline_cuts_does_not_hide_what_the_cluster_answered() {
    use std::sync::atomic::{AtomicBool, Ordering};
    // CLUSTERDOWN once, then silence: the last try ends by the deadline, unanswered.
    let answered = AtomicBool::new(false);
    let down_then_silent = fake_node(move |_, _| {
        (!answered.swap(true, Ordering::SeqCst))
            .then(|| b"-CLUSTERDOWN The cluster is down\r\n".to_vec())
    });
    let (e, _) = open_error(&down_then_silent, Duration::from_millis(600));
    assert!(e.contains("CLUSTERDOWN The cluster is down"), "{e}");
    assert!(
        e.contains("no master answered within the call's deadline"),
        "{e}"
    );
}

#[test]
fn a_slot_map_past_the_reply_cap_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(s.try_clone().unwrap());
        read_command(&mut reader);
        let _ = s.write_all(b"*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$5000000\r\n");
        let chunk = vec![b'a'; 64 * 1024];
        for _ in 0..80 {
            if s.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let url = format!("redis+cluster://127.0.0.1:{port}/");
    let (e, took) = open_error(&url, Duration::from_secs(5));
    assert_eq!(
        e,
        format!(
            "shared state: Redis at 127.0.0.1:{port}: a reply longer than 4194304 bytes (refused)"
        )
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_server_that_is_no_cluster_node_is_named() {
    let single = support::Server::start();
    let url = format!(
        "redis+cluster://:{}@127.0.0.1:{}/",
        single.password, single.port
    );
    let e = recuo_redis::ping(&url, Duration::from_secs(5))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cluster support disabled"), "{e}");
    assert!(!e.contains(&single.password), "{e}");
}
