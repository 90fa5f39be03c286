//! Selecting records: by verdict, tier, agent, tool, deciding rule, kind, session, client,
//! time range and text.

use crate::record::{ClientRec, Kind, Record};
use crate::time::parse_micros;

/// What to select. Every criterion given must hold (an empty filter selects everything).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// The decision's verdict (`allow`, `ask`, `deny`); records without a decision never match.
    pub verdict: Option<String>,
    /// The decision's tier.
    pub tier: Option<String>,
    /// The agent identity.
    pub agent: Option<String>,
    /// The tool (`exec`, `read_file`, an MCP tool).
    pub tool: Option<String>,
    /// A deciding rule.
    pub rule: Option<RuleFilter>,
    /// The record kind.
    pub kind: Option<Kind>,
    /// The session.
    pub session: Option<String>,
    /// The network client the request came from; records without one never match.
    pub client: Option<ClientFilter>,
    /// Records at or after this time (microseconds since the epoch).
    pub since: Option<i64>,
    /// Records before this time (microseconds since the epoch).
    pub until: Option<i64>,
    /// A substring of the command, argv (joined by spaces), path, reason or note.
    pub text: Option<String>,
}

/// A deciding rule to look for: a policy file (the whole name or its trailing components),
/// optionally a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFilter {
    /// `policies/default.policy`, or just `default.policy`.
    pub file: String,
    /// The rule's line.
    pub line: Option<u32>,
}

impl RuleFilter {
    /// Parses `FILE` or `FILE:LINE`.
    ///
    /// # Errors
    ///
    /// The text is empty.
    pub fn parse(text: &str) -> Result<RuleFilter, String> {
        let (file, line) = match text.rsplit_once(':') {
            Some((file, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => {
                (file, Some(line.parse::<u32>().map_err(|_| format!("`{line}` is not a line number"))?))
            }
            _ => (text, None),
        };
        if file.is_empty() {
            return Err(format!("`{text}` names no policy file"));
        }
        Ok(RuleFilter { file: file.to_owned(), line })
    }

    fn matches(&self, file: &str, line: u32) -> bool {
        let same_file = file == self.file
            || file.strip_suffix(self.file.as_str()).is_some_and(|rest| rest.ends_with('/'));
        same_file && self.line.is_none_or(|l| l == line)
    }
}

/// A network client to look for: its address (any port), its address and port, or the uid
/// owning its socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientFilter {
    /// `127.0.0.1`, `::1`: the client's address, whatever its port.
    Ip(std::net::IpAddr),
    /// `127.0.0.1:50312`, `[::1]:50312`: one connection's address.
    Addr(std::net::SocketAddr),
    /// `uid=1000`: the uid owning a loopback client's socket.
    Uid(u32),
}

impl ClientFilter {
    /// Parses `IP`, `IP:PORT` (`[IPv6]:PORT`) or `uid=N`.
    ///
    /// # Errors
    ///
    /// The text is none of these.
    pub fn parse(text: &str) -> Result<ClientFilter, String> {
        if let Some(uid) = text.strip_prefix("uid=") {
            return uid.parse().map(ClientFilter::Uid).map_err(|_| format!("`{uid}` is not a uid"));
        }
        let bare = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(text);
        if let Ok(ip) = bare.parse() {
            return Ok(ClientFilter::Ip(ip));
        }
        text.parse()
            .map(ClientFilter::Addr)
            .map_err(|_| format!("`{text}` is not an address (IP, IP:PORT or [IPv6]:PORT) or uid=N"))
    }

    fn matches(&self, client: &ClientRec) -> bool {
        let addr = client.addr.parse::<std::net::SocketAddr>().ok();
        match self {
            ClientFilter::Ip(ip) => addr.is_some_and(|a| a.ip().to_canonical() == ip.to_canonical()),
            ClientFilter::Addr(want) => addr.is_some_and(|a| a.ip().to_canonical() == want.ip().to_canonical() && a.port() == want.port()),
            ClientFilter::Uid(uid) => client.uid == Some(*uid),
        }
    }
}

/// Parses an RFC 3339 time for `since`/`until`.
///
/// # Errors
///
/// The text is not an RFC 3339 time (or a bare date).
pub fn parse_time(text: &str) -> Result<i64, String> {
    parse_micros(text).ok_or_else(|| format!("`{text}` is not an RFC 3339 time (like 2026-12-03T07:00:00Z)"))
}

/// The records the filter selects, in log order.
pub fn query<'a>(records: &'a [Record], filter: &Filter) -> Vec<&'a Record> {
    records.iter().filter(|r| selects(filter, r)).collect()
}

fn selects(f: &Filter, r: &Record) -> bool {
    let e = &r.entry;
    let decision = e.decision.as_ref();
    let eq = |want: &Option<String>, have: Option<&str>| want.as_deref().is_none_or(|w| have == Some(w));
    if !eq(&f.verdict, decision.map(|d| d.verdict.as_str()))
        || !eq(&f.tier, decision.and_then(|d| d.tier.as_deref()))
        || !eq(&f.agent, e.agent.as_deref())
        || !eq(&f.tool, Some(&e.tool))
        || !eq(&f.session, Some(&e.session))
        || f.kind.is_some_and(|k| k != e.kind)
    {
        return false;
    }
    if let Some(rule) = &f.rule
        && !decision.is_some_and(|d| d.rules.iter().any(|x| rule.matches(&x.file, x.line)))
    {
        return false;
    }
    if let Some(client) = &f.client
        && !e.client.as_ref().is_some_and(|c| client.matches(c))
    {
        return false;
    }
    if f.since.is_some() || f.until.is_some() {
        let Some(t) = parse_micros(&r.time) else { return false };
        if f.since.is_some_and(|s| t < s) || f.until.is_some_and(|u| t >= u) {
            return false;
        }
    }
    match &f.text {
        None => true,
        Some(text) => {
            let argv = e.input.argv.as_ref().map(|a| a.join(" "));
            [e.input.command.as_deref(), argv.as_deref(), e.input.path.as_deref(), decision.map(|d| d.reason.as_str()), e.note.as_deref()]
                .into_iter()
                .flatten()
                .any(|field| field.contains(text.as_str()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_filters_parse_and_match_trailing_components() {
        let r = RuleFilter::parse("default.policy:21").unwrap();
        assert_eq!(r, RuleFilter { file: String::from("default.policy"), line: Some(21) });
        assert!(r.matches("policies/default.policy", 21));
        assert!(!r.matches("policies/default.policy", 22));
        assert!(!r.matches("policies/xdefault.policy", 21));
        assert_eq!(RuleFilter::parse("c:/a.policy").unwrap().line, None);
        assert!(RuleFilter::parse(":3").is_err());
    }

    #[test]
    fn client_filters_match_an_address_a_connection_or_a_uid() {
        let c = |addr: &str, uid| ClientRec { transport: "http".into(), addr: addr.into(), uid, bearer: false };
        let local = c("127.0.0.1:50312", Some(1000));
        let six = c("[::1]:4000", None);
        let remote = c("10.0.0.5:4000", None);
        let f = |t: &str| ClientFilter::parse(t).unwrap();
        assert!(f("127.0.0.1").matches(&local) && !f("127.0.0.1").matches(&remote));
        assert!(f("127.0.0.1:50312").matches(&local) && !f("127.0.0.1:50313").matches(&local));
        assert!(f("::1").matches(&six) && f("[::1]").matches(&six) && f("[::1]:4000").matches(&six));
        assert!(f("uid=1000").matches(&local) && !f("uid=0").matches(&local) && !f("uid=1000").matches(&remote));
        // An IPv4 client of a server listening on IPv6 is listed as ::ffff:a.b.c.d.
        assert!(f("10.0.0.5").matches(&c("[::ffff:10.0.0.5]:4000", None)));
        for bad in ["", "uid=", "uid=x", "host.lan", "1.2.3"] {
            assert!(ClientFilter::parse(bad).is_err(), "{bad}");
        }
    }
}
