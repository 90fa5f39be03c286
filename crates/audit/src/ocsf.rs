//! Export to OCSF (Open Cybersecurity Schema Framework, 1.3) JSON, for the SIEMs security
//! teams already run.
//!
//! Which class: a command (`tool == "exec"`) is a **Process Activity** (class 1007, category 1
//! System Activity): warden is the actor that launches a process on the agent's behalf, and the
//! class carries exactly what a SIEM keys on for that (`process.cmd_line`, `working_directory`,
//! `exit_code`) plus the security-control fields (`action_id`, `disposition_id`) for allowed or
//! blocked. Its decision and approval records are activity 1 Launch (a request to launch);
//! an outcome that ran is activity 2 Terminate (the process exited), one that did not is a
//! Launch that failed. Any other tool call (`read_file`, an MCP tool) is no process: it is an
//! **API Activity** (class 6003, category 6 Application Activity), with the tool as
//! `api.operation`, a path as a `resources` entry, and the CRUD activity the tool name implies
//! (read, write/edit/create -> update, delete; else Other). Reload and session records are API
//! Activity Other (`warden.reload`, `warden.session`).
//!
//! Everything warden-specific (verdict, tier, deciding rules, who decided, policy hash, the
//! chain's seq/prev/hash, denials, the network client) is kept whole under `unmapped.warden`;
//! an API Activity also names the network client as its `src_endpoint` (`ip`, `port`).

use crate::record::{Kind, Record};
use crate::time::parse_micros;
use serde_json::{Value, json};

const OCSF_VERSION: &str = "1.3.0";

/// One OCSF event per record, in log order.
pub fn export_ocsf(records: &[Record]) -> Vec<Value> {
    records.iter().map(event).collect()
}

fn event(r: &Record) -> Value {
    let e = &r.entry;
    let verdict = e.decision.as_ref().map(|d| d.verdict.as_str());
    let (class_uid, class_name, category_uid, category_name) = if e.tool == "exec" && matches!(e.kind, Kind::Decision | Kind::Approval | Kind::Outcome) {
        (1007, "Process Activity", 1, "System Activity")
    } else {
        (6003, "API Activity", 6, "Application Activity")
    };
    let ran = e.outcome.as_ref().map(|o| o.ran);
    let (activity_id, activity_name) = activity(r, class_uid, ran);
    let failed = e.outcome.as_ref().is_some_and(|o| !o.ran || o.exit_code.is_some_and(|c| c != 0) || o.signal.is_some() || o.timed_out);
    let (status_id, status) = match (e.kind, verdict) {
        (Kind::Outcome, _) if failed => (2, "Failure"),
        (Kind::Outcome, _) => (1, "Success"),
        (_, Some("allow")) | (Kind::Reload | Kind::Session, _) => (1, "Success"),
        (_, Some("deny")) => (2, "Failure"),
        _ => (99, "Pending approval"),
    };
    let denials = e.outcome.as_ref().map_or(0, |o| o.denials.len());
    let dangerous = e.decision.as_ref().is_some_and(|d| d.tier.as_deref() == Some("dangerous"));
    let (severity_id, severity) = match verdict {
        Some("deny") if dangerous => (4, "High"),
        Some("deny") => (3, "Medium"),
        _ if denials > 0 => (3, "Medium"),
        Some("ask") => (2, "Low"),
        _ if failed => (2, "Low"),
        _ => (1, "Informational"),
    };
    let mut ev = json!({
        "class_uid": class_uid,
        "class_name": class_name,
        "category_uid": category_uid,
        "category_name": category_name,
        "activity_id": activity_id,
        "activity_name": activity_name,
        "type_uid": class_uid * 100 + activity_id,
        "time": parse_micros(&r.time).map_or(0, |m| m.div_euclid(1000)),
        "severity_id": severity_id,
        "severity": severity,
        "status_id": status_id,
        "status": status,
        "message": message(r),
        "metadata": {
            "version": OCSF_VERSION,
            "product": {"name": "warden", "vendor_name": "warden", "version": env!("CARGO_PKG_VERSION")},
            "log_name": "audit",
            "uid": r.hash,
            "sequence": r.seq,
            "correlation_uid": e.session,
        },
        "actor": {
            "app_name": "warden",
            "user": e.agent.as_ref().map(|a| json!({"name": a, "uid": a, "type_id": 99, "type": "AI agent"})),
            "session": {"uid": e.session},
        },
        "unmapped": {"warden": warden(r)},
    });
    if let Some(o) = ev.as_object_mut() {
        if let Some(v) = verdict.and_then(|v| match v {
            "allow" => Some((1, "Allowed", 1, "Allowed")),
            "deny" => Some((2, "Denied", 2, "Blocked")),
            _ => None,
        }) {
            o.insert("action_id".into(), json!(v.0));
            o.insert("action".into(), json!(v.1));
            o.insert("disposition_id".into(), json!(v.2));
            o.insert("disposition".into(), json!(v.3));
        }
        if let Some(refused) = e.outcome.as_ref().and_then(|o| o.refused.as_ref()) {
            o.insert("status_detail".into(), json!(refused));
        }
        if class_uid == 1007 {
            o.insert("process".into(), process(r));
        } else {
            o.insert("api".into(), json!({"operation": api_operation(r)}));
            if let Some(addr) = e.client.as_ref().and_then(|c| c.addr.parse::<std::net::SocketAddr>().ok()) {
                o.insert("src_endpoint".into(), json!({"ip": addr.ip().to_string(), "port": addr.port()}));
            }
            if let Some(path) = &e.input.path {
                o.insert("resources".into(), json!([{"name": path, "type": "file"}]));
            }
        }
    }
    ev
}

fn activity(r: &Record, class_uid: u32, ran: Option<bool>) -> (u32, &'static str) {
    if class_uid == 1007 {
        return match (r.entry.kind, ran) {
            (Kind::Outcome, Some(true)) => (2, "Terminate"),
            _ => (1, "Launch"),
        };
    }
    if matches!(r.entry.kind, Kind::Reload | Kind::Session) {
        return (99, "Other");
    }
    let tool = r.entry.tool.to_ascii_lowercase();
    if tool.contains("delete") || tool.contains("remove") {
        (4, "Delete")
    } else if tool.contains("write") || tool.contains("edit") || tool.contains("create") {
        (3, "Update")
    } else if tool.contains("read") || tool.contains("list") || tool.contains("search") {
        (2, "Read")
    } else {
        (99, "Other")
    }
}

fn api_operation(r: &Record) -> String {
    match r.entry.kind {
        Kind::Reload => String::from("warden.reload"),
        Kind::Session => String::from("warden.session"),
        _ => r.entry.tool.clone(),
    }
}

fn process(r: &Record) -> Value {
    let input = &r.entry.input;
    let name = input.argv.as_ref().and_then(|a| a.first()).cloned();
    let mut p = json!({
        "cmd_line": input.command.clone().or_else(|| input.argv.as_ref().map(|a| a.join(" "))),
        "name": name,
        "working_directory": input.cwd,
    });
    if let (Some(o), Some(obj)) = (&r.entry.outcome, p.as_object_mut()) {
        obj.insert("exit_code".into(), json!(o.exit_code));
    }
    p
}

fn message(r: &Record) -> String {
    let e = &r.entry;
    let what = e.input.command.as_deref().or(e.input.path.as_deref()).unwrap_or(&e.tool);
    match (&e.decision, &e.outcome) {
        (Some(d), _) => format!("{} {}: {what} ({})", e.kind.as_str(), d.verdict, d.reason),
        (None, Some(o)) if o.ran => format!("outcome: {what} exited {}", o.exit_code.map_or_else(|| String::from("-"), |c| c.to_string())),
        (None, Some(o)) => format!("outcome: {what} did not run: {}", o.refused.as_deref().unwrap_or("-")),
        (None, None) => format!("{}: {}", e.kind.as_str(), e.note.as_deref().unwrap_or(what)),
    }
}

fn warden(r: &Record) -> Value {
    let e = &r.entry;
    json!({
        "seq": r.seq,
        "prev": r.prev,
        "hash": r.hash,
        "kind": e.kind,
        "agent": e.agent,
        "parents": e.parents,
        "client": e.client,
        "tool": e.tool,
        "input": e.input,
        "decision": e.decision,
        "decided_by": e.decided_by,
        "policy_hash": e.policy_hash,
        "outcome": e.outcome,
        "refers_to": e.refers_to,
        "note": e.note,
    })
}
