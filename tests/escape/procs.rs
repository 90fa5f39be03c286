//! Processes and listeners the test starts outside the sandbox, and the scan for survivors.

use std::fs;
use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::check::contains;

/// A `sleep` the test starts, with a secret in its environment and its command line.
pub struct Victim {
    child: Child,
}

impl Victim {
    /// Starts `sleep 1000` named `argv0`, with `WARDEN_VICTIM_SECRET=secret` in its environment.
    pub fn start(argv0: &str, secret: &str) -> Result<Victim, String> {
        let child = Command::new("bash")
            .arg("-c")
            .arg("exec -a \"$0\" sleep 1000")
            .arg(argv0)
            .env("WARDEN_VICTIM_SECRET", secret)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start victim: {e}"))?;
        let victim = Victim { child };
        // Wait until bash has exec'd sleep (the name shows in /proc).
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let cmdline = fs::read(format!("/proc/{}/cmdline", victim.pid())).unwrap_or_default();
            if contains(&cmdline, argv0.as_bytes()) {
                return Ok(victim);
            }
            thread::sleep(Duration::from_millis(10));
        }
        Err("victim did not start".into())
    }

    /// Its pid on the host.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Fails unless it is still running: not exited, not killed, not stopped, not traced.
    pub fn assert_untouched(&mut self) -> Result<(), String> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(format!("victim {} ended: {status}", self.pid()));
        }
        let status = fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .map_err(|e| format!("victim status: {e}"))?;
        for line in status.lines() {
            if let Some(state) = line.strip_prefix("State:") {
                let state = state.trim();
                if !state.starts_with('S') && !state.starts_with('R') {
                    return Err(format!("victim {} is in state {state}", self.pid()));
                }
            }
            if let Some(tracer) = line.strip_prefix("TracerPid:")
                && tracer.trim() != "0"
            {
                return Err(format!(
                    "victim {} is traced by {}",
                    self.pid(),
                    tracer.trim()
                ));
            }
        }
        Ok(())
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP listener on 127.0.0.1 that must never see a connection.
pub struct TcpProbe {
    listener: TcpListener,
    /// Its port.
    pub port: u16,
}

impl TcpProbe {
    /// Listens on an ephemeral port of 127.0.0.1.
    pub fn start() -> Result<TcpProbe, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("tcp listen: {e}"))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        Ok(TcpProbe { listener, port })
    }

    /// Fails if anything connected.
    pub fn assert_silent(&self) -> Result<(), String> {
        match self.listener.accept() {
            Ok((_, peer)) => Err(format!(
                "the host listener on port {} got a connection from {peer}",
                self.port
            )),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(format!("accept: {e}")),
        }
    }
}

/// A UDP socket on 127.0.0.1 that must never receive a datagram.
pub struct UdpProbe {
    socket: UdpSocket,
    /// Its port.
    pub port: u16,
}

impl UdpProbe {
    /// Binds an ephemeral port of 127.0.0.1.
    pub fn start() -> Result<UdpProbe, String> {
        let socket = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("udp bind: {e}"))?;
        socket.set_nonblocking(true).map_err(|e| e.to_string())?;
        let port = socket.local_addr().map_err(|e| e.to_string())?.port();
        Ok(UdpProbe { socket, port })
    }

    /// Fails if a datagram arrived.
    pub fn assert_silent(&self) -> Result<(), String> {
        let mut buf = [0u8; 512];
        match self.socket.recv_from(&mut buf) {
            Ok((n, peer)) => Err(format!("the host UDP socket got {n} bytes from {peer}")),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(format!("recv: {e}")),
        }
    }
}

/// A unix stream listener, at a path or an abstract name, that must never see a connection.
pub struct UnixProbe {
    listener: UnixListener,
    what: String,
}

impl UnixProbe {
    /// Listens at `path` (mode 0777 so only the sandbox can refuse the connection).
    pub fn at_path(path: &Path) -> Result<UnixProbe, String> {
        let listener = UnixListener::bind(path).map_err(|e| format!("unix listen: {e}"))?;
        fs::set_permissions(path, fs::Permissions::from_mode(0o777)).map_err(|e| e.to_string())?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        Ok(UnixProbe {
            listener,
            what: path.display().to_string(),
        })
    }

    /// Listens at the abstract name `name`.
    pub fn abstract_name(name: &str) -> Result<UnixProbe, String> {
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).map_err(|e| e.to_string())?;
        let listener =
            UnixListener::bind_addr(&addr).map_err(|e| format!("abstract listen: {e}"))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        Ok(UnixProbe {
            listener,
            what: format!("@{name}"),
        })
    }

    /// Fails if anything connected.
    pub fn assert_silent(&self) -> Result<(), String> {
        match self.listener.accept() {
            Ok(_) => Err(format!(
                "the host unix listener {} got a connection",
                self.what
            )),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(format!("accept: {e}")),
        }
    }
}

/// Keeps trying to connect to 127.0.0.1:`port` from the host while the sandbox runs.
pub struct Knocker {
    stop: Arc<AtomicBool>,
    hits: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
    port: u16,
}

impl Knocker {
    /// Starts knocking every 50 ms.
    pub fn start(port: u16) -> Knocker {
        let stop = Arc::new(AtomicBool::new(false));
        let hits = Arc::new(AtomicUsize::new(0));
        let (s, h) = (stop.clone(), hits.clone());
        let thread = thread::spawn(move || {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
            // Bounded: at most 20 s of knocking.
            for _ in 0..400 {
                if s.load(Ordering::Relaxed) {
                    break;
                }
                if TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok() {
                    h.fetch_add(1, Ordering::Relaxed);
                }
                thread::sleep(Duration::from_millis(50));
            }
        });
        Knocker {
            stop,
            hits,
            thread: Some(thread),
            port,
        }
    }

    /// Stops knocking; fails if any knock was answered.
    pub fn assert_unanswered(&mut self) -> Result<(), String> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        match self.hits.load(Ordering::Relaxed) {
            0 => Ok(()),
            n => Err(format!(
                "{n} host connections to 127.0.0.1:{} were accepted: the sandbox listened on the host",
                self.port
            )),
        }
    }
}

impl Drop for Knocker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A free TCP port on 127.0.0.1 (free when asked).
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// Host pids whose command line mentions `marker` (the case's folder), other than ours.
pub fn marked(marker: &Path) -> Vec<(u32, String)> {
    let needle = marker.as_os_str().as_encoded_bytes();
    let me = std::process::id();
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if contains(&cmdline, needle) {
            let state = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // Zombies are already dead; their parent reaps them.
            let zombie = state
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            if !zombie {
                let shown: String = String::from_utf8_lossy(&cmdline)
                    .replace('\0', " ")
                    .chars()
                    .take(120)
                    .collect();
                out.push((pid, shown));
            }
        }
    }
    out
}

/// Waits up to `grace` for every marked process to end; returns the ones that did not, after
/// killing them (they descend from processes this test started).
pub fn survivors(marker: &Path, grace: Duration) -> Vec<(u32, String)> {
    let deadline = Instant::now() + grace;
    loop {
        let left = marked(marker);
        if left.is_empty() {
            return left;
        }
        if Instant::now() >= deadline {
            for (pid, _) in &left {
                let _ = Command::new("kill")
                    .arg("-KILL")
                    .arg(pid.to_string())
                    .status();
            }
            return left;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Samples the number of marked processes while the sandbox runs; keeps the peak.
pub struct Census {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl Census {
    /// Starts sampling every 25 ms (for at most 30 s).
    pub fn start(marker: PathBuf) -> Census {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicUsize::new(0));
        let (s, p) = (stop.clone(), peak.clone());
        let thread = thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !s.load(Ordering::Relaxed) && Instant::now() < deadline {
                p.fetch_max(marked(&marker).len(), Ordering::Relaxed);
                thread::sleep(Duration::from_millis(25));
            }
        });
        Census {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    /// Stops sampling and returns the peak.
    pub fn peak(&mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for Census {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
