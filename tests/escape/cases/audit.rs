//! The audit log: a sandboxed command cannot write, truncate, delete, rename or link it.
//! warden keeps this case's log in `{root}/audit/`, outside every grant; the attack finds it
//! at run time (a literal path would be refused before anything ran). `:` is a special
//! builtin: a failed redirection of it would end the script, so it runs in a subshell.

use super::{Attack, Case, case, reached};

pub fn cases() -> Vec<Case> {
    vec![case("audit-log-tamper", |_| {
        Ok(Attack::hidden(
            "L=$(printf %s {root})/audit/log.jsonl; echo forged >> \"$L\"; (: > \"$L\"); \
             printf '{\"seq\":1}\\n' > \"$L.head\"; mv \"$L\" \"$L.x\"; ln \"$L\" \"$W/link\"; rm -f \"$L\" \"$L.head\"; \
             cat \"$L\" > \"$W/copy\"; echo done",
        )
        .deny("fs.write", "{root}/audit")
        .deny("fs.read", "{root}/audit")
        .check(|fx, out| {
            reached(out, "done")?;
            let log = fx.audit_log();
            if !log.exists() {
                // Only warden keeps a log; the peer has nothing to attack here.
                return Ok(());
            }
            let report = warden_audit::verify(&log).map_err(|e| format!("the log does not verify: {e}"))?;
            if !report.problems.is_empty() {
                return Err(format!("the log was changed: {:?}", report.problems));
            }
            let records = warden_audit::read(&log).map_err(|e| e.to_string())?;
            let first = records.first().ok_or("the log is empty")?;
            if first.seq != 1 || !matches!(first.entry.kind, warden_audit::Kind::Decision) || records.len() < 2 {
                return Err(format!("the log lost records: {} left, first #{}", records.len(), first.seq));
            }
            let text = std::fs::read_to_string(&log).map_err(|e| e.to_string())?;
            // The script itself (with the word) is in the log's decision record: look for the
            // line the attack appends.
            if text.lines().any(|l| l.trim() == "forged") {
                return Err("the attack wrote into the log".into());
            }
            for f in ["link", "copy"] {
                let p = fx.ws.join(f);
                if p.metadata().is_ok_and(|m| m.len() > 0) {
                    return Err(format!("{} holds the log", p.display()));
                }
            }
            Ok(())
        }))
    })]
}
