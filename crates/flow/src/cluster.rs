//! Several processes running one dataflow: connecting them, checking that they agree on
//! what they run, and turning a peer's failure into an error rather than a hang or a
//! panic message.
//!
//! The connections are made here rather than by timely's own cluster set-up, which
//! retries an unreachable peer forever and reports on standard output (where the answers
//! go). Each connection starts with a greeting, before timely reads a byte of it: the
//! sender's process index and [`Greeting::agreement`], a digest of the program, its
//! constants and the caller's flags. Processes that would run different dataflows, or
//! the same one over different ids, refuse each other and stop with a message naming
//! both digests: joining them would give wrong answers or wedge the exchange.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::Hooks;

/// Where this process stands in a cluster of processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// This process's index in `hosts`.
    pub process: usize,
    /// `host:port` of every process, in process order.
    pub hosts: Vec<String>,
    /// How long to wait for every peer to connect.
    pub timeout: Duration,
    /// A digest of everything the processes must share to build one dataflow over ids
    /// that mean the same everywhere: the program, its constants in id order, the flags
    /// that choose what is evaluated. The caller computes it; processes whose digests
    /// differ refuse each other.
    pub digest: u64,
}

/// A process's connections to every peer, made and checked, ready for
/// [`crate::Flow::start`].
pub struct Connection {
    pub(crate) allocators: Vec<AllocatorBuilder>,
    pub(crate) network: Box<dyn std::any::Any + Send>,
    pub(crate) process: usize,
    pub(crate) processes: usize,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("process", &self.process).field("processes", &self.processes).finish()
    }
}

impl Connection {
    /// Connects this process to every peer of `cluster`, for `workers` threads here (the
    /// same number in every process), and checks that all agree on
    /// [`Cluster::digest`] and `workers`.
    pub fn open(cluster: &Cluster, workers: usize) -> Result<Connection, crate::Error> {
        let workers = workers.max(1);
        let agreement = cluster.digest ^ (workers as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let (allocators, network) = connect(cluster, workers, agreement).map_err(crate::Error::Cluster)?;
        Ok(Connection { allocators, network, process: cluster.process, processes: cluster.hosts.len() })
    }
}

/// What a process says first on every connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Greeting {
    process: u64,
    /// Equal in two processes exactly when they run the same dataflow over the same ids
    /// with the same worker count.
    agreement: u64,
}

impl Greeting {
    fn write(self, stream: &mut TcpStream) -> std::io::Result<()> {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.process.to_le_bytes());
        bytes[8..].copy_from_slice(&self.agreement.to_le_bytes());
        stream.write_all(&bytes)
    }

    fn read(stream: &mut TcpStream) -> std::io::Result<Greeting> {
        let mut bytes = [0u8; 16];
        stream.read_exact(&mut bytes)?;
        let word = |range: std::ops::Range<usize>| u64::from_le_bytes(bytes[range].try_into().unwrap_or_default());
        Ok(Greeting { process: word(0..8), agreement: word(8..16) })
    }
}

/// Connects this process to every peer (dialling the ones before it, accepting the ones
/// after it, as timely's cluster model does), exchanges greetings, and returns timely's
/// allocators for `workers` threads here, and the guard of its network threads.
fn connect(
    cluster: &Cluster,
    workers: usize,
    agreement: u64,
) -> Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>), String> {
    let me = cluster.process;
    let deadline = Instant::now() + cluster.timeout;
    let greeting = Greeting { process: me as u64, agreement };
    // Listen first, so that peers after this one can dial while it dials the ones before.
    let listener = match cluster.hosts.len() > me + 1 {
        true => Some(listen(&cluster.hosts[me])?),
        false => None,
    };
    let mut sockets: Vec<Option<TcpStream>> = (0..cluster.hosts.len()).map(|_| None).collect();
    for (peer, address) in cluster.hosts.iter().enumerate().take(me) {
        let mut stream = dial(address, deadline).map_err(|e| format!("process {peer} at {address}: {e}"))?;
        greeting.write(&mut stream).map_err(|e| format!("process {peer} at {address}: {e}"))?;
        let answer = Greeting::read(&mut stream).map_err(|e| format!("process {peer} at {address}: {e}"))?;
        agree(greeting, answer, peer)?;
        sockets[peer] = Some(stream);
    }
    if let Some(listener) = listener {
        while sockets[me + 1..].iter().any(Option::is_none) {
            let mut stream = accept(&listener, deadline).map_err(|e| {
                let missing: Vec<String> =
                    (me + 1..sockets.len()).filter(|&p| sockets[p].is_none()).map(|p| p.to_string()).collect();
                format!("waiting for process {} to connect to {}: {e}", missing.join(", "), cluster.hosts[me])
            })?;
            let heard = Greeting::read(&mut stream).map_err(|e| format!("a peer connecting: {e}"))?;
            let peer = usize::try_from(heard.process).unwrap_or(usize::MAX);
            if peer <= me || peer >= sockets.len() || sockets[peer].is_some() {
                return Err(format!(
                    "a peer connected as process {peer}, which is not expected to connect to process {me}"
                ));
            }
            greeting.write(&mut stream).map_err(|e| format!("process {peer}: {e}"))?;
            agree(greeting, heard, peer)?;
            sockets[peer] = Some(stream);
        }
    }
    for stream in sockets.iter().flatten() {
        stream.set_read_timeout(None).and_then(|()| stream.set_nodelay(true)).map_err(|e| e.to_string())?;
    }
    quiet_network_panics();
    let hooks = Hooks::default();
    let local = ProcessBuilder::new_typed_vector(workers, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(local, sockets, me, workers, hooks).map_err(|e| e.to_string())?;
    Ok((builders.into_iter().map(AllocatorBuilder::Tcp).collect(), Box::new(guard)))
}

fn agree(mine: Greeting, theirs: Greeting, peer: usize) -> Result<(), String> {
    if mine.agreement == theirs.agreement {
        return Ok(());
    }
    Err(format!(
        "process {peer} runs a different program, input or flags (digest {:016x}, this process {:016x})",
        theirs.agreement, mine.agreement
    ))
}

fn listen(address: &str) -> Result<TcpListener, String> {
    let listener = TcpListener::bind(address).map_err(|e| format!("listening on {address}: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| format!("listening on {address}: {e}"))?;
    Ok(listener)
}

/// How often to try again while a peer is not up yet.
const RETRY: Duration = Duration::from_millis(50);

/// Dials `address` until it answers or `deadline` passes (peers start in any order).
fn dial(address: &str, deadline: Instant) -> std::io::Result<TcpStream> {
    loop {
        let addresses: Vec<_> = address.to_socket_addrs()?.collect();
        let mut last = std::io::Error::new(ErrorKind::NotFound, "the address names no host");
        for socket in &addresses {
            let wait = deadline.saturating_duration_since(Instant::now()).max(RETRY);
            match TcpStream::connect_timeout(socket, wait) {
                Ok(stream) => {
                    stream.set_read_timeout(Some(wait))?;
                    return Ok(stream);
                }
                Err(e) => last = e,
            }
        }
        if Instant::now() >= deadline {
            return Err(last);
        }
        std::thread::sleep(RETRY);
    }
}

/// Accepts one connection, or says the deadline passed.
fn accept(listener: &TcpListener, deadline: Instant) -> std::io::Result<TcpStream> {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false)?;
                stream.set_read_timeout(Some(deadline.saturating_duration_since(Instant::now()).max(RETRY)))?;
                return Ok(stream);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(std::io::Error::new(ErrorKind::TimedOut, "timed out"));
                }
                std::thread::sleep(RETRY);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The first panic message of a timely thread since the last [`take_network_failure`].
static NETWORK_FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// What to do the moment a peer is lost ([`on_lost_peer`]).
static LOST_PEER: Mutex<Option<fn(&str)>> = Mutex::new(None);

/// Has `handler` called, on the network thread that noticed, with one line saying why,
/// the moment a connection to a peer fails. A process that cannot go on without the peer
/// should end there: timely's workers stop by panicking on the broken channel, and a
/// second panic while they unwind aborts the process.
pub fn on_lost_peer(handler: fn(&str)) {
    if let Ok(mut slot) = LOST_PEER.lock() {
        *slot = Some(handler);
    }
}

/// A lost peer makes timely's network threads panic, and the workers after them: that
/// is how timely stops a computation. Their messages are kept for [`crate::Error`] (and
/// handed to [`on_lost_peer`]'s handler) rather than printed with a backtrace; panics of
/// other threads print as before.
fn quiet_network_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let name = std::thread::current().name().map(str::to_string).unwrap_or_default();
            if !name.starts_with("timely:") {
                return previous(info);
            }
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a timely thread stopped".into());
            let network = name.starts_with("timely:send") || name.starts_with("timely:recv");
            let reason = match network {
                true => crate::lost_peer(&message),
                false => message,
            };
            if let Ok(mut first) = NETWORK_FAILURE.lock() {
                first.get_or_insert(reason.clone());
            }
            let handler = LOST_PEER.lock().ok().and_then(|slot| *slot);
            if let (true, Some(handler)) = (network, handler) {
                handler(&reason);
            }
        }));
    });
}

/// Why the network stopped, if a timely thread said so.
pub(crate) fn take_network_failure() -> Option<String> {
    NETWORK_FAILURE.lock().ok().and_then(|mut first| first.take())
}
