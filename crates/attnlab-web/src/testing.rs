//! A minimal blocking HTTP/1.1 client for the tests of the server (here and in the CLI's
//! tests): one request per connection, `Content-Length` bodies only — what `attnlab serve`
//! answers. Not a general client. And [`without_timings`], how the tests compare two reports.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One answer: status code, headers (lower-case names) and body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Headers as (lower-case name, value).
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
}

impl Answer {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON.
    ///
    /// # Panics
    /// When the body is not JSON (these are tests).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends `method path` with `body` to `addr` and reads the whole answer.
///
/// # Errors
/// The connection fails, times out (30 s) or the answer is not HTTP/1.1 with a length.
pub fn request(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> std::io::Result<Answer> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.set_nodelay(true)?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let body = String::from_utf8(raw[split + 4..].to_vec()).map_err(|_| bad("body not UTF-8"))?;
    Ok(Answer {
        status,
        headers,
        body,
    })
}

/// `POST path` with a JSON body.
///
/// # Errors
/// See [`request`].
pub fn post(addr: SocketAddr, path: &str, body: &str) -> std::io::Result<Answer> {
    request(addr, "POST", path, body.as_bytes())
}

/// `GET path`.
///
/// # Errors
/// See [`request`].
pub fn get(addr: SocketAddr, path: &str) -> std::io::Result<Answer> {
    request(addr, "GET", path, b"")
}

/// A JSON body with every `timings` object removed (at any depth), re-serialised compactly: the
/// seconds a run took differ from run to run, everything else in two runs' reports must be
/// identical. A body that is not JSON is returned as it is.
pub fn without_timings(body: &str) -> String {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("timings");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(mut v) => {
            strip(&mut v);
            v.to_string()
        }
        Err(_) => body.to_string(),
    }
}
