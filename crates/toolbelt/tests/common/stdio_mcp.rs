//! A minimal MCP client over a server's stdio for the binary tests: JSON-RPC lines written,
//! every line read on a thread so notifications can be waited for with a deadline.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running server and an initialized session with it; killed when dropped.
pub struct StdioMcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    next: u64,
}

impl StdioMcp {
    /// Starts `cmd` (a `toolbelt … mcp`) and initializes a session (protocol 2025-06-18).
    pub fn start(mut cmd: Command) -> StdioMcp {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if let Ok(message) = serde_json::from_str::<Value>(&line)
                    && tx.send(message).is_err()
                {
                    return;
                }
            }
        });
        let mut mcp = StdioMcp { child, stdin: Some(stdin), lines, next: 1 };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        writeln!(mcp.input(), "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        mcp
    }

    fn input(&mut self) -> &mut ChildStdin {
        self.stdin.as_mut().expect("the session is open")
    }

    /// Sends a request and waits (at most 30 s) for its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_seeing(method, params).0
    }

    /// Sends a request and waits (at most 30 s) for its answer; also the other messages that
    /// came meanwhile (notifications).
    pub fn request_seeing(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.next;
        self.next += 1;
        writeln!(self.input(), "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        self.input().flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        loop {
            let message =
                self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("an answer");
            if message["id"] == id {
                return (message, seen);
            }
            seen.push(message);
        }
    }

    /// Ends the session as a client that goes away does (its stdin closed) and waits (at
    /// most 20 s) for the server to exit; whether it exited 0.
    pub fn finish(mut self) -> bool {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (at most 20 s) for a notification `method`.
    pub fn notification(&mut self, method: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(message) if message["method"] == method => return,
                Ok(_) => {}
                Err(_) => panic!("no {method}"),
            }
        }
    }

    /// The names `tools/list` gives.
    pub fn tools(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({}));
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    }

    /// `tools/list`'s entry for `name`.
    pub fn tool(&mut self, name: &str) -> Value {
        let listed = self.request("tools/list", json!({}));
        listed["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned().unwrap_or(Value::Null)
    }

    /// Calls a tool; the whole answer.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }
}

impl Drop for StdioMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
