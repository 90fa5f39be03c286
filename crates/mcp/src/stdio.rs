//! The stdio transport: one JSON-RPC message per line, answered on stdout.
//!
//! Unlike a plain line codec, every line that is not a message gets a JSON-RPC error and the
//! server goes on reading: a line over the size cap (`-32600`, discarded without being held in
//! memory), text that is not JSON (`-32700`), JSON that is not a JSON-RPC message (`-32600`,
//! with the request's `id` when it has one; `null` when the id is not a string or an integer),
//! a known method with params it does not take (`-32602`). A notification before `initialize`
//! is ignored.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// The largest message line, in bytes.
pub const LINE_CAP: usize = 16 << 20;

/// A line-delimited JSON-RPC transport over a reader and a writer.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    discarding: bool,
    cap: usize,
    write: Arc<Mutex<W>>,
    /// Fired at the end of input.
    ended: Option<CancellationToken>,
    /// Whether an `initialize` request has been read (rmcp ends the session on a
    /// notification before it, so those are dropped until then).
    initialize_read: bool,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    /// A transport reading `read` and writing `write`, with lines capped at `cap` bytes.
    pub fn new(read: R, write: W, cap: usize) -> Self {
        LineTransport { read: BufReader::new(read), line: Vec::new(), discarding: false, cap, write: Arc::new(Mutex::new(write)), ended: None, initialize_read: false }
    }

    /// Fires `token` when the input ends (the client hung up).
    #[must_use]
    pub fn on_end(mut self, token: CancellationToken) -> Self {
        self.ended = Some(token);
        self
    }
}

/// What reading one line gave.
enum Read {
    Line,
    TooLong,
    End,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    /// Reads one line into `self.line`, never holding more than `cap` bytes. Cancel-safe: a
    /// partial line stays in `self.line` for the next call.
    async fn read_line(&mut self) -> Read {
        loop {
            let Ok(buf) = self.read.fill_buf().await else { return Read::End };
            if buf.is_empty() {
                return Read::End;
            }
            let newline = buf.iter().position(|b| *b == b'\n');
            let take = newline.map_or(buf.len(), |i| i + 1);
            let mut verdict = None;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
            } else if self.line.len() + take > self.cap {
                self.line.clear();
                self.discarding = newline.is_none();
                verdict = Some(Read::TooLong);
            } else {
                self.line.extend_from_slice(buf.get(..take).unwrap_or_default());
                if newline.is_some() {
                    verdict = Some(Read::Line);
                }
            }
            self.read.consume(take);
            if let Some(v) = verdict {
                return v;
            }
        }
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<RoleServer>) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let bytes = serde_json::to_vec(&item).map_err(std::io::Error::other);
        write_line(Arc::clone(&self.write), bytes)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Read::End => {
                    if let Some(t) = &self.ended {
                        t.cancel();
                    }
                    return None;
                }
                Read::TooLong => {
                    let message = format!("the message is longer than the cap of {} bytes; it was discarded", self.cap);
                    self.reply(error_line(None, -32600, &message));
                    continue;
                }
                Read::Line => {}
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match classify(text) {
                // MCP lifecycle: nothing is to be notified before initialisation; rmcp would
                // end the session on it, so it is ignored.
                Ok(JsonRpcMessage::Notification(_)) if !self.initialize_read => {}
                Ok(message) => {
                    if let JsonRpcMessage::Request(r) = &message
                        && matches!(r.request, ClientRequest::InitializeRequest(_))
                    {
                        self.initialize_read = true;
                    }
                    return Some(message);
                }
                Err(Some(reply)) => self.reply(reply),
                Err(None) => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.flush().await
    }
}

impl<R, W: AsyncWrite + Unpin + Send + 'static> LineTransport<R, W> {
    /// Sends an error line without holding up reading.
    fn reply(&self, line: Vec<u8>) {
        let write = Arc::clone(&self.write);
        tokio::spawn(write_line(write, Ok(line)));
    }
}

async fn write_line<W: AsyncWrite + Unpin>(write: Arc<Mutex<W>>, bytes: Result<Vec<u8>, std::io::Error>) -> Result<(), std::io::Error> {
    let mut bytes = bytes?;
    bytes.push(b'\n');
    let mut w = write.lock().await;
    w.write_all(&bytes).await?;
    w.flush().await
}

/// A message, or the error line to answer with (`None`: a notification that is not
/// understood, which gets no answer).
fn classify(text: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Option<Vec<u8>>> {
    let value: serde_json::Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => return Err(Some(error_line(None, -32700, &format!("parse error: the line is not JSON: {e}")))),
    };
    let id = value.get("id").filter(|id| id.is_string() || id.is_i64() || id.is_u64()).cloned();
    let method = value.get("method").and_then(serde_json::Value::as_str);
    // MCP: a request's id is a string or an integer, never null.
    if let (Some(method), Some(bad), None) = (method, value.get("id"), &id) {
        let message = format!("invalid request: the id of `{method}` must be a string or an integer, not `{bad}`");
        return Err(Some(error_line(None, -32600, &message)));
    }
    if let Some(problem) = bad_tool_call(&value) {
        return Err(Some(error_line(id, -32602, &format!("invalid params for tools/call: {problem}"))));
    }
    if let (Some(method), Some(_)) = (method, &id)
        && let Some(problem) = bad_params(method, value.get("params"))
    {
        return Err(Some(error_line(id, -32602, &format!("invalid params for {method}: {problem}"))));
    }
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(message) => Ok(message),
        Err(_) if id.is_none() && value.get("method").is_some_and(serde_json::Value::is_string) => Err(None),
        Err(e) => Err(Some(error_line(id, -32600, &format!("invalid request: not a JSON-RPC 2.0 message this server understands: {e}")))),
    }
}

/// What is wrong with a `tools/call` request's params (a shape rmcp would take for an
/// unknown method), if anything.
fn bad_tool_call(value: &serde_json::Value) -> Option<&'static str> {
    if value.get("method").and_then(serde_json::Value::as_str) != Some("tools/call") {
        return None;
    }
    let Some(params) = value.get("params").and_then(serde_json::Value::as_object) else {
        return Some("`params` must be an object");
    };
    if !params.get("name").is_some_and(serde_json::Value::is_string) {
        return Some("`name` must be a string");
    }
    match params.get("arguments") {
        None | Some(serde_json::Value::Object(_) | serde_json::Value::Null) => None,
        Some(_) => Some("`arguments` must be an object"),
    }
}

/// What is wrong with the params of a request whose method rmcp knows but whose params it would
/// not take (it would answer as if the method were unknown, or, for `initialize`, about
/// `_meta`), if anything.
#[allow(deprecated, reason = "logging/setLevel is served: reload reports go out as logging notifications")]
fn bad_params(method: &str, params: Option<&serde_json::Value>) -> Option<String> {
    let params = params.cloned().unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new()));
    let problem = match method {
        "initialize" => serde_json::from_value::<rmcp::model::InitializeRequestParams>(params).err(),
        "logging/setLevel" => serde_json::from_value::<rmcp::model::SetLevelRequestParams>(params).err(),
        _ => None,
    };
    problem.map(|e| e.to_string())
}

/// A JSON-RPC error response line (without its newline).
fn error_line(id: Option<serde_json::Value>, code: i64, message: &str) -> Vec<u8> {
    let value = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(serde_json::Value::Null),
        "error": {"code": code, "message": message}
    });
    serde_json::to_vec(&value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_get_the_right_error_codes() {
        let code = |text: &str| -> Option<(i64, serde_json::Value)> {
            match classify(text.as_bytes()) {
                Ok(_) => None,
                Err(Some(line)) => {
                    let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
                    Some((v["error"]["code"].as_i64().unwrap(), v["id"].clone()))
                }
                Err(None) => Some((0, serde_json::Value::Null)),
            }
        };
        assert_eq!(code("{not json"), Some((-32700, serde_json::Value::Null)));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#), Some((-32602, 7.into())));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#), Some((-32602, 8.into())));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":"a"}"#), Some((-32600, "a".into())));
        assert_eq!(code(r#"[1,2]"#), Some((-32600, serde_json::Value::Null)));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        // An id that is not a string or an integer: invalid request, answered with id null.
        for id in [r#"{"a":1}"#, "null", "true", "[1]", "1.5"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(code(&line), Some((-32600, serde_json::Value::Null)), "{id}");
        }
        // Known methods with params of the wrong shape: invalid params, saying what is wrong.
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"loud"}}"#), Some((-32602, 2.into())));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel"}"#), Some((-32602, 3.into())));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"debug"}}"#), None);
        let Err(Some(line)) = classify(br#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#) else {
            panic!("initialize without protocolVersion was taken")
        };
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["error"]["code"], -32602);
        assert!(v["error"]["message"].as_str().unwrap().contains("missing field `protocolVersion`"), "{v}");
    }
}
