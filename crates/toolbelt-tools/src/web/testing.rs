//! A real HTTP/1.1 server on loopback for the web tools' tests (feature `testing`): each
//! request is answered by a function of it, every request is kept for the test to check,
//! and answers can be slow, endless or cut, as hostile and broken servers are.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`…
    pub method: String,
    /// The path with its query (`/search?q=x`).
    pub target: String,
    /// The headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The host it was sent to, without the port.
    pub fn host(&self) -> String {
        let host = self.header("host").unwrap_or_default();
        host.rsplit_once(':').map_or(host, |(h, _)| h).to_string()
    }

    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The value of query parameter `name`, decoded.
    pub fn query(&self, name: &str) -> Option<String> {
        let query = self.target.split_once('?')?.1;
        url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// How an answer's body is sent.
#[derive(Debug, Clone)]
pub enum Body {
    /// All at once, with `Content-Length`.
    Bytes(Vec<u8>),
    /// `size` bytes of `fill`, in chunks (chunked encoding), for bodies too large to hold.
    Large {
        /// Bytes in all.
        size: usize,
        /// The byte repeated.
        fill: u8,
    },
    /// Nothing after the headers, for `delay`, then the connection closes: a stalled server.
    Stall(Duration),
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Headers besides `Content-Length`/`Transfer-Encoding` and `Connection`.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
    /// Wait this long before answering at all.
    pub delay: Duration,
}

impl Reply {
    /// A 200 answer of `content_type` with `body`.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self::status(200, content_type, body)
    }

    /// An answer with `status`, `content_type` and `body`.
    pub fn status(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: Body::Bytes(body.into()),
            delay: Duration::ZERO,
        }
    }

    /// A redirect with `status` to `location`.
    pub fn redirect(status: u16, location: &str) -> Self {
        Self { headers: vec![("location".into(), location.into())], ..Self::status(status, "text/plain", "moved") }
    }

    /// The same answer with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same answer after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// A server on `127.0.0.1` answering with a function of each request.
pub struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Starts a server answering with `handler`. Call it inside a tokio runtime.
    pub async fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> std::io::Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let kept = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (handler, kept) = (Arc::clone(&handler), Arc::clone(&kept));
                tokio::spawn(async move {
                    let _ = serve(stream, &*handler, &kept).await;
                });
            }
        });
        Ok(Server { addr, requests, task })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// `http://HOST:PORT` followed by `path`: a name mapped to this server.
    pub fn url_at(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.addr.port())
    }

    /// The requests so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

async fn serve(mut stream: TcpStream, handler: &Handler, kept: &Mutex<Vec<Request>>) -> std::io::Result<()> {
    let Some(request) = read_request(&mut stream).await? else { return Ok(()) };
    let reply = handler(&request);
    kept.lock().unwrap_or_else(PoisonError::into_inner).push(request);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut head = format!("HTTP/1.1 {} {}\r\nconnection: close\r\n", reply.status, reason(reply.status));
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    match reply.body {
        Body::Bytes(bytes) => {
            head.push_str(&format!("content-length: {}\r\n\r\n", bytes.len()));
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&bytes).await?;
        }
        Body::Large { size, fill } => {
            head.push_str("transfer-encoding: chunked\r\n\r\n");
            stream.write_all(head.as_bytes()).await?;
            let chunk = vec![fill; 64 * 1024];
            let mut left = size;
            while left > 0 {
                let n = left.min(chunk.len());
                stream.write_all(format!("{n:x}\r\n").as_bytes()).await?;
                stream.write_all(&chunk[..n]).await?;
                stream.write_all(b"\r\n").await?;
                left -= n;
            }
            stream.write_all(b"0\r\n\r\n").await?;
        }
        Body::Stall(delay) => {
            head.push_str("content-length: 1000\r\n\r\n");
            stream.write_all(head.as_bytes()).await?;
            tokio::time::sleep(delay).await;
        }
    }
    stream.flush().await?;
    let _ = stream.shutdown().await;
    Ok(())
}

async fn read_request(stream: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split_whitespace();
    let method = first.next().unwrap_or_default().to_string();
    let target = first.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())))
        .collect();
    let length: usize =
        headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(Request { method, target, headers, body }))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
