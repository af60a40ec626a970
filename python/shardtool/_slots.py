"""Batch slots a DataLoader worker shares with the main process.

Through DataLoader's own transport a packed batch is pickled into the
worker's pipe and copied out of it again in the main process (a fresh
buffer, its pages faulted in, each batch): at batches of 1024 records that
costs more than reading and decoding them.  Instead each worker keeps a
ring of slots in one memfd that both processes map once:

  - the worker packs a batch straight into a free slot and sends only where
    it lies (ring, slot, size) with the batch's entries;
  - the main process builds the batch's tensors as views of its own mapping
    of that slot, all of them through one ctypes array per batch;
  - when the last of those views is let go (the ctypes array is freed), the
    main process writes the slot's number into the ring's release pipe, and
    the worker takes it back the next time it looks for a free slot.

The memfd and the write end of the release pipe cross to the main process
as file descriptors (multiprocessing's DupFd, as torch's own shared tensors
do), with each batch until the main process has said it holds them (one
acknowledgement through the release pipe); after that a batch carries a
short key.  A worker with no free slot (the main process still holds every
batch it sent, or a batch is larger than a slot) sends that batch the
ordinary way: nothing waits on a slot, so nothing can deadlock.

Memory: each worker's ring holds `slots` slots of twice the largest batch
met so far (rounded up to 1 MiB); a batch larger than a slot makes a new
ring, and the old one is unmapped once the main process lets go of the
last batch in it."""

import ctypes
import mmap
import os
import struct
import threading
import weakref

_SLOT_ROUND = 1 << 20
_ACK = 0xFFFFFFFF
_U32 = struct.Struct("<I")


def available():
    """Whether this platform has what the slots need (memfd, pipe2)."""
    return hasattr(os, "memfd_create") and hasattr(os, "pipe2")


class WorkerRing:
    """A worker's ring: `slots` slots of `slot_bytes` each, in one memfd."""

    _serial = 0

    def __init__(self, slots, slot_bytes, replaces=None):
        WorkerRing._serial += 1
        self.replaces = replaces   # the key of the ring this one took over from
        self.key = (os.getpid(), WorkerRing._serial, os.urandom(8).hex())
        self.slots = slots
        self.slot_bytes = slot_bytes
        self.fd = os.memfd_create("shardtool-batches", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, slots * slot_bytes)
        self.map = mmap.mmap(self.fd, slots * slot_bytes)
        self.release_r, self.release_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.free = list(range(slots - 1, -1, -1))
        self.acknowledged = False
        self.slot_type = ctypes.c_char * slot_bytes
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        # The descriptors stay open while a batch of this ring may still be
        # pickled with them: until the ring itself is let go.
        weakref.finalize(self, _close_all, (self.release_r, self.release_w, self.fd))

    def _take_releases(self):
        while True:
            try:
                data = os.read(self.release_r, 4096)
            except BlockingIOError:
                return
            if not data:
                return
            for (n,) in _U32.iter_unpack(data[:len(data) & ~3]):
                if n == _ACK:
                    self.acknowledged = True
                elif n < self.slots:
                    self.free.append(n)

    def claim(self):
        """A free slot's number, or None."""
        if not self.free:
            self._take_releases()
        return self.free.pop() if self.free else None

    def slot(self, index, size):
        """A WorkerSlot for `size` bytes in slot `index`."""
        return WorkerSlot(self, index, size)

    def address(self, index):
        return self.base + index * self.slot_bytes


def _close_all(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


class WorkerSlot:
    """A batch packed in a slot, in the worker: a buffer for _rebuild, and
    pickled as where it lies."""
    __slots__ = ("ring", "index", "size", "view")

    def __init__(self, ring, index, size):
        self.ring = ring
        self.index = index
        self.size = size
        self.view = ring.slot_type.from_buffer(ring.map, index * ring.slot_bytes)

    def __reduce__(self):
        ring = self.ring
        if ring.acknowledged:
            return _main_slot, (ring.key, None, ring.slot_bytes, ring.slots, self.index, self.size)
        from multiprocessing.reduction import DupFd
        return _main_slot, (ring.key, (DupFd(ring.fd), DupFd(ring.release_w), ring.replaces), ring.slot_bytes,
                            ring.slots, self.index, self.size)


class MainRing:
    """A worker's ring as mapped in the main process."""

    def __init__(self, key, memfd, release_w, slot_bytes, slots):
        self.key = key
        self.pid = os.getpid()
        self.slot_bytes = slot_bytes
        self.map = mmap.mmap(memfd, slot_bytes * slots)
        os.close(memfd)
        self.release_w = release_w
        self.slot_type = ctypes.c_char * slot_bytes
        self._closer = weakref.finalize(self, os.close, release_w)

    def release(self, index):
        # A process forked from this one holds copies of its batches: only
        # the process that mapped the ring hands slots back.
        if os.getpid() != self.pid:
            return
        try:
            os.write(self.release_w, _U32.pack(index))
        except OSError:
            pass   # the worker let the ring go, or exited


# The rings the main process has mapped, by key.  A batch's release holds
# its ring too, so dropping an entry here (its worker has exited) unmaps
# the ring only once no batch of it is left.
_rings = {}
_rings_lock = threading.Lock()
_EVICT_EVERY = 256
_made = 0


def _forget_exited():
    for key in [k for k in _rings if not _alive(k[0])]:
        del _rings[key]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _main_slot(key, fds, slot_bytes, slots, index, size):
    """The main process's side of a WorkerSlot: a MainSlot whose view is
    released back to the worker once every array made from it is gone."""
    global _made
    with _rings_lock:
        ring = _rings.get(key)
        if fds is not None:
            memfd, release_w, replaces = fds[0].detach(), fds[1].detach(), fds[2]
            if ring is None:
                _rings.pop(replaces, None)
                _forget_exited()
                ring = _rings[key] = MainRing(key, memfd, release_w, slot_bytes, slots)
                ring.release(_ACK)
            else:
                os.close(memfd)
                os.close(release_w)
        _made += 1
        if _made % _EVICT_EVERY == 0:
            _forget_exited()
    if ring is None:
        raise RuntimeError("shardtool: a batch came from a shared ring this process never mapped")
    return MainSlot(ring, index, size)


class MainSlot:
    """A batch's slot in the main process: `view`, a ctypes array over the
    slot, is what every array of the batch views; freeing it releases the
    slot."""
    __slots__ = ("view", "size", "ring")

    def __init__(self, ring, index, size):
        self.ring = ring
        self.size = size
        self.view = ring.slot_type.from_buffer(ring.map, index * ring.slot_bytes)
        weakref.finalize(self.view, ring.release, index)

    def __reduce__(self):
        # Pickled again (to another process, or a copy): as a copy.
        return bytearray, (bytes(memoryview(self.view)[:self.size]),)


class WorkerSlots:
    """The worker's side: which ring a batch of `size` bytes goes into.
    One per process (for_this_process): a persistent worker keeps its ring
    from one epoch to the next."""

    _mine = None

    @classmethod
    def for_this_process(cls, slots):
        mine = cls._mine
        if mine is None or mine.pid != os.getpid() or mine.slots != slots:
            mine = cls._mine = cls(slots)
        return mine

    def __init__(self, slots):
        self.pid = os.getpid()
        self.slots = slots
        self.ring = None

    def take(self, size):
        """(address, WorkerSlot) for a batch of `size` bytes, or None: send
        it the ordinary way."""
        ring = self.ring
        if ring is None or size > ring.slot_bytes:
            slot_bytes = -(-2 * max(size, 1) // _SLOT_ROUND) * _SLOT_ROUND
            try:
                # The ring before is let go: once its batches are sent, its
                # descriptors close, and the main process unmaps it when it
                # lets go of the last of them.
                ring = self.ring = WorkerRing(self.slots, slot_bytes, ring.key if ring is not None else None)
            except OSError:
                return None
        index = ring.claim()
        if index is None:
            return None
        return ring.address(index), ring.slot(index, size)
