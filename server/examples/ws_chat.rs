//! A WebSocket chat room: every text message from one connection goes to all the others, on
//! whichever worker they are, with no allocation per message.
//!
//! The room keeps the last 64 messages (up to 1 KiB each) in a ring under one lock. A message
//! is copied in, and every other member is woken through its worker's mailbox
//! (`Mailbox::wake` with the connection's token); a woken connection copies out what it has
//! not seen, as its output room allows, and wakes itself again for the rest once that is sent.
//! A member that falls more than 64 messages behind (it does not read) skips to the oldest
//! still kept: slow readers lose messages, they never hold the others back or grow the server's
//! memory. Limits, all fixed at start: 1024 members (further ones are closed with 1008),
//! 1 KiB per message (longer ones close the connection with 1009), text only (binary is
//! ignored).
//!
//! ```sh
//! cargo run --release -p bufslab-server --example ws_chat   # ws://127.0.0.1:8080/chat
//! python3 -m websockets ws://127.0.0.1:8080/chat             # in two terminals
//! ```

use std::sync::{Arc, Mutex, MutexGuard};

use bufslab_http::Request;
use bufslab_server::ws::{
    CloseCode, Limits, Message, MessageKind, WebSocket, WsConfig, WsHandler, WsSender,
};
use bufslab_server::{
    Config, Deferred, Exchange, Mailbox, Server, Service, UpgradeEvent, Upgraded, WorkerInfo,
};

/// Messages the room keeps.
const KEPT: usize = 64;
/// The longest message.
const MAX_MESSAGE: usize = 1024;
/// The most members at once.
const MAX_MEMBERS: usize = 1024;

struct Entry {
    from: u64,
    len: usize,
    bytes: [u8; MAX_MESSAGE],
}

struct Member {
    id: u64,
    mailbox: Mailbox<State>,
    token: Deferred,
    /// Woken and not yet run: no second wake-up is queued for it.
    woken: bool,
}

struct RoomInner {
    ring: Vec<Entry>,
    /// The sequence number of the next message; message `n` is at `ring[n % KEPT]`.
    next: u64,
    members: Vec<Member>,
    next_id: u64,
}

/// The room, shared by every worker's service.
pub struct Room(Mutex<RoomInner>);

impl Room {
    /// An empty room, every slot allocated now.
    pub fn new() -> Room {
        Room(Mutex::new(RoomInner {
            ring: (0..KEPT)
                .map(|_| Entry {
                    from: 0,
                    len: 0,
                    bytes: [0; MAX_MESSAGE],
                })
                .collect(),
            next: 0,
            members: Vec::with_capacity(MAX_MEMBERS),
            next_id: 1,
        }))
    }

    fn lock(&self) -> MutexGuard<'_, RoomInner> {
        // A panic under the lock leaves the room as consistent as any message is: go on.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for Room {
    fn default() -> Self {
        Room::new()
    }
}

/// One member's connection: its WebSocket, its id and how far it has read.
pub struct Conn {
    ws: WebSocket,
    id: u64,
    seen: u64,
}

type State = Option<Conn>;

/// The service of one worker.
pub struct Chat {
    room: Arc<Room>,
    mailbox: Mailbox<State>,
}

impl Chat {
    /// The service of the worker `info` describes, in `room`.
    pub fn new(room: Arc<Room>, info: &WorkerInfo) -> Chat {
        Chat {
            room,
            mailbox: info.mailbox().expect("the state is Option<Conn>"),
        }
    }
}

/// A member's view of the room during one event.
struct Handler<'a> {
    room: &'a Room,
    mailbox: &'a Mailbox<State>,
    id: &'a mut u64,
    seen: &'a mut u64,
}

impl WsHandler for Handler<'_> {
    fn open(&mut self, ws: &mut WsSender<'_, '_>) {
        let mut room = self.room.lock();
        if room.members.len() == MAX_MEMBERS {
            drop(room);
            let _ = ws.close(CloseCode::POLICY_VIOLATION, "the room is full");
            return;
        }
        *self.id = room.next_id;
        room.next_id += 1;
        *self.seen = room.next;
        let member = Member {
            id: *self.id,
            mailbox: self.mailbox.clone(),
            token: ws.token(),
            woken: false,
        };
        room.members.push(member);
    }

    fn message(&mut self, msg: Message<'_>, _: &mut WsSender<'_, '_>) {
        // Every message is whole: the gathering buffer holds the largest allowed.
        if msg.kind != MessageKind::Text || !(msg.first && msg.last) {
            return;
        }
        let mut room = self.room.lock();
        let at = (room.next % KEPT as u64) as usize;
        let entry = &mut room.ring[at];
        entry.from = *self.id;
        entry.len = msg.data.len().min(MAX_MESSAGE);
        entry.bytes[..entry.len].copy_from_slice(&msg.data[..entry.len]);
        room.next += 1;
        let from = *self.id;
        for m in room.members.iter_mut() {
            if m.id != from && !m.woken {
                m.woken = m.mailbox.wake(m.token).is_ok();
            }
        }
    }

    fn wake(&mut self, ws: &mut WsSender<'_, '_>) {
        let mut room = self.room.lock();
        let room = &mut *room;
        let Some(me) = room.members.iter_mut().find(|m| m.id == *self.id) else {
            return;
        };
        me.woken = false;
        // Fell behind the ring: what was overwritten is lost to this member.
        *self.seen = (*self.seen).max(room.next.saturating_sub(KEPT as u64));
        while *self.seen < room.next {
            let e = &room.ring[(*self.seen % KEPT as u64) as usize];
            if e.from != *self.id {
                if ws.write_room() < e.len {
                    // The rest once this is sent.
                    me.woken = me.mailbox.wake(me.token).is_ok();
                    return;
                }
                if ws.send(MessageKind::Text, &e.bytes[..e.len]).is_err() {
                    return;
                }
            }
            *self.seen += 1;
        }
    }
}

impl Service for Chat {
    type State = State;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, st: &mut State) {
        if req.path() != b"/chat" {
            let _ = ex.respond(404).body(b"");
            return;
        }
        let max = MAX_MESSAGE as u64;
        let cfg = WsConfig::default()
            .with_limits(Limits::new(max, max))
            .with_buffer(MAX_MESSAGE);
        *st = WebSocket::accept(req, ex, cfg)
            .ok()
            .map(|ws| Conn { ws, id: 0, seen: 0 });
    }

    fn upgraded(&mut self, ev: UpgradeEvent<'_>, up: &mut Upgraded<'_>, st: &mut State) {
        let Some(c) = st else {
            up.close();
            return;
        };
        let mut h = Handler {
            room: &self.room,
            mailbox: &self.mailbox,
            id: &mut c.id,
            seen: &mut c.seen,
        };
        c.ws.on_event(ev, up, &mut h);
    }

    fn upgrade_ended(&mut self, st: &mut State) {
        let Some(c) = st else { return };
        let mut room = self.room.lock();
        if let Some(at) = room.members.iter().position(|m| m.id == c.id) {
            room.members.swap_remove(at);
        }
    }
}

fn main() -> Result<(), bufslab_server::ServerError> {
    let mut config = Config::default();
    if let Some(port) = std::env::args().nth(1).and_then(|p| p.parse().ok()) {
        config.addr.set_port(port);
    }
    let room = Arc::new(Room::new());
    let server = Server::start(config, move |info: WorkerInfo| {
        Chat::new(room.clone(), &info)
    })?;
    println!("ws://{}/chat", server.local_addr());
    server.join().map(|_| ())
}

#[cfg(test)]
#[path = "../tests/support/client.rs"]
mod client;

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    use super::*;
    use crate::client;

    fn join(addr: std::net::SocketAddr) -> TcpStream {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(
            b"GET /chat HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .unwrap();
        let mut head = [0u8; 129];
        s.read_exact(&mut head).unwrap();
        assert!(head.starts_with(b"HTTP/1.1 101 "));
        s
    }

    fn say(s: &mut TcpStream, text: &[u8]) {
        let key = [7, 7, 7, 7];
        let mut f = vec![0x81, 0x80 | text.len() as u8];
        f.extend_from_slice(&key);
        f.extend(text.iter().map(|b| b ^ 7));
        s.write_all(&f).unwrap();
    }

    fn hear(s: &mut TcpStream) -> Vec<u8> {
        let mut h = [0u8; 2];
        s.read_exact(&mut h).unwrap();
        assert_eq!(h[0], 0x81);
        let mut text = vec![0u8; usize::from(h[1])];
        s.read_exact(&mut text).unwrap();
        text
    }

    #[test]
    fn a_message_reaches_every_other_member() {
        for io in [bufslab_server::IoMode::Epoll, bufslab_server::IoMode::Uring] {
            let mut config = client::config(io);
            config.workers = 2;
            let room = Arc::new(Room::new());
            let make = move |info: WorkerInfo| Chat::new(room.clone(), &info);
            let Some(server) = client::start_with(config, make) else {
                continue;
            };
            // A member is in the room before its client reads the 101.
            let mut members: Vec<TcpStream> = (0..4).map(|_| join(server.local_addr())).collect();
            say(&mut members[0], b"hello");
            for m in &mut members[1..] {
                assert_eq!(hear(m), b"hello");
            }
            say(&mut members[2], b"hi 0");
            for (i, m) in members.iter_mut().enumerate() {
                if i != 2 {
                    // Member 0 hears member 2, not its own message.
                    assert_eq!(hear(m), b"hi 0");
                }
            }
            drop(members);
            server.stop().unwrap();
        }
    }
}
