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

use std::hash::{Hash, Hasher};
use std::io::{BufWriter, ErrorKind, Read, Write};
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
    /// Whether each process keeps only the derived rows its workers hold
    /// ([`Connection::partition_results`]) rather than every row.
    pub(crate) partitioned: bool,
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
        Connection::open_with_texts(cluster, workers, Vec::new()).map(|(connection, _)| connection)
    }

    /// [`Connection::open`], then the texts this process read given ids that mean one
    /// text in every process ([`Dictionary`]): each text goes to the process its hash
    /// picks (its owner), which sorts the distinct texts it was sent and so gives each
    /// the next index of its own part; the owners then send their parts to every
    /// process. No counter is shared: an owner decides its indices from what it was
    /// sent alone, and a text's id is its index plus the sizes of the parts before its
    /// owner's.
    pub fn open_with_texts(
        cluster: &Cluster,
        workers: usize,
        texts: Vec<String>,
    ) -> Result<(Connection, Dictionary), crate::Error> {
        let workers = workers.max(1);
        let agreement = cluster.digest ^ (workers as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let (allocators, network, dictionary) =
            connect(cluster, workers, agreement, texts).map_err(crate::Error::Cluster)?;
        let connection = Connection {
            allocators,
            network,
            process: cluster.process,
            processes: cluster.hosts.len(),
            partitioned: false,
        };
        Ok((connection, dictionary))
    }

    /// Has the dataflow leave each change to a derived row (and, with placement at the
    /// owner, to an input row) with the process whose worker holds the row, instead of
    /// copying every change to every process: each process then holds and reports its
    /// part of the result, and the parts of the processes are disjoint and together the
    /// whole. What must be known whole (a relation's size) goes through
    /// [`crate::Flow::sum_over_processes`].
    pub fn partition_results(mut self) -> Connection {
        self.partitioned = true;
        self
    }
}

/// The texts every process of a cluster read, in id order: the parts of the owners,
/// process 0's first, each sorted and without repeats. Every process receives the same
/// dictionary, so interning it in this order gives every text the same id everywhere.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dictionary {
    /// The texts of each owner, by process index.
    pub parts: Vec<Vec<String>>,
}

/// The process that assigns `text` its index: the same in every process.
pub fn text_owner(text: &str, processes: usize) -> usize {
    let mut hasher = rustc_hash::FxHasher::default();
    text.as_bytes().hash(&mut hasher);
    (hasher.finish() % processes.max(1) as u64) as usize
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
type Connected = (Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>, Dictionary);

fn connect(cluster: &Cluster, workers: usize, agreement: u64, texts: Vec<String>) -> Result<Connected, String> {
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
    let dictionary = exchange_texts(&sockets, me, texts)?;
    quiet_network_panics();
    let hooks = Hooks::default();
    let local = ProcessBuilder::new_typed_vector(workers, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(local, sockets, me, workers, hooks).map_err(|e| e.to_string())?;
    Ok((builders.into_iter().map(AllocatorBuilder::Tcp).collect(), Box::new(guard), dictionary))
}

/// The owner-assigned dictionary of `texts` (what this process read) and every peer's
/// texts, exchanged over the checked connections before timely takes them: first each
/// text to its owner ([`text_owner`]), then each owner's sorted, distinct part to every
/// process. Each message is written by a thread of its own, so that two processes
/// sending each other much at once cannot both block.
fn exchange_texts(sockets: &[Option<TcpStream>], me: usize, texts: Vec<String>) -> Result<Dictionary, String> {
    let processes = sockets.len();
    let mut owned: Vec<Vec<String>> = vec![Vec::new(); processes];
    for text in texts {
        owned[text_owner(&text, processes)].push(text);
    }
    for part in &mut owned {
        part.sort_unstable();
        part.dedup();
    }
    let mut mine = std::mem::take(&mut owned[me]);
    for (_, texts) in all_to_all(sockets, me, |peer| std::mem::take(&mut owned[peer]))? {
        mine.extend(texts);
    }
    mine.sort_unstable();
    mine.dedup();
    let mut parts: Vec<Vec<String>> = vec![Vec::new(); processes];
    for (peer, part) in all_to_all(sockets, me, |_| mine.clone())? {
        parts[peer] = part;
    }
    parts[me] = mine;
    Ok(Dictionary { parts })
}

/// Sends each peer the texts `message` gives for it and returns what every peer sent,
/// with the peer's index.
fn all_to_all(
    sockets: &[Option<TcpStream>],
    me: usize,
    mut message: impl FnMut(usize) -> Vec<String>,
) -> Result<Vec<(usize, Vec<String>)>, String> {
    let mut writers = Vec::new();
    for (peer, socket) in sockets.iter().enumerate() {
        let Some(socket) = socket.as_ref().filter(|_| peer != me) else { continue };
        let stream = socket.try_clone().map_err(|e| format!("process {peer}: {e}"))?;
        let texts = message(peer);
        writers.push(std::thread::spawn(move || write_texts(stream, &texts)));
    }
    let mut received = Vec::new();
    for (peer, socket) in sockets.iter().enumerate() {
        let Some(mut socket) = socket.as_ref().filter(|_| peer != me) else { continue };
        let texts = read_texts(&mut socket).map_err(|e| format!("process {peer}, exchanging texts: {e}"))?;
        received.push((peer, texts));
    }
    for writer in writers {
        match writer.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(format!("exchanging texts: {e}")),
            Err(_) => return Err("exchanging texts: a sending thread stopped".into()),
        }
    }
    Ok(received)
}

/// One message of texts: their count, then each text's length and bytes.
fn write_texts(stream: TcpStream, texts: &[String]) -> std::io::Result<()> {
    let mut out = BufWriter::new(stream);
    out.write_all(&(texts.len() as u64).to_le_bytes())?;
    for text in texts {
        out.write_all(&(text.len() as u64).to_le_bytes())?;
        out.write_all(text.as_bytes())?;
    }
    out.flush()
}

/// The texts of one message of [`write_texts`], read exactly (no byte of what timely
/// sends next is consumed).
fn read_texts(stream: &mut &TcpStream) -> std::io::Result<Vec<String>> {
    let mut word = [0u8; 8];
    stream.read_exact(&mut word)?;
    let count = u64::from_le_bytes(word);
    let mut texts = Vec::new();
    for _ in 0..count {
        stream.read_exact(&mut word)?;
        let len = usize::try_from(u64::from_le_bytes(word)).unwrap_or(usize::MAX);
        let mut bytes = Vec::new();
        (&mut *stream).take(len as u64).read_to_end(&mut bytes)?;
        if bytes.len() != len {
            return Err(std::io::Error::new(ErrorKind::UnexpectedEof, "a text ended early"));
        }
        texts.push(String::from_utf8(bytes).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))?);
    }
    Ok(texts)
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
