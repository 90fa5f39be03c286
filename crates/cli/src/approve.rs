//! The terminal approver: asks the person at the terminal, on stderr, and reads the answer
//! from the terminal itself (`/dev/tty`), so piped input cannot answer for them.

use std::io::{BufRead, BufReader, Read, Write};

use warden_engine::{Answer, Approver, Pending};

/// Asks at the controlling terminal: approve once, approve for this session, or refuse.
#[derive(Debug)]
pub struct Terminal {
    /// Who answers (the login name), recorded with every answer.
    pub user: String,
}

impl Approver for Terminal {
    fn approve(&mut self, p: &Pending<'_>) -> Answer {
        let by = format!("terminal:{}", self.user);
        let refused = |why: String| Answer::Refused { by: by.clone(), why };
        let tty = match std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty") {
            Ok(t) => t,
            Err(e) => return refused(format!("needs approval ({}), and the terminal cannot be opened: {e}", p.decision.reason())),
        };
        let d = p.decision;
        let rule = d.rules().first().map(|r| format!(" [{}:{}]", r.file, r.line)).unwrap_or_default();
        let agent = p.agent.map(|a| format!(" (agent {a})")).unwrap_or_default();
        let mut out = &tty;
        let _ = write!(out, "warden: ask{agent}: {} `{}`\n  {}{rule}\nRun it? [y]es once / [a]lways this session / [N]o: ", p.tool, p.subject, d.reason());
        let _ = out.flush();
        let mut line = String::new();
        let _ = BufReader::new(&tty).take(256).read_line(&mut line);
        match line.trim() {
            "y" | "Y" | "yes" => Answer::Once { by },
            "a" | "A" | "always" => Answer::Session { by },
            _ => refused("refused at the prompt".into()),
        }
    }
}
