//! Slow and hostile servers: a TCP proxy on 127.0.0.1 in front of a real server (a `git
//! daemon`), passing what the client sends as it comes and the server's answer as its
//! [`Mode`] says; and a blob of 1 GiB made in a fraction of a second.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, sleep};
use std::time::Duration;

/// What the proxy does with the server's answer on a connection (the mode when the connection
/// is accepted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every byte, as it comes.
    Pass,
    /// One byte, then a pause, then the next: a server that answers a byte a second.
    Trickle(Duration),
    /// Every byte up to the start of a pack (`PACK`) and this many after it, then the connection
    /// is closed both ways: a server that drops the connection mid-pack. An answer with no pack
    /// (a ref listing, a push's report) passes whole.
    CutInPack(usize),
}

/// The proxy: listening on `port`, forwarding to `upstream`.
pub struct Proxy {
    pub port: u16,
    mode: Arc<Mutex<Mode>>,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Proxy {
    /// A proxy in [`Mode::Pass`] in front of the server on 127.0.0.1:`upstream`.
    pub fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let mode = Arc::new(Mutex::new(Mode::Pass));
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (m, a, s) = (mode.clone(), accepted.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        a.fetch_add(1, Ordering::SeqCst);
                        let mode = *m.lock().unwrap();
                        std::thread::spawn(move || serve(client, upstream, mode));
                    }
                    Err(_) => sleep(Duration::from_millis(5)),
                }
            }
        });
        Proxy {
            port,
            mode,
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    /// The mode of the connections accepted from now on.
    pub fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    /// How many connections it accepted.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One connection: the client's bytes to the server as they come, the server's to the client
/// as `mode` says; when either side ends, both connections are closed.
fn serve(client: TcpStream, upstream: u16, mode: Mode) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let close = {
        let both = Arc::new((client.try_clone().unwrap(), server.try_clone().unwrap()));
        move || {
            let _ = both.0.shutdown(Shutdown::Both);
            let _ = both.1.shutdown(Shutdown::Both);
        }
    };
    let (mut from_client, mut to_server) =
        (client.try_clone().unwrap(), server.try_clone().unwrap());
    let close_up = close.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from_client.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to_server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        close_up();
    });
    let (mut from_server, mut to_client) = (server, client);
    let mut buf = [0u8; 16 * 1024];
    // For CutInPack: the last bytes seen (to find `PACK` across reads), and how many bytes may
    // still pass once it was found.
    let mut tail: Vec<u8> = vec![];
    let mut left: Option<usize> = None;
    loop {
        let n = match from_server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        let sent = match mode {
            Mode::Pass => to_client.write_all(chunk).is_ok(),
            Mode::Trickle(pause) => chunk.iter().all(|b| {
                let ok = to_client.write_all(&[*b]).is_ok();
                sleep(pause);
                ok
            }),
            Mode::CutInPack(after) => {
                let mut pass = chunk.len();
                if left.is_none() {
                    let before = tail.len();
                    tail.extend_from_slice(chunk);
                    if let Some(at) = tail.windows(4).position(|w| w == b"PACK") {
                        // Bytes of this chunk up to the end of `PACK`, and `after` more.
                        let end = (at + 4).saturating_sub(before);
                        pass = (end + after).min(chunk.len());
                        left = Some((end + after).saturating_sub(pass));
                    } else {
                        let keep = tail.len().saturating_sub(3);
                        tail.drain(..keep);
                    }
                } else if let Some(l) = left {
                    pass = l.min(chunk.len());
                    left = Some(l - pass);
                }
                let ok = to_client.write_all(&chunk[..pass]).is_ok();
                if left == Some(0) {
                    break;
                }
                ok
            }
        };
        if !sent {
            break;
        }
    }
    close();
}

/// Store in the bare repository `git_dir` a blob of 1 GiB of zero bytes, as a loose object
/// written directly (a zlib stream of fixed Huffman codes: a zero, then back-references of 258
/// bytes at distance 1, 7 MiB in all), and return its id. `git hash-object` would take tens of
/// seconds of one core to hash and compress it; the id is the one it computes.
pub fn gigabyte_of_zeros(git_dir: &Path) -> String {
    const ID: &str = "4fce05a4e4ed8cefef2d99f32c519b2fd7841b74";
    const SIZE: u64 = 1 << 30;
    let header = format!("blob {SIZE}\0");
    let mut bits = Bits::default();
    // The block: final, fixed Huffman codes.
    bits.put(1, 1);
    bits.put(1, 2);
    // A literal byte (0..=143): the 8-bit code 0x30 + byte, most significant bit first.
    let literal = |bits: &mut Bits, byte: u8| bits.code(0x30 + byte as u32, 8);
    for b in header.bytes() {
        literal(&mut bits, b);
    }
    literal(&mut bits, 0);
    let (runs, rest) = ((SIZE - 1) / 258, (SIZE - 1) % 258);
    for _ in 0..runs {
        // Length 258: code 285 (8 bits, 0xc5); distance 1: code 0 (5 bits).
        bits.code(0xc5, 8);
        bits.code(0, 5);
    }
    for _ in 0..rest {
        literal(&mut bits, 0);
    }
    // End of block: code 256 (7 bits of zero).
    bits.code(0, 7);
    // Adler-32 of the header and the zeros: zeros leave `a` as it is and add it to `b` each.
    const MOD: u64 = 65521;
    let (mut a, mut b) = (1u64, 0u64);
    for byte in header.bytes() {
        a = (a + byte as u64) % MOD;
        b = (b + a) % MOD;
    }
    b = (b + SIZE % MOD * a) % MOD;
    let mut data = vec![0x78, 0x01];
    data.extend(bits.done());
    data.extend(((b << 16 | a) as u32).to_be_bytes());
    let dir = git_dir.join("objects").join(&ID[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&ID[2..]), data).unwrap();
    ID.to_string()
}

/// A deflate bit stream: values least significant bit first, Huffman codes most significant
/// bit first.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u32, width: u32) {
        self.acc |= (value as u64) << self.n;
        self.n += width;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    fn code(&mut self, code: u32, width: u32) {
        let reversed = code.reverse_bits() >> (32 - width);
        self.put(reversed, width);
    }

    fn done(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}
