//! Reaching host listeners the test starts on 127.0.0.1 and on unix sockets. The policy grants
//! no network; every listener must see nothing.

use super::{Attack, Case, case, py, reached};
use crate::procs::{Knocker, TcpProbe, UdpProbe, UnixProbe, free_port};

pub fn cases() -> Vec<Case> {
    vec![
        case("tcp-connect-devtcp", |_| {
            let probe = TcpProbe::start()?;
            let port = probe.port.to_string();
            let script = "bash -c 'echo pwned > /dev/tcp/127.0.0.1/PORT'; bash -c 'exec 3<>/dev/tcp/localhost/PORT; echo pwned >&3'"
                .replace("PORT", &port);
            Ok(Attack::new(&script)
                .deny("net.connect", &format!("127.0.0.1:{port}"))
                .deny("net.connect", &format!("localhost:{port}"))
                .deny("syscall", "socket (AF_INET")
                .check(move |_, _| probe.assert_silent()))
        }),
        case("tcp-connect-python", |_| {
            let probe = TcpProbe::start()?;
            let port = probe.port.to_string();
            let code = r#"import socket
for host in ("127.0.0.1", "localhost", "::ffff:127.0.0.1"):
    try:
        s = socket.create_connection((host, PORT), timeout=2); s.sendall(b"pwned"); print("connected", host)
    except OSError as e:
        print("refused", host, e.errno)
print("END")"#
                .replace("PORT", &port);
            Ok(Attack::new(&py(&code))
                .deny("net.connect", &format!(":{port}"))
                .deny("syscall", "socket (AF_INET")
                .check(move |_, out| reached(out, "END").and(probe.assert_silent())))
        }),
        case("udp-send", |_| {
            let probe = UdpProbe::start()?;
            let port = probe.port.to_string();
            let code = r#"import socket
for i in range(3):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"pwned", ("127.0.0.1", PORT)); print("sent")
    except OSError as e:
        print("refused", e.errno)
print("END")"#
                .replace("PORT", &port);
            let script = format!(
                "{}; bash -c 'echo pwned > /dev/udp/127.0.0.1/{port}'",
                py(&code)
            );
            Ok(Attack::new(&script)
                .deny("net.connect", &format!(":{port}"))
                .deny("net.send", &format!(":{port}"))
                .deny("syscall", "socket (AF_INET")
                .settle(200)
                .check(move |_, out| reached(out, "END").and(probe.assert_silent())))
        }),
        case("tcp-bind-host-port", |_| {
            let port = free_port()?;
            let mut knocker = Knocker::start(port);
            let code = r#"import socket, time
try:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", PORT)); s.listen(8); s.settimeout(0.2)
    print("listening")
    end = time.time() + 2
    while time.time() < end:
        try:
            c, _ = s.accept(); print("accepted")
        except OSError:
            pass
except OSError as e:
    print("refused", e.errno)
print("END")"#
                .replace("PORT", &port.to_string());
            Ok(Attack::new(&py(&code))
                .deny("net.bind", &format!(":{port}"))
                .deny("syscall", "socket (AF_INET")
                .check(move |_, out| reached(out, "END").and(knocker.assert_unanswered())))
        }),
        case("unix-abstract-connect", |fx| {
            let name = format!("warden-escape-{}", fx.id);
            let probe = UnixProbe::abstract_name(&name)?;
            let code = r#"import socket
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect("\0NAME"); s.sendall(b"pwned"); print("connected")
except OSError as e:
    print("refused", e.errno)
print("END")"#
                .replace("NAME", &name);
            Ok(Attack::new(&py(&code))
                .deny("net.connect", &name)
                .check(move |_, out| reached(out, "END").and(probe.assert_silent())))
        }),
        case("unix-path-connect", |fx| {
            let path = fx.outside.join("agent.sock");
            let probe = UnixProbe::at_path(&path)?;
            Ok(Attack::new(&format!(
                "{}; ln -s {{out}}/agent.sock {{ws}}/a.sock; {}",
                py(&unix_connect("{out}/agent.sock")),
                py(&unix_connect("{ws}/a.sock"))
            ))
            .deny("net.connect", "{out}/agent.sock")
            .deny("net.connect", "{ws}/a.sock")
            .deny("fs.write", "{out}/agent.sock")
            .deny("fs.read", "{out}/agent.sock")
            .check(move |_, out| reached(out, "END").and(probe.assert_silent())))
        }),
        case("unix-path-connect-in-workspace", |fx| {
            // A host process listening on a socket file inside the workspace (git's fsmonitor
            // daemon, a language server): shown by the mount, and Landlock ABI 7 cannot refuse
            // the connect.
            let probe = UnixProbe::at_path(&fx.ws.join("host.sock"))?;
            Ok(Attack::new(&py(&unix_connect("{ws}/host.sock")))
                .deny("net.connect", "{ws}/host.sock")
                .check(move |_, out| reached(out, "END").and(probe.assert_silent())))
        }),
    ]
}

/// Python that connects to the unix socket file `path` and sends to it, printing `connected`
/// or `refused ERRNO`, then `END`.
fn unix_connect(path: &str) -> String {
    format!(
        r#"import socket
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect("{path}"); s.sendall(b"pwned"); print("connected")
except OSError as e:
    print("refused", e.errno)
print("END")"#
    )
}
