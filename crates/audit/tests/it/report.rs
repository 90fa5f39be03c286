//! query, stats and the OCSF export over a scripted log whose numbers are known.

use crate::common::{approval, decision, outcome, tempdir};
use warden_audit::{Filter, Kind, Log, NO_AGENT, Record, RuleFilter, export_ocsf, parse_micros, query, read, stats};

/// bob: a failed `cargo test`, its retry (which passes, with 2 sandbox denials), a denied
/// `rm -rf /`; eve: an ask granted and run, an ask refused; no agent: an allowed read_file.
fn scripted() -> Vec<Record> {
    let dir = tempdir("report");
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    let mut add = |e: &warden_audit::Entry| log.append(e).unwrap().seq;
    let test = decision("s1", Some("bob"), "cargo test", "allow", None);
    let s = add(&test);
    add(&outcome(&test, s, 1, 100.0, 0));
    let s = add(&test);
    add(&outcome(&test, s, 0, 300.0, 2));
    add(&decision("s1", Some("bob"), "rm -rf /", "deny", Some("dangerous")));
    let push = decision("s1", Some("eve"), "git push", "ask", Some("remote"));
    let s = add(&push);
    add(&approval(&push, s, true, "alice"));
    add(&outcome(&push, s, 0, 200.0, 0));
    let curl = decision("s1", Some("eve"), "curl example.org", "ask", Some("network"));
    let s = add(&curl);
    add(&approval(&curl, s, false, "alice"));
    let mut read_file = decision("s1", None, "", "allow", None);
    read_file.tool = String::from("read_file");
    read_file.input.command = None;
    read_file.input.argv = None;
    read_file.input.path = Some(String::from("/w/src/main.rs"));
    add(&read_file);
    let records = read(&path).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    records
}

fn seqs(found: Vec<&Record>) -> Vec<u64> {
    found.into_iter().map(|r| r.seq).collect()
}

#[test]
fn query_filters_each_criterion() {
    let records = scripted();
    let q = |f: Filter| seqs(query(&records, &f));
    assert_eq!(q(Filter::default()).len(), 11);
    assert_eq!(q(Filter { verdict: Some("deny".into()), ..Filter::default() }), [5, 10]);
    assert_eq!(q(Filter { tier: Some("dangerous".into()), ..Filter::default() }), [5]);
    assert_eq!(q(Filter { agent: Some("eve".into()), ..Filter::default() }), [6, 7, 8, 9, 10]);
    assert_eq!(q(Filter { tool: Some("read_file".into()), ..Filter::default() }), [11]);
    assert_eq!(q(Filter { kind: Some(Kind::Approval), ..Filter::default() }), [7, 10]);
    assert_eq!(q(Filter { text: Some("push".into()), ..Filter::default() }), [6, 7, 8]);
    assert_eq!(q(Filter { text: Some("main.rs".into()), ..Filter::default() }), [11]);
    assert_eq!(q(Filter { session: Some("s2".into()), ..Filter::default() }), Vec::<u64>::new());
    let rule = |text: &str| Filter { rule: Some(RuleFilter::parse(text).unwrap()), ..Filter::default() };
    assert_eq!(q(rule("default.policy:21")), [1, 3, 5, 6, 7, 9, 10, 11]);
    assert_eq!(q(rule("policies/default.policy")).len(), 8);
    assert_eq!(q(rule("default.policy:22")), Vec::<u64>::new());
    let t5 = parse_micros(&records[4].time).unwrap();
    let later: Vec<u64> = records.iter().filter(|r| parse_micros(&r.time).unwrap() >= t5).map(|r| r.seq).collect();
    assert!(later.contains(&5) && !later.contains(&4));
    assert_eq!(q(Filter { since: Some(t5), ..Filter::default() }), later);
    let before: Vec<u64> = (1..=11).filter(|s| !later.contains(s)).collect();
    assert_eq!(q(Filter { until: Some(t5), ..Filter::default() }), before);
    assert_eq!(q(Filter { agent: Some("bob".into()), verdict: Some("allow".into()), ..Filter::default() }), [1, 3]);
}

#[test]
fn stats_count_what_the_script_did() {
    let s = stats(&scripted());
    let o = &s.overall;
    assert_eq!((o.decisions, o.commands, o.allow, o.ask, o.deny), (6, 5, 3, 2, 1));
    assert!((o.manual_intervention_ratio - 2.0 / 6.0).abs() < 1e-9);
    assert_eq!((o.approvals_granted, o.approvals_refused), (1, 1));
    assert_eq!((o.sandbox_denials, o.runs, o.failed_runs, o.retries_after_failure), (2, 3, 1, 1));
    assert_eq!((o.time_ms.count, o.time_ms.mean, o.time_ms.p50, o.time_ms.p95), (3, 200.0, 200.0, 300.0));
    let bob = &s.agents["bob"];
    assert_eq!((bob.decisions, bob.commands, bob.allow, bob.deny, bob.ask), (3, 3, 2, 1, 0));
    assert_eq!((bob.runs, bob.failed_runs, bob.retries_after_failure, bob.sandbox_denials), (2, 1, 1, 2));
    assert_eq!((bob.time_ms.p50, bob.time_ms.p95), (100.0, 300.0));
    let eve = &s.agents["eve"];
    assert_eq!((eve.ask, eve.manual_intervention_ratio, eve.approvals_granted, eve.approvals_refused), (2, 1.0, 1, 1));
    assert_eq!((eve.retries_after_failure, eve.failed_runs), (0, 0));
    let none = &s.agents[NO_AGENT];
    assert_eq!((none.decisions, none.commands, none.allow), (1, 0, 1));
    assert_eq!(s.agents.len(), 3);
}

#[test]
fn ocsf_maps_commands_to_process_activity_and_tools_to_api_activity() {
    let records = scripted();
    let events = export_ocsf(&records);
    assert_eq!(events.len(), records.len());
    let denied = &events[4];
    assert_eq!(denied["class_uid"], 1007);
    assert_eq!(denied["type_uid"], 100701);
    assert_eq!(denied["activity_name"], "Launch");
    assert_eq!(denied["action"], "Denied");
    assert_eq!(denied["disposition"], "Blocked");
    assert_eq!(denied["severity"], "High");
    assert_eq!(denied["process"]["cmd_line"], "rm -rf /");
    assert_eq!(denied["process"]["name"], "rm");
    assert_eq!(denied["metadata"]["product"]["name"], "warden");
    assert_eq!(denied["metadata"]["sequence"], 5);
    assert_eq!(denied["actor"]["user"]["name"], "bob");
    assert_eq!(denied["unmapped"]["warden"]["decision"]["verdict"], "deny");
    assert_eq!(denied["unmapped"]["warden"]["decision"]["rules"][0]["line"], 21);
    assert_eq!(denied["time"], parse_micros(&records[4].time).unwrap() / 1000);
    let failed = &events[1];
    assert_eq!((failed["type_uid"].as_u64(), failed["status"].as_str()), (Some(100702), Some("Failure")));
    assert_eq!(failed["process"]["exit_code"], 1);
    assert_eq!(events[3]["severity"], "Medium");
    assert_eq!(events[5]["status_id"], 99);
    let granted = &events[6];
    assert_eq!((granted["action"].as_str(), granted["unmapped"]["warden"]["decided_by"]["name"].as_str()), (Some("Allowed"), Some("alice")));
    let read_file = &events[10];
    assert_eq!((read_file["class_uid"].as_u64(), read_file["activity_name"].as_str()), (Some(6003), Some("Read")));
    assert_eq!(read_file["api"]["operation"], "read_file");
    assert_eq!(read_file["resources"][0]["name"], "/w/src/main.rs");
    assert!(read_file["actor"]["user"].is_null());
}
