//! Operations compute participants hand to the communicator thread: point-to-point sends
//! and receives (split into several MPI calls beyond `int` counts), all-to-all, and
//! listeners for messages nobody posted a receive for.

use super::{pending, Completer, Engine, Mpi, Pending};
use crate::error::{MpiError, Result};
use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;

/// The tag herd-mpi's pairwise all-to-all uses for counts beyond `int` (user tags should
/// stay below [`RESERVED_TAGS`]).
const ALLTOALL_TAG: i32 = 32_700;

/// Tags from this value up to 32 767 (the least `MPI_TAG_UB` the standard allows) are
/// herd-mpi's own.
pub const RESERVED_TAGS: i32 = 32_700;

/// A raw pointer that may cross to the communicator thread: it points into a buffer the
/// same command owns.
struct Buf<T>(*mut T);
// SAFETY: the pointer is only dereferenced by MPI on the communicator thread while the Vec
// it points into is kept alive by the same operation's `finish` closure.
unsafe impl<T> Send for Buf<T> {}

impl Mpi {
    /// Sends `buf` to rank `dest` with `tag` and returns at once; the pending result gives
    /// the buffer back once MPI no longer needs it. Counts above the split size go as
    /// several messages, which [`Mpi::irecv`] with the same count reassembles.
    pub fn isend<T>(&self, dest: usize, tag: i32, buf: Vec<T>) -> Result<Pending<Vec<T>>>
    where
        T: Equivalence + Send + 'static,
    {
        self.check_rank("destination", dest)?;
        check_tag(tag)?;
        let (p, c) = pending(self.rank());
        let chunk = self.max_count();
        self.submit(move |eng| {
            let reqs = post_chunks(eng, Dir::Send, dest, tag, buf.as_ptr() as *mut T, buf.len(), chunk);
            eng.track(reqs, Box::new(move || c.complete(Ok(buf))));
        });
        Ok(p)
    }

    /// Receives `count` elements from rank `src` with `tag` into a new buffer.
    pub fn irecv<T>(&self, src: usize, tag: i32, count: usize) -> Result<Pending<Vec<T>>>
    where
        T: Equivalence + Default + Clone + Send + 'static,
    {
        // the buffer is made on the communicator thread, which first touches its pages
        self.recv_with(src, tag, move || vec![T::default(); count])
    }

    /// Receives `buf.len()` elements from rank `src` with `tag` into `buf`, which the
    /// pending result gives back: repeated receives reuse memory already faulted in.
    pub fn irecv_into<T>(&self, src: usize, tag: i32, buf: Vec<T>) -> Result<Pending<Vec<T>>>
    where
        T: Equivalence + Send + 'static,
    {
        self.recv_with(src, tag, move || buf)
    }

    /// Posts a receive from `src` with `tag` into the buffer `make` returns (called on the
    /// communicator thread), as many messages as [`Mpi::isend`] splits its length into.
    fn recv_with<T>(
        &self,
        src: usize,
        tag: i32,
        make: impl FnOnce() -> Vec<T> + Send + 'static,
    ) -> Result<Pending<Vec<T>>>
    where
        T: Equivalence + Send + 'static,
    {
        self.check_rank("source", src)?;
        check_tag(tag)?;
        let (p, c) = pending(self.rank());
        let chunk = self.max_count();
        self.submit(move |eng| {
            let mut buf = make();
            let reqs = post_chunks(eng, Dir::Recv, src, tag, buf.as_mut_ptr(), buf.len(), chunk);
            eng.track(reqs, Box::new(move || c.complete(Ok(buf))));
        });
        Ok(p)
    }

    /// All-to-all: block `j` of `send` (its `send.len() / size` elements from
    /// `j * send.len() / size`) goes to rank `j`, and block `i` of the result comes from rank
    /// `i`. `MPI_Ialltoall` when a block fits one call, pairwise split messages otherwise.
    /// The pending result gives back `(send, received)`.
    pub fn ialltoall<T>(&self, send: Vec<T>) -> Result<Pending<(Vec<T>, Vec<T>)>>
    where
        T: Equivalence + Default + Clone + Send + 'static,
    {
        let recv = vec![T::default(); send.len()];
        self.ialltoall_into(send, recv)
    }

    /// [`Mpi::ialltoall`] into a receive buffer the caller passes in (of `send.len()`
    /// elements) and gets back, so that repeated exchanges reuse memory already faulted in.
    pub fn ialltoall_into<T>(&self, send: Vec<T>, mut recv: Vec<T>) -> Result<Pending<(Vec<T>, Vec<T>)>>
    where
        T: Equivalence + Clone + Send + 'static,
    {
        let size = self.size();
        if !send.len().is_multiple_of(size) || recv.len() != send.len() {
            return Err(MpiError::Invalid(format!(
                "ialltoall: send {} and receive {} elements must be equal and split into {size} equal blocks",
                send.len(),
                recv.len()
            )));
        }
        let count = send.len() / size;
        let (p, c) = pending(self.rank());
        let chunk = self.max_count();
        let rank = self.rank();
        self.submit(move |eng| {
            let dt = T::equivalent_datatype().as_raw();
            let mut reqs = Vec::new();
            if count <= chunk {
                // SAFETY: a request handle MPI fills in.
                let mut req: ffi::MPI_Request = unsafe { std::mem::zeroed() };
                // SAFETY: both buffers hold size * count elements and are owned by the
                // finish closure below until the request completes.
                let rc = unsafe {
                    ffi::MPI_Ialltoall(
                        send.as_ptr().cast(),
                        count as i32,
                        dt,
                        recv.as_mut_ptr().cast(),
                        count as i32,
                        dt,
                        eng.comm(),
                        &mut req,
                    )
                };
                if rc != ffi::MPI_SUCCESS as i32 {
                    c.complete(Err(MpiError::Call { call: "MPI_Ialltoall", rank, code: rc }));
                    return;
                }
                reqs.push(req);
            } else {
                for j in 0..size {
                    let at = j * count;
                    if j == rank {
                        recv[at..at + count].clone_from_slice(&send[at..at + count]);
                        continue;
                    }
                    let rp = Buf(recv[at..].as_mut_ptr());
                    let sp = Buf(send[at..].as_ptr() as *mut T);
                    reqs.extend(post_chunks(eng, Dir::Recv, j, ALLTOALL_TAG, rp.0, count, chunk));
                    reqs.extend(post_chunks(eng, Dir::Send, j, ALLTOALL_TAG, sp.0, count, chunk));
                }
            }
            eng.track(reqs, Box::new(move || c.complete(Ok((send, recv)))));
        });
        Ok(p)
    }

    /// Sends bytes to a listener of `tag` on rank `dest` ([`Mpi::listen`]); returns at once.
    /// At most `i32::MAX` bytes (one message).
    pub fn send_bytes(&self, dest: usize, tag: i32, bytes: Vec<u8>) -> Result<Pending<Vec<u8>>> {
        if bytes.len() > i32::MAX as usize {
            return Err(MpiError::Invalid(format!(
                "send_bytes: {} bytes do not fit one message (at most {})",
                bytes.len(),
                i32::MAX
            )));
        }
        self.check_rank("destination", dest)?;
        let (p, c) = pending(self.rank());
        self.submit(move |eng| {
            let reqs = post_chunks(
                eng,
                Dir::Send,
                dest,
                tag,
                bytes.as_ptr() as *mut u8,
                bytes.len(),
                i32::MAX as usize,
            );
            eng.track(reqs, Box::new(move || c.complete(Ok(bytes))));
        });
        Ok(p)
    }

    /// Calls `handler(source, bytes)` on the communicator thread for every message that
    /// arrives on `tag` from any rank, until [`Mpi::unlisten`]. The handler must be quick
    /// (hand the bytes to a compute participant): it runs between progress rounds.
    pub fn listen(&self, tag: i32, handler: impl FnMut(usize, Vec<u8>) + Send + 'static) {
        let h: super::engine::Handler = Box::new(handler);
        self.run_engine(move |eng| eng.listen(tag, h));
    }

    /// Stops listening on `tag`.
    pub fn unlisten(&self, tag: i32) {
        self.run_engine(move |eng| eng.unlisten(tag));
    }

    /// Runs `f` with the engine and waits for it.
    fn run_engine(&self, f: impl FnOnce(&mut Engine) + Send + 'static) {
        let (p, c): (Pending<()>, Completer<()>) = pending(self.rank());
        self.submit(move |eng| {
            f(eng);
            c.complete(Ok(()));
        });
        p.wait().expect("the communicator thread is running while its handle exists");
    }
}

pub(crate) fn check_tag(tag: i32) -> Result<()> {
    if !(0..RESERVED_TAGS).contains(&tag) {
        return Err(MpiError::Invalid(format!(
            "tag {tag} is outside 0..{RESERVED_TAGS} (higher tags are herd-mpi's)"
        )));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Dir {
    Send,
    Recv,
}

/// Posts `len` elements at `ptr` as ceil(len / chunk) messages (one for `len == 0`).
fn post_chunks<T: Equivalence>(
    eng: &mut Engine,
    dir: Dir,
    peer: usize,
    tag: i32,
    ptr: *mut T,
    len: usize,
    chunk: usize,
) -> Vec<ffi::MPI_Request> {
    let dt = T::equivalent_datatype().as_raw();
    let mut reqs = Vec::with_capacity(len.div_ceil(chunk).max(1));
    let mut off = 0;
    loop {
        let n = (len - off).min(chunk);
        // SAFETY: a request handle MPI fills in.
        let mut req: ffi::MPI_Request = unsafe { std::mem::zeroed() };
        // SAFETY: `ptr + off .. ptr + off + n` lies in the caller's buffer of `len` elements,
        // which the operation's finish closure keeps alive until the request completes.
        let rc = unsafe {
            let p = ptr.add(off).cast();
            match dir {
                Dir::Send => ffi::MPI_Isend(p, n as i32, dt, peer as i32, tag, eng.comm(), &mut req),
                Dir::Recv => ffi::MPI_Irecv(p, n as i32, dt, peer as i32, tag, eng.comm(), &mut req),
            }
        };
        assert_eq!(rc, ffi::MPI_SUCCESS as i32, "MPI_Isend/MPI_Irecv failed on rank {}", eng.rank);
        reqs.push(req);
        off += n;
        if off >= len {
            break;
        }
    }
    reqs
}
