//! `toolbelt mcp --http` on a free loopback port, for the tests that speak to it over HTTP.
//! Include it beside `hermetic.rs`, which it uses.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The server, killed on drop.
pub struct HttpServer {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl HttpServer {
    /// Starts it in `root`, its home in `root/home`.
    pub fn start(root: &Path) -> HttpServer {
        Self::start_with(root, &[])
    }

    /// [`HttpServer::start`] with more arguments to `toolbelt mcp`.
    pub fn start_with(root: &Path, args: &[&str]) -> HttpServer {
        Self::start_env(root, args, &[])
    }

    /// [`HttpServer::start_with`], with more variables in its environment.
    pub fn start_env(root: &Path, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("toolbelt"));
        cmd.current_dir(root);
        super::hermetic::isolate(&mut cmd, &root.join("home")).envs(env.iter().copied());
        Self::spawn(cmd, args)
    }

    /// `cmd` (a `toolbelt` set up as the test wants it) serving `mcp --http` on a free port,
    /// with `args` after.
    pub fn spawn(mut cmd: Command, args: &[&str]) -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = cmd
            .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        HttpServer { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl HttpServer {
    /// Sends SIGTERM and waits for the server to drain and exit; whether it exited 0.
    pub fn terminate(mut self) -> bool {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::SIGTERM).unwrap();
        self.child.wait().unwrap().success()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
